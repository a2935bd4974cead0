import type { RecordedEvent } from '../../contracts/events/envelope';
import type { ScenarioRunEvent, WebhookRequestErasedData } from '../../contracts/events/integrator';
import { childId } from '../../contracts/ids';
import { MAX_RUNS_PER_REQUEST } from '../../contracts/integrator';
import { personalSubject } from '../../contracts/personal-data';
import { streamName } from '../../contracts/streams';
import type { CommandDeps } from '../deps';
import { deleteBlobs } from '../kit/blobs';
import { withCommandId, type CommandContext } from '../kit/handler';
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
): Promise<string[]> {
  const requests = new Map<string, number>();
  for (const runId of runIds) {
    const recorded = await runRecorded(deps, context.tenant, runId);
    if (recorded !== null) requests.set(recorded.requestId, recorded.webhookId);
  }
  for (const [requestId, webhookId] of requests) await eraseRequest(deps, context, requestId, webhookId);
  return [...requests.keys()];
}

async function eraseRequest(
  deps: RequestErasureDeps,
  context: CommandContext,
  requestId: string,
  webhookId: number,
): Promise<void> {
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
  await deps.personalData.erase(personalSubject('hookRequest', context.tenant, requestId), Date.now());
  await deps.handler.handle(
    requestErasureStream(context.tenant, requestId),
    requestErasureDecider,
    {
      kind: 'EraseRequest',
      erasure: {
        webhookId,
        requestId,
        runs: runs.map((recorded) => recorded.run),
        queueFailures: runs.some((recorded) => recorded.scheduledFailure),
      },
    },
    withCommandId(context, childId(context.commandId, `:erase-request:${requestId}`)),
  );
  await deleteBlobs(
    deps,
    runs.flatMap((recorded) => recorded.blobKeys),
    "could not delete an erased request's blob; delete it by hand",
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
