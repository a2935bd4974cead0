import type {
  RunBacklogHeldData,
  WebhookRequestErasedData,
  WebhookRequestReceivedData,
  WebhookRequestRefusedData,
} from '../../contracts/events/integrator';
import { ERASED_VALUE } from '../../contracts/personal-data';
import { HOOK_ACCEPTED, MAX_RUN_OPERATIONS, MAX_RUNS_PER_REQUEST } from '../../contracts/integrator';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import type { Document, ReadModelChange } from '../../contracts/read-model-changes';
import type { Projection } from '../projection';
import { entityProjection, setAllBut } from './entity';

/** Webhooks as their settings and state stand; whether the clock deactivated one the reader works out. */
export const webhooksProjection = entityProjection({
  name: 'webhooks',
  category: 'webhook',
  collection: READ_MODELS.webhooks,
  indexes: [{ name: 'tenant_webhookId', paths: ['tenant', 'webhookId'] }],
  idKey: 'webhookId',
  created: 'WebhookCreated',
  initial: { status: 'enabled', scenarioId: null, redetermining: false, determinedStructure: null },
  derived: (data) => ({ unboundSince: data.createdAt }),
  omit: ['createdAt'],
  deleted: 'WebhookDeleted',
  patches: {
    WebhookUpdated: setAllBut('webhookId'),
    WebhookEnabled: (data) => ({ set: { status: 'enabled', unboundSince: data.unboundSince } }),
    WebhookDisabled: () => ({ set: { status: 'disabled' } }),
    WebhookBound: (data) => ({ set: { scenarioId: data.scenarioId, unboundSince: null } }),
    WebhookUnbound: (data) => ({ set: { scenarioId: null, unboundSince: data.at } }),
    WebhookDeactivated: () => ({ set: { status: 'deactivated' } }),
    WebhookStructureRedetermining: () => ({ set: { redetermining: true } }),
    WebhookStructureDetermined: (data) => ({
      set: { redetermining: false, determinedStructure: data.structure },
    }),
  },
});

/** Reusable data structures: a name and fields. */
export const dataStructuresProjection = entityProjection({
  name: 'data-structures',
  category: 'dataStructure',
  collection: READ_MODELS.dataStructures,
  indexes: [{ name: 'tenant_dataStructureId', paths: ['tenant', 'dataStructureId'] }],
  idKey: 'dataStructureId',
  created: 'DataStructureCreated',
  deleted: 'DataStructureDeleted',
  patches: { DataStructureUpdated: setAllBut('dataStructureId') },
});

export const scenariosProjection = entityProjection({
  name: 'scenarios',
  category: 'scenario',
  collection: READ_MODELS.scenarios,
  indexes: [
    { name: 'tenant_scenarioId', paths: ['tenant', 'scenarioId'] },
    { name: 'tenant_webhookId', paths: ['tenant', 'webhookId'] },
  ],
  idKey: 'scenarioId',
  created: 'ScenarioCreated',
  initial: { deactivatedBecause: null, lastScheduledRunAt: null, consecutiveErrors: 0 },
  derived: (data) => ({ status: data.active === true ? 'active' : 'inactive' }),
  omit: ['active'],
  deleted: 'ScenarioDeleted',
  patches: {
    ScenarioUpdated: setAllBut('scenarioId'),
    ScenarioActivated: () => ({ set: { status: 'active', deactivatedBecause: null, consecutiveErrors: 0 } }),
    ScenarioDeactivated: (data) => ({ set: { status: 'inactive', deactivatedBecause: data.reason } }),
    ScenarioScheduledRunStarted: (data) => ({ set: { lastScheduledRunAt: data.startedAt } }),
    ScenarioScheduledRunEnded: (data) => ({ set: { consecutiveErrors: data.consecutiveErrors } }),
  },
});

/**
 * The runs an erasure names, as far as the platform makes them: an event stored otherwise (a hand repair, an
 * older release) must not have a projection loop for ever or grow a document without bound.
 */
function erasedRuns(data: unknown): WebhookRequestErasedData['runs'] {
  const runs = (data as { runs?: unknown } | null)?.runs;
  if (!Array.isArray(runs)) return [];
  return runs.slice(0, MAX_RUNS_PER_REQUEST).flatMap((run: unknown) => {
    const { runId, operations, failed, responded } = (run ?? {}) as Record<string, unknown>;
    if (typeof runId !== 'string') return [];
    const count = typeof operations === 'number' && operations > 0 ? Math.floor(operations) : 0;
    return [
      {
        runId,
        operations: Math.min(count, MAX_RUN_OPERATIONS),
        failed: failed === true,
        responded: responded === true,
      },
    ];
  });
}

/** The requests waiting in each hook's queue, in arrival order (`arrival`: the event's position). */
export const hookQueueProjection: Projection = {
  name: 'hook-queue',
  categories: ['hookQueue', 'hookRequestErasure'],
  collections: {
    [READ_MODELS.hookQueue]: [{ name: 'tenant_webhook_arrival', paths: ['tenant', 'webhookId', 'arrival'] }],
  },
  project(event, collection): ReadModelChange[] {
    const target = collection(READ_MODELS.hookQueue);
    const tenant = event.metadata.tenant;
    const position = event.position;
    if (event.type === 'WebhookRequestErased') {
      const { requestId, queueFailures } = event.data as WebhookRequestErasedData;
      const set = {
        'payload.request': ERASED_VALUE,
        'payload.bundle': ERASED_VALUE,
        ...(queueFailures && { lastError: ERASED_VALUE }),
      };
      return [{ op: 'patch', collection: target, id: documentId(tenant, requestId), set, position }];
    }
    if (event.type === 'WebhookRequestReceived') {
      const data = event.data as WebhookRequestReceivedData;
      return [
        {
          op: 'upsert',
          collection: target,
          position,
          doc: {
            id: documentId(tenant, data.requestId),
            tenant,
            requestId: data.requestId,
            webhookId: data.webhookId,
            receivedAt: data.receivedAt,
            method: data.method,
            bytes: data.bytes,
            arrival: Number(position),
            failedRuns: 0,
            lastError: null,
            // What a later run needs: the request as the event holds it (inline, or where its payload is).
            payload: data,
          },
        },
      ];
    }
    if (event.type === 'WebhookQueueItemFailed') {
      const { requestId, message } = event.data as { requestId: string; message: string };
      const id = documentId(tenant, requestId);
      return [
        {
          op: 'patch',
          collection: target,
          id,
          position,
          set: { lastError: message },
          inc: { failedRuns: 1 },
        },
      ];
    }
    if (event.type === 'WebhookQueueItemsRemoved') {
      const { requestIds } = event.data as { requestIds: string[] };
      return requestIds.map((requestId) => ({
        op: 'delete',
        collection: target,
        position,
        id: documentId(tenant, requestId),
      }));
    }
    return [];
  },
};

type RunEventData = Record<string, unknown> & { runId: string };

interface RecordedStep {
  readonly index: number;
  readonly kind: string;
  readonly output: unknown;
  readonly durationMs?: number;
  readonly path?: string;
}

/** The run document's `steps.<index>` entries of recorded steps. */
function stepEntries(steps: readonly RecordedStep[]): Record<string, unknown> {
  const entries: Record<string, unknown> = {};
  for (const step of steps)
    entries[`steps.${String(step.index)}`] = {
      kind: step.kind,
      output: step.output,
      durationMs: step.durationMs ?? null,
      path: step.path ?? String(step.index),
    };
  return entries;
}

/** A hook log entry: what every entry has, from its request, and what its outcome says. */
function logEntry(
  tenant: string,
  request: Pick<WebhookRequestRefusedData, 'requestId' | 'webhookId' | 'receivedAt' | 'bytes' | 'method'>,
  outcome: Record<string, unknown>,
): Document {
  return {
    id: documentId(tenant, request.requestId),
    tenant,
    requestId: request.requestId,
    webhookId: request.webhookId,
    loggedAt: request.receivedAt,
    size: request.bytes,
    method: request.method,
    ...outcome,
  };
}

/**
 * One entry per request a hook accepted: what came in, what was answered, how its run went. Runs of queued
 * requests fill in their entry when they happen.
 */
export const hookLogsProjection: Projection = {
  name: 'hook-logs',
  categories: ['hookRequest', 'hookQueue', 'scenarioRun', 'hookRequestErasure'],
  collections: {
    [READ_MODELS.hookLogs]: [{ name: 'tenant_webhook_loggedAt', paths: ['tenant', 'webhookId', 'loggedAt'] }],
  },
  project(event, collection): ReadModelChange[] {
    const target = collection(READ_MODELS.hookLogs);
    const tenant = event.metadata.tenant;
    const position = event.position;
    const upsert = (doc: Document): ReadModelChange[] => [
      { op: 'upsert', collection: target, position, doc },
    ];
    if (event.type === 'WebhookRequestReceived') {
      const data = event.data as WebhookRequestReceivedData;
      const answered = !data.awaitsResponse;
      return upsert(
        logEntry(tenant, data, {
          status: 'success',
          queued: data.queued,
          awaitsResponse: data.awaitsResponse,
          runId: data.queued ? null : data.requestId,
          responseStatus: answered ? 200 : null,
          // Absent, not null, while unanswered: an erasure's `response.body` can go into a missing object, never
          // into null, whatever order its events came in.
          ...(answered && { response: { status: 200, headers: [], body: HOOK_ACCEPTED } }),
          error: null,
          ...(data.request !== undefined && { request: data.request }),
          ...(data.bundle !== undefined && { bundle: data.bundle }),
          ...(data.payloadBlobKey !== undefined && { payloadBlobKey: data.payloadBlobKey }),
        }),
      );
    }
    if (event.type === 'WebhookRequestRefused') {
      const data = event.data as WebhookRequestRefusedData;
      return upsert(
        logEntry(tenant, data, {
          status: 'warning',
          queued: false,
          awaitsResponse: false,
          runId: null,
          responseStatus: data.status,
          response: { status: data.status, headers: [], body: data.message },
          error: data.message,
          request: data.request,
        }),
      );
    }
    if (event.type === 'WebhookRequestErased') {
      const { requestId, refused } = event.data as WebhookRequestErasedData;
      const runs = erasedRuns(event.data);
      // What its events' sealed values read as once erased (a replay writes the same).
      const set = {
        request: ERASED_VALUE,
        bundle: ERASED_VALUE,
        erased: true,
        ...((refused === true || runs.some((run) => run.failed)) && { error: ERASED_VALUE }),
        ...(refused === true && { 'response.body': ERASED_VALUE }),
        ...(runs.some((run) => run.responded) && { 'response.headers': [], 'response.body': ERASED_VALUE }),
      };
      return [{ op: 'patch', collection: target, id: documentId(tenant, requestId), set, position }];
    }
    const data = event.data as RunEventData;
    const id = documentId(tenant, String(data.requestId ?? data.runId));
    const patch = (set: Record<string, unknown>): ReadModelChange[] => [
      { op: 'patch', collection: target, id, set, position },
    ];
    switch (event.type) {
      case 'ScenarioRunStarted':
        return patch({ runId: data.runId });
      case 'WebhookResponseReady': {
        const response = data.response as { status: number; headers: unknown };
        // Erased, its headers read as the placeholder: none are shown.
        const headers = Array.isArray(response.headers) ? response.headers : [];
        return patch({ response: { ...response, headers }, responseStatus: response.status });
      }
      case 'ScenarioRunFailed':
        return patch({ status: 'error', error: data.message });
      // A queued request whose earlier run failed: the entry shows the run that went through.
      case 'ScenarioRunSucceeded':
        return typeof data.requestId === 'string' && data.runId !== data.requestId
          ? patch({ status: 'success', error: null })
          : [];
      default:
        return [];
    }
  },
};

/** Runs of scenarios: their trigger, status, steps (`steps.<index>`) and outcome. */
export const scenarioRunsProjection: Projection = {
  name: 'scenario-runs',
  // Erasures of the requests the runs were for.
  categories: ['scenarioRun', 'hookRequestErasure'],
  collections: {
    [READ_MODELS.scenarioRuns]: [
      { name: 'tenant_scenario_startedAt', paths: ['tenant', 'scenarioId', 'startedAt'] },
    ],
  },
  project(event, collection): ReadModelChange[] {
    const target = collection(READ_MODELS.scenarioRuns);
    const tenant = event.metadata.tenant;
    const position = event.position;
    if (event.type === 'WebhookRequestErased')
      return erasedRuns(event.data).flatMap((run): ReadModelChange[] => {
        const set: Record<string, unknown> = run.failed ? { error: ERASED_VALUE } : {};
        for (let index = 0; index < run.operations; index++) set[`steps.${index}.output`] = ERASED_VALUE;
        if (Object.keys(set).length === 0) return [];
        return [{ op: 'patch', collection: target, id: documentId(tenant, run.runId), set, position }];
      });
    const data = event.data as RunEventData;
    const id = documentId(tenant, data.runId);
    const patch = (set: Record<string, unknown>, inc?: Record<string, number>): ReadModelChange[] => [
      { op: 'patch', collection: target, id, set, ...(inc && { inc }), position },
    ];
    switch (event.type) {
      case 'ScenarioRunStarted':
        return [
          {
            op: 'upsert',
            collection: target,
            position,
            doc: {
              id,
              tenant,
              runId: data.runId,
              scenarioId: data.scenarioId,
              webhookId: data.webhookId,
              requestId: data.requestId,
              trigger: data.trigger,
              attempt: data.attempt ?? 1,
              status: 'running',
              startedAt: data.startedAt,
              finishedAt: null,
              operations: 0,
              error: null,
              failedStep: null,
              responseStatus: null,
              steps: {},
            },
          },
        ];
      case 'ScenarioStepCompleted':
        return patch(stepEntries([data as unknown as RecordedStep]), { operations: 1 });
      // A write of several steps: one change for all of them (a change per step rewrites a long run's document
      // once per step).
      case 'ScenarioStepsCompleted': {
        const steps = data.steps as RecordedStep[];
        return patch(stepEntries(steps), { operations: steps.length });
      }
      case 'WebhookResponseReady':
        return patch({ responseStatus: (data.response as { status: number }).status });
      case 'ScenarioRunSucceeded':
        return patch({ status: 'succeeded', finishedAt: data.finishedAt });
      case 'ScenarioRunFailed':
        return patch({
          status: 'failed',
          finishedAt: data.finishedAt,
          error: data.message,
          failedStep: data.step,
        });
      default:
        return [];
    }
  },
};

/**
 * Each system's run backlog as far as the integrators need to find it: how many requests were parked in it
 * (`parked`: the requests stream's length) and how far its drain got (`next`). Items wait while `next` is below
 * `parked`; the drain itself reads the event store, this only says where to look.
 */
export const runBacklogsProjection: Projection = {
  name: 'run-backlogs',
  categories: ['runBacklog'],
  collections: { [READ_MODELS.runBacklogs]: [{ name: 'tenant', paths: ['tenant'] }] },
  project(event, collection): ReadModelChange[] {
    const target = collection(READ_MODELS.runBacklogs);
    const tenant = event.metadata.tenant;
    const id = documentId(tenant, 'runs');
    const position = event.position;
    if (event.type === 'ScenarioRunParked') {
      const parked = Number(event.revision) + 1;
      return event.revision === 0n
        ? [{ op: 'upsert', collection: target, position, doc: { id, tenant, parked, next: 0 } }]
        : [{ op: 'patch', collection: target, id, set: { parked }, position }];
    }
    if (event.type === 'RunBacklogHeld') {
      const { next } = event.data as RunBacklogHeldData;
      return [{ op: 'patch', collection: target, id, set: { next }, position }];
    }
    return [];
  },
};
