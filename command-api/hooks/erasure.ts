import type { RecordedEvent } from '../../contracts/events/envelope';
import type {
  ScenarioRunEvent,
  WebhookRequestErasedData,
  WebhookRequestReceivedData,
} from '../../contracts/events/integrator';
import { PlatformError } from '../../contracts/errors';
import { childId } from '../../contracts/ids';
import { fileBlobKeysOf, MAX_RUNS_PER_REQUEST } from '../../contracts/integrator';
import { personalSubject } from '../../contracts/personal-data';
import { orderedStreamName, streamName } from '../../contracts/streams';
import type { CommandDeps } from '../deps';
import { deleteBlobs } from '../kit/blobs';
import { withCommandId, type CommandContext } from '../kit/handler';
import { hookQueueDecider } from './domain/hook-queue';
import { webhookDecider } from './domain/webhook';
import { requestErasureDecider, requestErasureStream } from './domain/request-erasure';

export type RequestErasureDeps = Pick<CommandDeps, 'handler' | 'personalData' | 'blobs' | 'logger'>;

/**
 * The runs whose record steps wrote `events`: a record step acts with the scenario's credential and the run's
 * id as its correlation and causation.
 */
export function runsThatWrote(events: readonly Pick<RecordedEvent, 'metadata'>[]): string[] {
  const runs = new Set<string>();
  for (const { metadata } of events)
    if (
      metadata.actor.credentialId?.startsWith('scenario:') === true &&
      metadata.causationId === metadata.correlationId
    )
      runs.add(metadata.causationId);
  return [...runs];
}

type RunStartedData = Extract<ScenarioRunEvent, { type: 'ScenarioRunStarted' }>['data'];

interface RunRecorded {
  readonly requestId: string;
  readonly webhookId: number;
  readonly run: WebhookRequestErasedData['runs'][number];
  readonly scheduledFailure: boolean;
  readonly blobKeys: readonly string[];
}

/** What erasing one request needs to know besides its runs. */
interface RequestToErase {
  readonly requestId: string;
  readonly webhookId: number;
  readonly reason: string;
  /** It was refused: its log shows the refusal's text. */
  readonly refused: boolean;
  /** Blobs of its data its runs may not name (those of a request that never ran). */
  readonly blobKeys: readonly string[];
  /** The blob a large request's payload is in, which names its files: deleted after them. */
  readonly payloadBlobKey?: string;
}

/**
 * Erases the requests the runs `runIds` ran for (the hook and mail requests a record's data came from): each
 * request's key is destroyed (its body, bundle and its runs' outputs and messages are sealed under it), its
 * erasure recorded, and the blobs of its payload and files deleted. Repeating it finishes what a try before left.
 * Answers the requests erased.
 */
export async function eraseRequestsOfRuns(
  deps: RequestErasureDeps,
  context: CommandContext,
  runIds: readonly string[],
  reason: string,
): Promise<string[]> {
  const requests = new Map<string, number>();
  for (const runId of runIds) {
    const recorded = await runRecorded(deps, context.tenant, runId);
    if (recorded !== null) requests.set(recorded.requestId, recorded.webhookId);
  }
  for (const [requestId, webhookId] of requests)
    await eraseRequest(deps, context, { requestId, webhookId, reason, refused: false, blobKeys: [] });
  return [...requests.keys()];
}

/**
 * Erases one request hook `webhookId` received, whatever became of it (run, waiting in the queue, refused),
 * on an administrator's word: as `eraseRequestsOfRuns` does, and a request still queued leaves the queue (its
 * data is gone: nothing is left to run). Throws `not_found` when the hook has no such request. Answers the
 * ids of its runs, and the position its events reached (none when it was erased before).
 */
export async function eraseHookRequest(
  deps: RequestErasureDeps,
  context: CommandContext,
  webhookId: number,
  requestId: string,
  reason: string,
): Promise<{ runs: string[]; position: bigint | undefined }> {
  const hook = await deps.handler.load(streamName('webhook', context.tenant, webhookId), webhookDecider);
  // A deleted hook's requests are still its senders' data: only a hook that never was is not found.
  if (hook.state.status === 'none') throw new PlatformError('not_found', `webhook ${webhookId} not found`);
  const stored = await storedRequest(deps, context.tenant, webhookId, requestId);
  if (stored === null)
    throw new PlatformError('not_found', `webhook ${webhookId} has no request ${requestId}`, {
      webhookId,
      requestId,
    });
  const erased = await eraseRequest(deps, context, {
    requestId,
    webhookId,
    reason,
    refused: stored.refused,
    blobKeys: stored.blobKeys,
    ...(stored.payloadBlobKey !== undefined && { payloadBlobKey: stored.payloadBlobKey }),
  });
  if (stored.queueStream === undefined) return erased;
  // The decider leaves the queue as it is when the request is no longer in it.
  const unqueued = await deps.handler.handle(
    stored.queueStream,
    hookQueueDecider,
    { kind: 'RemoveItems', webhookId, requestIds: [requestId], reason: 'deleted' },
    withCommandId(context, childId(context.commandId, `:unqueue-erased:${requestId}`)),
  );
  return { runs: erased.runs, position: unqueued.position ?? erased.position };
}

/**
 * Deletes the request's blobs (first: a repeat after a failure later on still finds their keys, which the
 * request's own events hold sealed), destroys its key, records the erasure. Answers the ids of its runs, and
 * the position of the erasure's event (none when it was recorded before).
 */
async function eraseRequest(
  deps: RequestErasureDeps,
  context: CommandContext,
  request: RequestToErase,
): Promise<{ runs: string[]; position: bigint | undefined }> {
  const { requestId, webhookId } = request;
  const runs: RunRecorded[] = [];
  for (let attempt = 1; attempt <= MAX_RUNS_PER_REQUEST; attempt++) {
    const recorded = await runRecorded(
      deps,
      context.tenant,
      attempt === 1 ? requestId : `${requestId}~${attempt}`,
    );
    if (recorded === null) break;
    runs.push(recorded);
  }
  const whatToDo = "could not delete an erased request's blob; delete it by hand";
  const payload = request.payloadBlobKey;
  await deleteBlobs(
    deps,
    [...request.blobKeys, ...runs.flatMap((recorded) => recorded.blobKeys)].filter((key) => key !== payload),
    whatToDo,
  );
  if (payload !== undefined) await deleteBlobs(deps, [payload], whatToDo);
  await deps.personalData.erase(personalSubject('hookRequest', context.tenant, requestId), Date.now());
  const recorded = await deps.handler.handle(
    requestErasureStream(context.tenant, requestId),
    requestErasureDecider,
    {
      kind: 'EraseRequest',
      erasure: {
        webhookId,
        requestId,
        reason: request.reason,
        ...(request.refused && { refused: true }),
        runs: runs.map((recorded) => recorded.run),
        queueFailures: runs.some((recorded) => recorded.scheduledFailure),
      },
    },
    withCommandId(context, childId(context.commandId, `:erase-request:${requestId}`)),
  );
  return { runs: runs.map((run) => run.run.runId), position: recorded.position };
}

/** What a request's own event says of it, for its erasure. */
interface StoredRequest {
  readonly refused: boolean;
  /** The blobs of the files it brought. */
  readonly blobKeys: readonly string[];
  /** The blob of a large request's payload. */
  readonly payloadBlobKey?: string;
  /** The queue stream it was received in, when it was queued. */
  readonly queueStream?: string;
}

/**
 * The request `requestId` of hook `webhookId`, from the stream it was received in: its own (a request run at
 * once, or refused), its hook's ordered requests (a sequential scenario's), or its hook's queue. Null when the
 * hook received no such request.
 */
async function storedRequest(
  deps: RequestErasureDeps,
  tenant: string,
  webhookId: number,
  requestId: string,
): Promise<StoredRequest | null> {
  const queueStream = streamName('hookQueue', tenant, webhookId);
  for (const stream of [
    streamName('hookRequest', tenant, requestId),
    orderedStreamName('hookRequest', tenant, String(webhookId), requestId),
    queueStream,
  ])
    // As stored (a queue holds many requests: only this one is opened).
    for await (const event of deps.personalData.sealed.readStream(stream)) {
      const data = event.data as { requestId?: unknown; webhookId?: unknown };
      if (data.requestId !== requestId || data.webhookId !== webhookId) continue;
      if (event.type === 'WebhookRequestRefused') return { refused: true, blobKeys: [] };
      if (event.type !== 'WebhookRequestReceived') continue;
      const received = (await deps.personalData.reveal(event)).data as WebhookRequestReceivedData;
      return {
        refused: false,
        blobKeys: await fileBlobKeys(deps, received),
        ...(received.payloadBlobKey !== undefined && { payloadBlobKey: received.payloadBlobKey }),
        ...(stream === queueStream && { queueStream }),
      };
    }
  return null;
}

/** The blobs of the files a received request brought (a large one names them in its payload's blob). */
async function fileBlobKeys(
  deps: RequestErasureDeps,
  received: WebhookRequestReceivedData,
): Promise<string[]> {
  if (received.payloadBlobKey === undefined) return fileBlobKeysOf(received.request);
  const content = await deps.blobs.get(received.payloadBlobKey);
  // Gone: an erasure before deleted it, after the files it named.
  if (content === null) return [];
  const chunks: Buffer[] = [];
  for await (const chunk of content) chunks.push(chunk as Buffer);
  return fileBlobKeysOf(
    (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request?: unknown }).request,
  );
}

/** What a run's stream says of it (its request, what it recorded), or null when there is no such run. */
async function runRecorded(
  deps: RequestErasureDeps,
  tenant: string,
  runId: string,
): Promise<RunRecorded | null> {
  let started: RunStartedData | undefined;
  let operations = 0;
  let failed = false;
  let responded = false;
  // As stored: what is read here is never sealed, and a run erased before reads the same.
  for await (const event of deps.personalData.sealed.readStream(streamName('scenarioRun', tenant, runId))) {
    const data = event.data as { steps?: unknown[] };
    if (event.type === 'ScenarioRunStarted') started = event.data as RunStartedData;
    else if (event.type === 'ScenarioStepCompleted') operations += 1;
    else if (event.type === 'ScenarioStepsCompleted') operations += data.steps?.length ?? 0;
    else if (event.type === 'ScenarioRunFailed') failed = true;
    else if (event.type === 'WebhookResponseReady') responded = true;
  }
  if (started === undefined) return null;
  return {
    requestId: started.requestId,
    webhookId: started.webhookId,
    run: { runId, operations, failed, responded },
    scheduledFailure: failed && started.trigger === 'scheduled',
    blobKeys: started.blobKeys ?? [],
  };
}
