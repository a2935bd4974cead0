import type { Request, Response, Router } from 'express';
import {
  activateScenario,
  createScenarioBody,
  deactivateScenario,
  importScenario,
  importScenarioBody,
  SCENARIO_OPERATIONS,
  updateScenarioBody,
} from '../../../contracts/api/integrator';
import type { Principal } from '../../../contracts/auth';
import { PlatformError } from '../../../contracts/errors';
import {
  everyStep,
  fieldsByKey,
  isExpression,
  mappedValuesOf,
  remapSteps,
  stepFieldOf,
  withDefaults,
  type MappedValue,
  type ScenarioSettings,
  type ScenarioStep,
} from '../../../contracts/integrator';
import type { FieldDefinition } from '../../../contracts/fields';
import {
  headerText,
  responseHeaderNameProblem,
  responseHeaderValueProblem,
} from '../../../contracts/hook-response-headers';
import { checkMappedValue, MappingError } from '../../../languages/mapping/mapping';
import { streamName } from '../../../contracts/streams';
import { validate } from '../../../contracts/validation';
import { mount } from '../../../infra/http/operations';
import { idParam, optionalId } from '../../../infra/http/params';
import { moduleDecider } from '../../structure/domain/module';
import { recordDecider } from '../../records/domain/record';
import type { DataStructure } from '../../../languages/data-structure';
import { scenarioDecider, type ScenarioCommand, type ScenarioState } from '../domain/scenario';
import { webhookDecider, type WebhookState } from '../../hooks/domain/webhook';
import type { CommandDeps } from '../../deps';
import type { CommandContext, CommandResult } from '../../kit/handler';
import { requestHash } from '../../kit/idempotency';
import {
  authorize,
  commandContext,
  idempotencyKey,
  preconditions,
  sendResult,
} from '../../kit/route-context';
import { createWebhook, identifyCreate, webhookView, type CreateIdentity } from '../../hooks/routes/webhooks';
import { dataStructureDecider } from '../../structure/domain/data-structure';

export function scenarioView(state: ScenarioState): Record<string, unknown> {
  return {
    id: state.scenarioId,
    ownerId: state.ownerId,
    status: state.status === 'active' ? 'active' : 'inactive',
    deactivatedBecause: state.deactivatedBecause,
    ...state.settings,
  };
}

function invalid(path: string, message: string): PlatformError {
  return new PlatformError('validation_failed', `invalid body: ${path}: ${message}`, [{ path, message }]);
}

/** The fields a step names are fields of its module that take a value, each named once. */
function checkStepFields(
  at: string,
  moduleId: number,
  named: Readonly<Record<string, unknown>>,
  fields: readonly FieldDefinition[],
): void {
  const mapped = fieldsByKey(named, fields);
  const problems =
    'problems' in mapped
      ? mapped.problems
      : Object.keys(named).flatMap((name) => {
          const found = stepFieldOf(name, fields);
          const type = 'field' in found ? found.field.type : null;
          if (type === 'file')
            return [
              { path: `fields.${name}`, message: 'a file field is filled by an attachRecordFile step' },
            ];
          if (type === 'button')
            return [{ path: `fields.${name}`, message: 'a button field holds no value' }];
          return [];
        });
  if (problems.length === 0) return;
  const details = problems.map((problem) => ({ path: `${at}.${problem.path}`, message: problem.message }));
  throw new PlatformError(
    'validation_failed',
    `invalid body: ${details.map((detail) => `${detail.path}: ${detail.message}`).join('; ')} (module ${moduleId})`,
    details,
  );
}

/** Literal header values are checked now; computed ones when the run answers (a bad one fails the run). */
function checkResponseHeaders(
  at: string,
  headers: ReadonlyArray<{ name: string; value: MappedValue }>,
): void {
  for (const [index, header] of headers.entries()) {
    const nameProblem = responseHeaderNameProblem(header.name);
    if (nameProblem) throw invalid(`${at}.headers.${index}.name`, nameProblem);
    if (isExpression(header.value)) continue;
    const text = headerText(header.value);
    const valueProblem = text === undefined ? null : responseHeaderValueProblem(text);
    if (valueProblem) throw invalid(`${at}.headers.${index}.value`, `${header.name}: ${valueProblem}`);
  }
}

/** Scenarios: their trigger (a webhook, one scenario each), schedule and steps; activate, deactivate. */
export function addScenarioRoutes(router: Router, deps: CommandDeps): void {
  const scenarioStream = (tenant: string, scenarioId: number) => streamName('scenario', tenant, scenarioId);
  const hookStream = (tenant: string, webhookId: number) => streamName('webhook', tenant, webhookId);

  /** The steps' expressions compile, their modules exist, literal statuses are ones a response may have. */
  async function checkSteps(tenant: string, steps: readonly ScenarioStep[]): Promise<void> {
    for (const { step, path } of everyStep(steps)) {
      const at = `steps.${path}`;
      try {
        for (const value of mappedValuesOf(step)) checkMappedValue(value);
        if (step.kind === 'createRecord') {
          const module = await deps.handler.load(streamName('module', tenant, step.moduleId), moduleDecider);
          if (module.state.status !== 'active') throw invalid(`${at}.moduleId`, `no module ${step.moduleId}`);
          checkStepFields(at, step.moduleId, step.fields ?? {}, module.state.fields);
        }
        if (step.kind === 'updateRecord' && typeof step.recordId === 'number' && step.fields) {
          // A literal record: its module is known now (a record never changes module).
          const record = await deps.handler.load(streamName('record', tenant, step.recordId), recordDecider);
          const module =
            record.state.status === 'active'
              ? await deps.handler.load(streamName('module', tenant, record.state.moduleId), moduleDecider)
              : null;
          if (module?.state.status === 'active')
            checkStepFields(at, record.state.moduleId, step.fields, module.state.fields);
        }
        if (step.kind === 'webhookResponse') {
          if (typeof step.status === 'number' && !(step.status >= 200 && step.status < 500))
            throw invalid(`${at}.status`, 'a Webhook response status is 2xx, 3xx or 4xx');
          checkResponseHeaders(at, step.headers ?? []);
        }
      } catch (error) {
        if (error instanceof MappingError) throw invalid(at, error.message);
        throw error;
      }
    }
  }

  async function bind(tenant: string, webhookId: number, scenarioId: number, context: CommandContext) {
    const hook = await deps.handler.load(hookStream(tenant, webhookId), webhookDecider);
    if (hook.state.status === 'none' || hook.state.status === 'deleted')
      throw invalid('webhookId', `no webhook ${webhookId}`);
    await deps.handler.handle(
      hookStream(tenant, webhookId),
      webhookDecider,
      { kind: 'BindScenario', scenarioId },
      { ...context, commandId: `${context.commandId}:bind` },
    );
  }

  async function unbind(tenant: string, webhookId: number, scenarioId: number, context: CommandContext) {
    await deps.handler.handle(
      hookStream(tenant, webhookId),
      webhookDecider,
      { kind: 'UnbindScenario', scenarioId, now: deps.hooks.now() },
      { ...context, commandId: `${context.commandId}:unbind` },
    );
  }

  /** Creates a scenario whose steps were checked (its hook bound first), owned by the caller. */
  async function create(
    req: Request,
    principal: Principal,
    settings: ScenarioSettings,
    active: boolean,
    identifiedBy: CreateIdentity,
  ): Promise<CommandResult<ScenarioState>> {
    const identity = await identifyCreate(deps, principal, identifiedBy, 'scenario');
    const scenarioId = identity.entityId!;
    const context = commandContext(req, principal, identity.commandId);
    // The hook first: a scenario is only created once its trigger is its own.
    if (settings.webhookId !== null) await bind(principal.tenant, settings.webhookId, scenarioId, context);
    return deps.handler.handle(
      scenarioStream(principal.tenant, scenarioId),
      scenarioDecider,
      { kind: 'CreateScenario', scenarioId, ownerId: Number(principal.userId), active, settings },
      context,
      identity.mayBeRepeat ? { mayBeRepeat: true } : { newStream: true },
    );
  }

  mount(router, SCENARIO_OPERATIONS.create, async (req, res) => {
    const principal = authorize(req, 'scenario', 'create');
    const body = validate(createScenarioBody, req.body, 'body');
    const { active, ...given } = body;
    const settings = withDefaults<ScenarioSettings>(
      {
        name: given.name,
        webhookId: null,
        schedule: { kind: 'instant' },
        sequential: false,
        autoCommit: false,
        steps: [],
      },
      given,
    );
    await checkSteps(principal.tenant, settings.steps);
    const result = await create(req, principal, settings, active ?? true, {
      key: idempotencyKey(req),
      hash: () => requestHash('POST', '/scenario', body),
    });
    const scenarioId = result.state.scenarioId;
    res.setHeader('Location', `${req.baseUrl}/scenario/${scenarioId}`);
    sendResult(res, 201, result, scenarioView(result.state));
  });

  const update = async (req: Request, res: Response) => {
    const principal = authorize(req, 'scenario', 'update');
    const { id: bodyId, ...settings } = validate(updateScenarioBody, req.body, 'body');
    const scenarioId = optionalId(req, 'scenarioId') ?? bodyId;
    if (scenarioId === undefined)
      throw new PlatformError(
        'validation_failed',
        'the scenario id is missing: PUT /scenario/{scenarioId} or a body "id"',
      );
    if (bodyId !== undefined && bodyId !== scenarioId)
      throw new PlatformError(
        'validation_failed',
        `the body id ${bodyId} differs from the path id ${scenarioId}`,
      );
    if (settings.steps) await checkSteps(principal.tenant, settings.steps);
    const stream = scenarioStream(principal.tenant, scenarioId);
    const before = (await deps.handler.load(stream, scenarioDecider)).state;
    if (before.status === 'none' || before.status === 'deleted')
      throw new PlatformError('not_found', `scenario ${scenarioId} not found`);
    const context = commandContext(req, principal, deps.newCommandId());
    const trigger = settings.webhookId;
    const retriggered = trigger !== undefined && trigger !== before.settings.webhookId;
    if (retriggered && trigger !== null) await bind(principal.tenant, trigger, scenarioId, context);
    const result = await deps.handler.handle(
      stream,
      scenarioDecider,
      { kind: 'UpdateScenario', settings },
      context,
      preconditions(req),
    );
    if (retriggered && before.settings.webhookId !== null)
      await unbind(principal.tenant, before.settings.webhookId, scenarioId, context);
    sendResult(res, 200, result, scenarioView(result.state));
  };
  mount(router, SCENARIO_OPERATIONS.update, update);
  mount(router, SCENARIO_OPERATIONS.updateById, update);

  async function change(req: Request, res: Response, command: ScenarioCommand) {
    const principal = authorize(req, 'scenario', 'update');
    const result = await deps.handler.handle(
      scenarioStream(principal.tenant, idParam(req, 'scenarioId')),
      scenarioDecider,
      command,
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, scenarioView(result.state));
  }
  mount(router, activateScenario, (req, res) => change(req, res, { kind: 'ActivateScenario' }));
  mount(router, deactivateScenario, (req, res) =>
    change(req, res, { kind: 'DeactivateScenario', reason: 'deactivated by its owner' }),
  );

  mount(router, SCENARIO_OPERATIONS.delete, async (req, res) => {
    const principal = authorize(req, 'scenario', 'delete');
    const scenarioId = idParam(req, 'scenarioId');
    const context = commandContext(req, principal, deps.newCommandId());
    const result = await deps.handler.handle(
      scenarioStream(principal.tenant, scenarioId),
      scenarioDecider,
      { kind: 'DeleteScenario' },
      context,
      preconditions(req),
    );
    const webhookId = result.state.settings.webhookId;
    if (webhookId !== null) await unbind(principal.tenant, webhookId, scenarioId, context);
    sendResult(res, 200, result, { id: scenarioId, deleted: true });
  });

  /**
   * Makes anew the data structures an exported hook validates by; the new id of the one it names (null: none).
   * A structure named but not in the document is refused: it belongs to the other system.
   */
  async function importStructures(
    req: Request,
    principal: Principal,
    structures: ReadonlyArray<{ id: number; name: string; fields: DataStructure['fields'] }>,
    named: number | null | undefined,
    key: string | undefined,
    hash: string,
  ): Promise<number | null> {
    if (named === null || named === undefined) return null;
    const structure = structures.find((candidate) => candidate.id === named);
    if (!structure)
      throw new PlatformError(
        'validation_failed',
        `the document's hook names data structure ${named}, which it does not hold`,
        [{ path: 'document.webhook.dataStructureId', message: 'not among document.dataStructures' }],
      );
    authorize(req, 'dataStructure', 'create');
    const identity = await identifyCreate(
      deps,
      principal,
      { key: key && `${key}:structure`, hash: () => `${hash}:structure` },
      'dataStructure',
    );
    const dataStructureId = identity.entityId!;
    await deps.handler.handle(
      streamName('dataStructure', principal.tenant, dataStructureId),
      dataStructureDecider,
      { kind: 'Create', id: dataStructureId, attributes: { name: structure.name, fields: structure.fields } },
      commandContext(req, principal, identity.commandId),
      identity.mayBeRepeat ? { mayBeRepeat: true } : { newStream: true },
    );
    return dataStructureId;
  }

  mount(router, importScenario, async (req, res) => {
    const principal = authorize(req, 'scenario', 'create');
    const body = validate(importScenarioBody, req.body, 'body');
    const { document } = body;
    const { id: _exportedId, ...exported } = document.scenario;
    const steps = remapSteps(exported.steps, body.moduleIds ?? {}, body.labelIds ?? {});
    // Checked before the hook is made, so a refused import leaves nothing behind.
    await checkSteps(principal.tenant, steps);
    const key = idempotencyKey(req);
    const hash = requestHash('POST', '/scenario/import', body);
    let hook: CommandResult<WebhookState> | null = null;
    if (document.webhook !== null) {
      authorize(req, 'webhook', 'create');
      const { id: _hookId, kind, ...exportedSettings } = document.webhook;
      const hookSettings = {
        ...exportedSettings,
        dataStructureId: await importStructures(
          req,
          principal,
          document.dataStructures,
          exportedSettings.dataStructureId,
          key,
          hash,
        ),
      };
      hook = await createWebhook(
        deps,
        req,
        principal,
        { kind, settings: hookSettings },
        {
          key: key && `${key}:webhook`,
          hash: () => `${hash}:webhook`,
        },
      );
    }
    const result = await create(
      req,
      principal,
      { ...exported, steps, webhookId: hook ? hook.state.webhookId : null },
      body.active ?? false,
      { key: key && `${key}:scenario`, hash: () => `${hash}:scenario` },
    );
    res.setHeader('Location', `${req.baseUrl}/scenario/${result.state.scenarioId}`);
    sendResult(res, 201, result, {
      scenario: scenarioView(result.state),
      webhook: hook && webhookView(hook.state, deps.hooks, deps.hooks.now()),
    });
  });
}
