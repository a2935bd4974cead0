import { z } from 'zod';
import { dataStructureSchema, structureFieldsSchema } from '../../languages/data-structure';
import {
  MAX_RUN_OPERATIONS,
  MAX_RUNS_PER_REQUEST,
  hookKeySchema,
  hookKindSchema,
  hookRequestSchema,
  hookResponseSchema,
  scenarioSettingsShape,
  webhookSettingsShape,
} from '../integrator';
import type { EventDefinition, EventOf } from './definition';

const id = z.number().int().positive();
const webhookId = id;
const scenarioId = id;
const at = z.iso.datetime();

const webhookCreated = z.object({
  webhookId,
  key: hookKeySchema,
  udid: z.uuid(),
  /** Absent in webhooks made before mailhooks: `web`. */
  kind: hookKindSchema.optional(),
  ...webhookSettingsShape,
  /** When it was made: a webhook without a scenario counts its 120 hours from here. */
  createdAt: at,
});
const webhookUpdated = z.object({ webhookId, ...z.object(webhookSettingsShape).partial().shape });

/** An incoming request, once accepted: `queued` ones wait in the hook's queue, the others run at once. */
const requestReceived = z.object({
  webhookId,
  requestId: z.string().min(1),
  /** The scenario bound when it arrived (null: none, the request only waits in the queue). */
  scenarioId: scenarioId.nullable(),
  receivedAt: at,
  method: z.string(),
  /** Bytes of the request body. */
  bytes: z.number().int().nonnegative(),
  queued: z.boolean(),
  /** It runs at once in a sequential scenario: what the hook queued before runs first. */
  sequential: z.boolean(),
  /** The receiver waits for this request's Webhook response. */
  awaitsResponse: z.boolean(),
  /** Inline when small; otherwise `{request, bundle}` as JSON under `payloadBlobKey`. */
  request: hookRequestSchema.optional(),
  bundle: z.json().optional(),
  payloadBlobKey: z.string().optional(),
  payloadBytes: z.number().int().nonnegative(),
});

/** Version 1 had no `sequential` (it was absent when false; a request recorded before it existed: false). */
const requestReceivedV1 = requestReceived.extend({ sequential: z.boolean().optional() });

/** A request to a live hook refused after it was counted (a body or data the hook does not take, a full queue). */
const requestRefused = z.object({
  webhookId,
  requestId: z.string().min(1),
  receivedAt: at,
  method: z.string(),
  bytes: z.number().int().nonnegative(),
  /** The status and text the caller was answered. */
  status: z.number().int().min(400).max(499),
  message: z.string(),
  request: hookRequestSchema,
});

/**
 * What a request's sender sent was erased (with a record made from it, or on its own): the request's key is
 * gone, its payload's and files' blobs deleted. It names the request's runs, and what each recorded, so the
 * read models scrub what they copied from them; no data.
 */
const requestErased = z.object({
  webhookId,
  requestId: z.string().min(1),
  /** Why, as the administrator said (absent in erasures recorded before it was kept). */
  reason: z.string().min(1).max(1000).optional(),
  /** The request had been refused: its log entry shows the refusal's text, which may quote what was sent. */
  refused: z.boolean().optional(),
  runs: z
    .array(
      z.object({
        runId: z.string().min(1),
        /** Step outputs it recorded. */
        operations: z.number().int().nonnegative().max(MAX_RUN_OPERATIONS),
        failed: z.boolean(),
        responded: z.boolean(),
      }),
    )
    .max(MAX_RUNS_PER_REQUEST),
  /** Whether a failure of a queued run of it was recorded (the queue keeps the last one's message). */
  queueFailures: z.boolean(),
});

const runRef = { runId: z.string().min(1), scenarioId, webhookId, requestId: z.string().min(1) };

const webhookRef = z.object({ webhookId });
const webhookEnabled = z.object({ webhookId, at, unboundSince: at.nullable() });
const webhookBound = z.object({ webhookId, scenarioId });
const webhookUnbound = z.object({ webhookId, scenarioId, at });
const webhookDeactivated = z.object({ webhookId, reason: z.string(), unboundSince: at });
const structureDetermined = z.object({ webhookId, structure: dataStructureSchema, requestId: z.string() });
const keyAssigned = z.object({ key: hookKeySchema, tenant: z.string(), webhookId });
const queueItemsRemoved = z.object({
  webhookId,
  requestIds: z.array(z.string()),
  reason: z.enum(['processed', 'deleted', 'cleared']),
});
const scenarioCreated = z.object({
  scenarioId,
  /** The user who made it, whose rights its record steps act with (absent in events before owners were kept). */
  ownerId: z.number().int().positive().optional(),
  active: z.boolean(),
  ...scenarioSettingsShape,
});
const scenarioUpdated = z.object({ scenarioId, ...z.object(scenarioSettingsShape).partial().shape });
const scenarioRef = z.object({ scenarioId });
const scenarioDeactivated = z.object({ scenarioId, reason: z.string() });
/** Which interval a scheduled run belongs to: `floor(time / interval)`; one run per slot, whoever starts it. */
const slot = z.number().int().nonnegative();
const scheduledRunStarted = z.object({ scenarioId, slot, startedAt: at });
const scheduledRunEnded = z.object({
  scenarioId,
  slot,
  /** Queue items the run processed (removed from the queue). */
  processed: z.number().int().nonnegative(),
  /** The run that failed and stopped this one (its item stays queued), or null. */
  failedRunId: z.string().nullable(),
  message: z.string().nullable(),
  /** Scheduled runs that failed in a row, this one included (3 deactivate the scenario). */
  consecutiveErrors: z.number().int().nonnegative(),
});
const queueItemFailed = z.object({
  webhookId,
  requestId: z.string().min(1),
  runId: z.string().min(1),
  attempt: z.number().int().min(1),
  message: z.string(),
});
const runStarted = z.object({
  ...runRef,
  trigger: z.enum(['instant', 'scheduled']),
  startedAt: at,
  /** The how-manieth run of this request (a queued request whose scheduled run failed is run again). */
  attempt: z.number().int().min(1).optional(),
  /**
   * The blobs the request's data is kept in (a large payload, the files it brought): an erasure of what the
   * run wrote deletes them. Absent in runs recorded before it was kept.
   */
  blobKeys: z.array(z.string().min(1)).optional(),
});
const stepCompleted = z.object({
  runId: z.string(),
  index: z.number().int().nonnegative(),
  kind: z.string(),
  output: z.json(),
  /** Milliseconds the step took (absent in runs recorded before it was kept). */
  durationMs: z.number().nonnegative().optional(),
  /** Where the step is (`4.1.0` in a route, `5[3]` for an item); absent: the step of this index. */
  path: z.string().max(200).optional(),
});
/**
 * Several steps of a run recorded in one write, in order (a long run's steps in few events: its read model
 * takes one change per write, not one per step).
 */
const stepsCompleted = z.object({
  runId: z.string(),
  steps: z.array(stepCompleted.omit({ runId: true })).min(1),
});
const responseReady = z.object({ runId: z.string(), requestId: z.string(), response: hookResponseSchema });
const runSucceeded = z.object({
  runId: z.string(),
  requestId: z.string().optional(),
  finishedAt: at,
  operations: z.number().int().nonnegative(),
});
/** A run met an error that is neither a step's failure nor a limit (a bug, a refused write): it is tried again. */
const runErrored = z.object({
  runId: z.string(),
  at,
  message: z.string(),
});
const runFailed = z.object({
  runId: z.string(),
  requestId: z.string().optional(),
  finishedAt: at,
  step: z.number().int().nonnegative().nullable(),
  message: z.string(),
});

/**
 * A request the integrator did not run at once because its system already had as many runs in hand as it may
 * hold: kept in the system's run backlog and run from there, in order per `orderKey` (the request's stream
 * key: one sequential scenario's requests share it).
 */
const runParked = z.object({
  runId: z.string().min(1),
  orderKey: z.string().min(1),
  request: requestReceived,
});
/**
 * An integrator holds the draining of a system's run backlog until `until` (a release: `until` is when it let
 * go); every backlog item before revision `next` has run.
 */
const runBacklogHeld = z.object({
  holder: z.string().min(1).max(200),
  until: at,
  next: z.number().int().nonnegative(),
});

export type WebhookEvent =
  | EventOf<'WebhookCreated', typeof webhookCreated>
  | EventOf<'WebhookUpdated', typeof webhookUpdated>
  | EventOf<'WebhookEnabled', typeof webhookEnabled>
  | EventOf<'WebhookDisabled', typeof webhookRef>
  | EventOf<'WebhookBound', typeof webhookBound>
  | EventOf<'WebhookUnbound', typeof webhookUnbound>
  | EventOf<'WebhookDeactivated', typeof webhookDeactivated>
  | EventOf<'WebhookStructureRedetermining', typeof webhookRef>
  | EventOf<'WebhookStructureDetermined', typeof structureDetermined>
  | EventOf<'WebhookDeleted', typeof webhookRef>;
export type WebhookKeyEvent = EventOf<'WebhookKeyAssigned', typeof keyAssigned>;
export type WebhookRequestReceivedData = z.infer<typeof requestReceived>;
export type WebhookRequestRefusedData = z.infer<typeof requestRefused>;
export type WebhookRequestErasedData = z.infer<typeof requestErased>;
export type HookRequestEvent =
  | EventOf<'WebhookRequestReceived', typeof requestReceived>
  | EventOf<'WebhookRequestRefused', typeof requestRefused>;
export type RequestErasureEvent = EventOf<'WebhookRequestErased', typeof requestErased>;
export type HookQueueEvent =
  | EventOf<'WebhookRequestReceived', typeof requestReceived>
  | EventOf<'WebhookQueueItemsRemoved', typeof queueItemsRemoved>
  | EventOf<'WebhookQueueItemFailed', typeof queueItemFailed>;
export type ScenarioEvent =
  | EventOf<'ScenarioCreated', typeof scenarioCreated>
  | EventOf<'ScenarioUpdated', typeof scenarioUpdated>
  | EventOf<'ScenarioActivated', typeof scenarioRef>
  | EventOf<'ScenarioDeactivated', typeof scenarioDeactivated>
  | EventOf<'ScenarioDeleted', typeof scenarioRef>
  | EventOf<'ScenarioScheduledRunStarted', typeof scheduledRunStarted>
  | EventOf<'ScenarioScheduledRunEnded', typeof scheduledRunEnded>;
export type RunParkedData = z.infer<typeof runParked>;
export type RunBacklogHeldData = z.infer<typeof runBacklogHeld>;
export type RunBacklogDrainEvent = EventOf<'RunBacklogHeld', typeof runBacklogHeld>;
export type RunBacklogEvent = EventOf<'ScenarioRunParked', typeof runParked> | RunBacklogDrainEvent;
export type ScenarioRunEvent =
  | EventOf<'ScenarioRunStarted', typeof runStarted>
  | EventOf<'ScenarioStepCompleted', typeof stepCompleted>
  | EventOf<'ScenarioStepsCompleted', typeof stepsCompleted>
  | EventOf<'WebhookResponseReady', typeof responseReady>
  | EventOf<'ScenarioRunSucceeded', typeof runSucceeded>
  | EventOf<'ScenarioRunErrored', typeof runErrored>
  | EventOf<'ScenarioRunFailed', typeof runFailed>;

/** A reusable data structure: a name and its fields. */
const dataStructureId = id;
const dataStructureName = z.string().trim().min(1).max(200);
const dataStructureCreated = z.object({
  dataStructureId,
  name: dataStructureName,
  fields: structureFieldsSchema,
});
const dataStructureUpdated = z.object({
  dataStructureId,
  name: dataStructureName.optional(),
  fields: structureFieldsSchema.optional(),
});
const dataStructureDeleted = z.object({ dataStructureId });

export const INTEGRATOR_EVENTS: readonly EventDefinition[] = [
  { type: 'DataStructureCreated', version: 1, schema: dataStructureCreated },
  { type: 'DataStructureUpdated', version: 1, schema: dataStructureUpdated },
  { type: 'DataStructureDeleted', version: 1, schema: dataStructureDeleted },
  { type: 'WebhookCreated', version: 1, schema: webhookCreated },
  { type: 'WebhookUpdated', version: 1, schema: webhookUpdated },
  { type: 'WebhookEnabled', version: 1, schema: webhookEnabled },
  { type: 'WebhookDisabled', version: 1, schema: webhookRef },
  { type: 'WebhookBound', version: 1, schema: webhookBound },
  { type: 'WebhookUnbound', version: 1, schema: webhookUnbound },
  { type: 'WebhookDeactivated', version: 1, schema: webhookDeactivated },
  { type: 'WebhookStructureRedetermining', version: 1, schema: webhookRef },
  { type: 'WebhookStructureDetermined', version: 1, schema: structureDetermined },
  { type: 'WebhookDeleted', version: 1, schema: webhookRef },
  { type: 'WebhookKeyAssigned', version: 1, schema: keyAssigned },
  {
    type: 'WebhookRequestReceived',
    version: 2,
    schema: requestReceived,
    upcasters: {
      1: (data) => {
        const stored = requestReceivedV1.parse(data);
        return { ...stored, sequential: stored.sequential ?? false };
      },
    },
  },
  { type: 'WebhookRequestRefused', version: 1, schema: requestRefused },
  { type: 'WebhookRequestErased', version: 1, schema: requestErased },
  { type: 'WebhookQueueItemsRemoved', version: 1, schema: queueItemsRemoved },
  { type: 'WebhookQueueItemFailed', version: 1, schema: queueItemFailed },
  { type: 'ScenarioCreated', version: 1, schema: scenarioCreated },
  { type: 'ScenarioUpdated', version: 1, schema: scenarioUpdated },
  { type: 'ScenarioActivated', version: 1, schema: scenarioRef },
  { type: 'ScenarioDeactivated', version: 1, schema: scenarioDeactivated },
  { type: 'ScenarioDeleted', version: 1, schema: scenarioRef },
  { type: 'ScenarioScheduledRunStarted', version: 1, schema: scheduledRunStarted },
  { type: 'ScenarioScheduledRunEnded', version: 1, schema: scheduledRunEnded },
  { type: 'ScenarioRunStarted', version: 1, schema: runStarted },
  { type: 'ScenarioStepCompleted', version: 1, schema: stepCompleted },
  { type: 'ScenarioStepsCompleted', version: 1, schema: stepsCompleted },
  { type: 'WebhookResponseReady', version: 1, schema: responseReady },
  { type: 'ScenarioRunSucceeded', version: 1, schema: runSucceeded },
  { type: 'ScenarioRunErrored', version: 1, schema: runErrored },
  { type: 'ScenarioRunFailed', version: 1, schema: runFailed },
  { type: 'ScenarioRunParked', version: 1, schema: runParked },
  { type: 'RunBacklogHeld', version: 1, schema: runBacklogHeld },
];
