import type { z } from 'zod';
import type {
  createScenarioBody,
  importScenarioBody,
  updateScenarioBody,
} from '../../contracts/api/integrator';
import { PlatformError } from '../../contracts/errors';
import type { FieldDefinition } from '../../contracts/fields';
import {
  headerText,
  responseHeaderNameProblem,
  responseHeaderValueProblem,
} from '../../contracts/hook-response-headers';
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
} from '../../contracts/integrator';
import { streamName } from '../../contracts/streams';
import type { DataStructure } from '../../languages/data-structure';
import { checkMappedValue, MappingError } from '../../languages/mapping/mapping';
import type { CommandDeps } from '../deps';
import { addWebhook, identifyCreate } from '../hooks/commands';
import { webhookDecider, type WebhookState } from '../hooks/domain/webhook';
import { requireRight, type Caller, type RepeatIdentity } from '../kit/caller';
import { withCommandId, type CommandContext, type CommandResult, type HandleOptions } from '../kit/handler';
import { recordDecider } from '../records/domain/record';
import { dataStructureDecider } from '../structure/domain/data-structure';
import { moduleDecider } from '../structure/domain/module';
import { scenarioDecider, type ScenarioCommand, type ScenarioState } from './domain/scenario';

/** Scenarios' commands: create (their steps checked, their hook bound), change, delete, import. */

const scenarioStream = (tenant: string, scenarioId: number) => streamName('scenario', tenant, scenarioId);
const hookStream = (tenant: string, webhookId: number) => streamName('webhook', tenant, webhookId);

/** A scenario as the API shows it. */
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

/** The steps' expressions compile, their modules exist, literal statuses are ones a response may have. */
async function checkSteps(deps: CommandDeps, tenant: string, steps: readonly ScenarioStep[]): Promise<void> {
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

async function bind(
  deps: CommandDeps,
  tenant: string,
  webhookId: number,
  scenarioId: number,
  context: CommandContext,
) {
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

async function unbind(
  deps: CommandDeps,
  tenant: string,
  webhookId: number,
  scenarioId: number,
  context: CommandContext,
) {
  await deps.handler.handle(
    hookStream(tenant, webhookId),
    webhookDecider,
    { kind: 'UnbindScenario', scenarioId, now: deps.hooks.now() },
    { ...context, commandId: `${context.commandId}:unbind` },
  );
}

/** Creates a scenario whose steps were checked (its hook bound first), owned by the caller. */
async function addScenario(
  deps: CommandDeps,
  caller: Caller,
  settings: ScenarioSettings,
  active: boolean,
  identifiedBy: RepeatIdentity,
): Promise<CommandResult<ScenarioState>> {
  const { principal } = caller;
  const identity = await identifyCreate(deps, principal, identifiedBy, 'scenario');
  const scenarioId = identity.entityId!;
  const context = withCommandId(caller.origin, identity.commandId);
  // The hook first: a scenario is only created once its trigger is its own.
  if (settings.webhookId !== null)
    await bind(deps, principal.tenant, settings.webhookId, scenarioId, context);
  return deps.handler.handle(
    scenarioStream(principal.tenant, scenarioId),
    scenarioDecider,
    { kind: 'CreateScenario', scenarioId, ownerId: Number(principal.userId), active, settings },
    context,
    identity.mayBeRepeat ? { mayBeRepeat: true } : { newStream: true },
  );
}

/** `POST /scenario`: the settings not given at their defaults, active unless said otherwise. */
export async function createScenario(
  deps: CommandDeps,
  caller: Caller,
  input: z.infer<typeof createScenarioBody>,
  create: RepeatIdentity,
): Promise<CommandResult<ScenarioState>> {
  const { active, ...given } = input;
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
  await checkSteps(deps, caller.principal.tenant, settings.steps);
  return addScenario(deps, caller, settings, active ?? true, create);
}

/** New settings of scenario `scenarioId`; a new trigger is bound before, the old one unbound after. */
export async function updateScenario(
  deps: CommandDeps,
  caller: Caller,
  scenarioId: number,
  settings: Omit<z.infer<typeof updateScenarioBody>, 'id'>,
  options: HandleOptions,
): Promise<CommandResult<ScenarioState>> {
  const { tenant } = caller.principal;
  if (settings.steps) await checkSteps(deps, tenant, settings.steps);
  const stream = scenarioStream(tenant, scenarioId);
  const before = (await deps.handler.load(stream, scenarioDecider)).state;
  if (before.status === 'none' || before.status === 'deleted')
    throw new PlatformError('not_found', `scenario ${scenarioId} not found`);
  const context = withCommandId(caller.origin, deps.newCommandId());
  const trigger = settings.webhookId;
  const retriggered = trigger !== undefined && trigger !== before.settings.webhookId;
  if (retriggered && trigger !== null) await bind(deps, tenant, trigger, scenarioId, context);
  const result = await deps.handler.handle(
    stream,
    scenarioDecider,
    { kind: 'UpdateScenario', settings },
    context,
    options,
  );
  if (retriggered && before.settings.webhookId !== null)
    await unbind(deps, tenant, before.settings.webhookId, scenarioId, context);
  return result;
}

/** One change of scenario `scenarioId` (activate, deactivate). */
export function changeScenario(
  deps: CommandDeps,
  caller: Caller,
  scenarioId: number,
  command: ScenarioCommand,
  options: HandleOptions,
): Promise<CommandResult<ScenarioState>> {
  return deps.handler.handle(
    scenarioStream(caller.principal.tenant, scenarioId),
    scenarioDecider,
    command,
    withCommandId(caller.origin, deps.newCommandId()),
    options,
  );
}

/** Deletes scenario `scenarioId`; its hook is free again. */
export async function deleteScenario(
  deps: CommandDeps,
  caller: Caller,
  scenarioId: number,
  options: HandleOptions,
): Promise<CommandResult<ScenarioState>> {
  const { tenant } = caller.principal;
  const context = withCommandId(caller.origin, deps.newCommandId());
  const result = await deps.handler.handle(
    scenarioStream(tenant, scenarioId),
    scenarioDecider,
    { kind: 'DeleteScenario' },
    context,
    options,
  );
  const webhookId = result.state.settings.webhookId;
  if (webhookId !== null) await unbind(deps, tenant, webhookId, scenarioId, context);
  return result;
}

/** How an import is recognised when it comes again: its Idempotency-Key (if any) and the request's hash. */
export interface ImportIdentity {
  readonly key: string | undefined;
  readonly hash: string;
}

/**
 * Makes anew the data structures an exported hook validates by; the new id of the one it names (null: none).
 * A structure named but not in the document is refused: it belongs to the other system.
 */
async function importStructures(
  deps: CommandDeps,
  caller: Caller,
  structures: ReadonlyArray<{ id: number; name: string; fields: DataStructure['fields'] }>,
  named: number | null | undefined,
  { key, hash }: ImportIdentity,
): Promise<number | null> {
  if (named === null || named === undefined) return null;
  const structure = structures.find((candidate) => candidate.id === named);
  if (!structure)
    throw new PlatformError(
      'validation_failed',
      `the document's hook names data structure ${named}, which it does not hold`,
      [{ path: 'document.webhook.dataStructureId', message: 'not among document.dataStructures' }],
    );
  const { principal } = caller;
  requireRight(principal, 'dataStructure', 'create');
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
    withCommandId(caller.origin, identity.commandId),
    identity.mayBeRepeat ? { mayBeRepeat: true } : { newStream: true },
  );
  return dataStructureId;
}

/**
 * `POST /scenario/import`: an exported scenario made anew in this system, with its hook and the hook's data
 * structure when the document has them; modules and labels renamed as the import says. Inactive unless said.
 */
export async function importScenario(
  deps: CommandDeps,
  caller: Caller,
  input: z.infer<typeof importScenarioBody>,
  identity: ImportIdentity,
): Promise<{
  readonly result: CommandResult<ScenarioState>;
  readonly hook: CommandResult<WebhookState> | null;
}> {
  const { principal } = caller;
  const { document } = input;
  const { id: _exportedId, ...exported } = document.scenario;
  const steps = remapSteps(exported.steps, input.moduleIds ?? {}, input.labelIds ?? {});
  // Checked before the hook is made, so a refused import leaves nothing behind.
  await checkSteps(deps, principal.tenant, steps);
  const { key, hash } = identity;
  let hook: CommandResult<WebhookState> | null = null;
  if (document.webhook !== null) {
    requireRight(principal, 'webhook', 'create');
    const { id: _hookId, kind, ...exportedSettings } = document.webhook;
    const hookSettings = {
      ...exportedSettings,
      dataStructureId: await importStructures(
        deps,
        caller,
        document.dataStructures,
        exportedSettings.dataStructureId,
        identity,
      ),
    };
    hook = await addWebhook(
      deps,
      caller,
      { kind, settings: hookSettings },
      { key: key && `${key}:webhook`, hash: () => `${hash}:webhook` },
    );
  }
  const result = await addScenario(
    deps,
    caller,
    { ...exported, steps, webhookId: hook ? hook.state.webhookId : null },
    input.active ?? false,
    { key: key && `${key}:scenario`, hash: () => `${hash}:scenario` },
  );
  return { result, hook };
}
