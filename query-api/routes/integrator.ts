import { ERASED_VALUE } from '../../contracts/personal-data';
import type { Router } from 'express';
import {
  exportScenario,
  getHookLog,
  getScenarioRun,
  HOOK_OPERATIONS,
  listHookLogs,
  listHookQueue,
  listScenarioRuns,
  SCENARIO_EXPORT_FORMAT,
  SCENARIO_OPERATIONS,
  STRUCTURE_OPERATIONS,
} from '../../contracts/api/integrator';
import { PlatformError } from '../../contracts/errors';
import {
  HOOK_ACCEPTED,
  HOOK_SCENARIO_FAILED,
  HOOK_UNBOUND_LIFETIME_MS,
  scenarioSettingsShape,
  stepReferences,
  webhookSettingsShape,
  hookAddressOf,
  type HookKind,
  type HookPublication,
  type ScenarioStep,
} from '../../contracts/integrator';
import { catalogue } from '../../languages/filter/resolve';
import { equals } from '../../languages/filter/store-query';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import type { Document } from '../../contracts/read-model-changes';
import { AUDIT_COLUMNS } from '../../languages/filter/record-fields';
import { validate } from '../../contracts/validation';
import type { BlobStore } from '../../infra/blob-store/port';
import { principalOf } from '../../infra/http/context';
import { mount } from '../../infra/http/operations';
import { idParam } from '../../infra/http/params';
import { sendJson } from '../../infra/http/respond';
import { addEntityRoutes, readOne, readPage, type EntityDescription, type EntityReadDeps } from './entities';

export interface IntegratorReadDeps extends EntityReadDeps {
  readonly blobs: BlobStore;
  /** Where hook addresses point (`{hook_url}`, and the mail domain of mailhooks). */
  readonly hookPublication: HookPublication;
}

function auditOf(doc: Document) {
  return {
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    createdBy: doc.createdBy ?? null,
    updatedBy: doc.updatedBy ?? null,
  };
}

/** Webhooks made before mailhooks have no kind: they are web hooks. */
function hookKindOf(doc: Document): HookKind {
  return doc.kind === 'mail' ? 'mail' : 'web';
}

function webhookView(publication: HookPublication) {
  return (doc: Document): Record<string, unknown> => {
    const unboundSince = (doc.unboundSince as string | null) ?? null;
    const expired = unboundSince !== null && Date.now() - Date.parse(unboundSince) > HOOK_UNBOUND_LIFETIME_MS;
    return {
      id: doc.webhookId,
      name: doc.name,
      kind: hookKindOf(doc),
      ...hookAddressOf(hookKindOf(doc), String(doc.key), publication),
      key: doc.key,
      udid: doc.udid,
      status: expired ? 'deactivated' : doc.status,
      scenarioId: doc.scenarioId ?? null,
      unboundSince,
      ipRestrictions: doc.ipRestrictions,
      dataStructure: doc.dataStructure ?? null,
      dataStructureId: doc.dataStructureId ?? null,
      determinedStructure: doc.determinedStructure ?? null,
      redetermining: doc.redetermining === true,
      getRequestHeaders: doc.getRequestHeaders,
      getRequestMethod: doc.getRequestMethod,
      jsonPassThrough: doc.jsonPassThrough,
      maxResults: doc.maxResults,
      queueCapacity: doc.queueCapacity,
      ...auditOf(doc),
    };
  };
}

function scenarioView(doc: Document): Record<string, unknown> {
  return {
    id: doc.scenarioId,
    ownerId: doc.ownerId ?? null,
    status: doc.status,
    deactivatedBecause: doc.deactivatedBecause ?? null,
    name: doc.name,
    webhookId: doc.webhookId ?? null,
    schedule: doc.schedule,
    sequential: doc.sequential,
    autoCommit: doc.autoCommit,
    steps: doc.steps,
    lastScheduledRunAt: doc.lastScheduledRunAt ?? null,
    consecutiveErrors: doc.consecutiveErrors ?? 0,
    ...auditOf(doc),
  };
}

/** What the caller was answered: the stored response, or what a run that has not answered yet means. */
function responseOf(doc: Document): { status: number; headers: unknown[]; body: string } {
  // Old entries have `null` while unanswered; an erased one may have a body without a status.
  const response = doc.response as { status: number; headers: unknown[]; body: string } | null | undefined;
  if (typeof response?.status === 'number') return response;
  return doc.status === 'error'
    ? { status: 500, headers: [], body: HOOK_SCENARIO_FAILED }
    : { status: 200, headers: [], body: HOOK_ACCEPTED };
}

function logEntryView(doc: Document): Record<string, unknown> {
  return {
    id: doc.requestId,
    webhookId: doc.webhookId,
    status: doc.status,
    loggedAt: doc.loggedAt,
    size: doc.size,
    method: doc.method,
    responseStatus: responseOf(doc).status,
    runId: doc.runId ?? null,
  };
}

function runView(doc: Document): Record<string, unknown> {
  return {
    id: doc.runId,
    scenarioId: doc.scenarioId,
    webhookId: doc.webhookId,
    requestId: doc.requestId,
    trigger: doc.trigger,
    attempt: doc.attempt ?? 1,
    status: doc.status,
    startedAt: doc.startedAt,
    finishedAt: doc.finishedAt ?? null,
    operations: doc.operations ?? 0,
    error: doc.error ?? null,
    failedStep: doc.failedStep ?? null,
    responseStatus: doc.responseStatus ?? null,
  };
}

const STRUCTURE_FIELDS = catalogue({
  id: { path: 'dataStructureId', type: 'integer' },
  name: { path: 'name', type: 'string' },
  ...AUDIT_COLUMNS,
});
const WEBHOOK_FIELDS = catalogue({
  id: { path: 'webhookId', type: 'integer' },
  name: { path: 'name', type: 'string' },
  status: { path: 'status', type: 'string' },
  scenarioId: { path: 'scenarioId', type: 'integer' },
  ...AUDIT_COLUMNS,
});
const SCENARIO_FIELDS = catalogue({
  id: { path: 'scenarioId', type: 'integer' },
  name: { path: 'name', type: 'string' },
  status: { path: 'status', type: 'string' },
  webhookId: { path: 'webhookId', type: 'integer' },
  sequential: { path: 'sequential', type: 'boolean' },
  ...AUDIT_COLUMNS,
});
const LOG_FIELDS = catalogue({
  id: { path: 'requestId', type: 'string' },
  status: { path: 'status', type: 'string' },
  loggedAt: { path: 'loggedAt', type: 'datetime' },
  size: { path: 'size', type: 'integer' },
  method: { path: 'method', type: 'string' },
  responseStatus: { path: 'responseStatus', type: 'integer' },
});
const RUN_FIELDS = catalogue({
  id: { path: 'runId', type: 'string' },
  status: { path: 'status', type: 'string' },
  trigger: { path: 'trigger', type: 'string' },
  startedAt: { path: 'startedAt', type: 'datetime' },
  finishedAt: { path: 'finishedAt', type: 'datetime' },
  operations: { path: 'operations', type: 'integer' },
});
const QUEUE_FIELDS = catalogue({ arrival: { path: 'arrival', type: 'integer' } });

/** Webhooks and their queue and logs; scenarios and their runs. */
export function addIntegratorReadRoutes(router: Router, deps: IntegratorReadDeps): void {
  const webhooks: EntityDescription = {
    module: 'webhook',
    collection: READ_MODELS.webhooks,
    projection: 'webhooks',
    fields: WEBHOOK_FIELDS,
    view: webhookView(deps.hookPublication),
    noun: 'webhook',
  };
  const structures: EntityDescription = {
    module: 'dataStructure',
    collection: READ_MODELS.dataStructures,
    projection: 'data-structures',
    fields: STRUCTURE_FIELDS,
    view: (doc) => ({ id: doc.dataStructureId, name: doc.name, fields: doc.fields, ...auditOf(doc) }),
    noun: 'data structure',
  };
  addEntityRoutes(router, deps, STRUCTURE_OPERATIONS, 'dataStructureId', structures);
  const scenarios: EntityDescription = {
    module: 'scenario',
    collection: READ_MODELS.scenarios,
    projection: 'scenarios',
    fields: SCENARIO_FIELDS,
    view: scenarioView,
    noun: 'scenario',
  };
  const logs: EntityDescription = {
    module: 'webhook',
    collection: READ_MODELS.hookLogs,
    projection: 'hook-logs',
    fields: LOG_FIELDS,
    view: logEntryView,
    noun: 'log entry',
    defaultOrder: [{ path: 'loggedAt', direction: 'desc' }],
  };
  const runs: EntityDescription = {
    module: 'scenario',
    collection: READ_MODELS.scenarioRuns,
    projection: 'scenario-runs',
    fields: RUN_FIELDS,
    view: runView,
    noun: 'run',
    defaultOrder: [{ path: 'startedAt', direction: 'desc' }],
  };
  const queue: EntityDescription = {
    module: 'webhook',
    collection: READ_MODELS.hookQueue,
    projection: 'hook-queue',
    fields: QUEUE_FIELDS,
    view: (doc) => ({
      requestId: doc.requestId,
      receivedAt: doc.receivedAt,
      method: doc.method,
      bytes: doc.bytes,
      failedRuns: doc.failedRuns ?? 0,
      lastError: doc.lastError ?? null,
    }),
    noun: 'queued request',
    defaultOrder: [{ path: 'arrival', direction: 'asc' }],
  };

  mount(router, listHookQueue, async (req, res) => {
    const webhookId = idParam(req, 'webhookId');
    const { body: hook } = await readOne(req, deps, webhooks, webhookId);
    const page = await readPage(req, deps, queue, equals('webhookId', webhookId));
    sendJson(res, 200, { ...page, capacity: hook.queueCapacity });
  });
  mount(router, listHookLogs, async (req, res) => {
    const webhookId = idParam(req, 'webhookId');
    await readOne(req, deps, webhooks, webhookId);
    sendJson(res, 200, await readPage(req, deps, logs, equals('webhookId', webhookId)));
  });
  mount(router, getHookLog, async (req, res) => {
    const { webhookId, requestId } = validate(getHookLog.params, req.params, 'path');
    await readOne(req, deps, webhooks, webhookId);
    const tenant = principalOf(req).tenant;
    const doc = await deps.readModels.get(tenant, logs.collection, documentId(tenant, requestId));
    if (!doc || doc.webhookId !== webhookId)
      throw new PlatformError('not_found', `no log entry ${requestId} for webhook ${webhookId}`);
    const payload = await payloadOf(doc);
    sendJson(res, 200, { ...logEntryView(doc), ...payload, response: responseOf(doc) });
  });
  addEntityRoutes(router, deps, HOOK_OPERATIONS, 'webhookId', webhooks);

  mount(router, listScenarioRuns, async (req, res) => {
    const scenarioId = idParam(req, 'scenarioId');
    await readOne(req, deps, scenarios, scenarioId);
    sendJson(res, 200, await readPage(req, deps, runs, equals('scenarioId', scenarioId)));
  });
  mount(router, getScenarioRun, async (req, res) => {
    const { scenarioId, runId } = validate(getScenarioRun.params, req.params, 'path');
    await readOne(req, deps, scenarios, scenarioId);
    const tenant = principalOf(req).tenant;
    const doc = await deps.readModels.get(tenant, runs.collection, documentId(tenant, runId));
    if (!doc || doc.scenarioId !== scenarioId)
      throw new PlatformError('not_found', `no run ${runId} of scenario ${scenarioId}`);
    type StoredStep = { kind: string; output: unknown; durationMs?: number | null; path?: string };
    const steps = Object.entries((doc.steps as Record<string, StoredStep>) ?? {})
      .map(([index, step]) => ({
        index: Number(index),
        kind: step.kind,
        output: step.output,
        path: step.path ?? index,
        durationMs: step.durationMs ?? null,
      }))
      .sort((a, b) => a.index - b.index);
    sendJson(res, 200, { ...runView(doc), steps });
  });
  addEntityRoutes(router, deps, SCENARIO_OPERATIONS, 'scenarioId', scenarios);
  mount(router, exportScenario, async (req, res) => {
    const { body: scenario } = await readOne(req, deps, scenarios, idParam(req, 'scenarioId'));
    const webhookId = scenario.webhookId;
    const hook = typeof webhookId === 'number' ? (await readOne(req, deps, webhooks, webhookId)).body : null;
    const pick = (from: Record<string, unknown>, keys: readonly string[]) =>
      Object.fromEntries(keys.filter((key) => from[key] !== undefined).map((key) => [key, from[key]]));
    sendJson(res, 200, {
      format: SCENARIO_EXPORT_FORMAT,
      version: 1,
      exportedAt: new Date().toISOString(),
      scenario: {
        id: scenario.id,
        ...pick(
          scenario,
          Object.keys(scenarioSettingsShape).filter((key) => key !== 'webhookId'),
        ),
      },
      webhook: hook && { id: hook.id, kind: hook.kind, ...pick(hook, Object.keys(webhookSettingsShape)) },
      dataStructures:
        hook && typeof hook.dataStructureId === 'number'
          ? [
              pick((await readOne(req, deps, structures, hook.dataStructureId)).body, [
                'id',
                'name',
                'fields',
              ]),
            ]
          : [],
      references: stepReferences(scenario.steps as ScenarioStep[]),
    });
  });

  /** The request and bundle of an entry: in the entry, or in the blob a large one was kept in. */
  async function payloadOf(doc: Document): Promise<{ request: unknown; bundle: unknown }> {
    // Erased, a large payload's blob is deleted: both read as the placeholder, as inline ones do.
    if (doc.erased === true) return { request: ERASED_VALUE, bundle: ERASED_VALUE };
    if (typeof doc.payloadBlobKey !== 'string') return { request: doc.request, bundle: doc.bundle ?? {} };
    const content = await deps.blobs.get(doc.payloadBlobKey);
    if (!content) throw new PlatformError('gone', 'the payload of this log entry is no longer stored');
    const chunks: Buffer[] = [];
    for await (const chunk of content) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: unknown; bundle: unknown };
  }
}
