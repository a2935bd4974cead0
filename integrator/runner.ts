import type { WebhookRequestReceivedData } from '../contracts/events/integrator';
import { PlatformError } from '../contracts/errors';
import { ERASED_VALUE } from '../contracts/personal-data';
import {
  fileBlobKeysOf,
  MAX_RUN_OPERATIONS,
  type HookResponse,
  type ScenarioStep,
} from '../contracts/integrator';
import { MappingError, type ExpressionEvaluator } from '../languages/mapping/mapping';
import { streamName } from '../contracts/streams';
import { scenarioDecider } from '../command-api/scenarios/domain/scenario';
import {
  scenarioRunDecider,
  type RunRecordCommand,
  type ScenarioRunState,
} from '../command-api/scenarios/domain/scenario-run';
import type { CommandHandler } from '../command-api/kit/handler';
import type { IdAllocator } from '../command-api/kit/id-allocator';
import type { IdempotencyKeys } from '../command-api/kit/idempotency';
import type { BlobStore } from '../infra/blob-store/port';
import type { FairSlots } from '../infra/fair-slots';
import type { Logger } from '../infra/logging';
import {
  computeStep,
  isComputeStep,
  isRecordStep,
  replayStep,
  StepFailure,
  type StepResult,
  type StepScope,
} from './steps';
import { runHttpStep } from './http-step';
import type { OutboundHttp } from '../infra/outbound/port';
import type { ReadModels } from '../infra/read-store/read-models';
import type { UploadLimits } from '../command-api/deps';
import { walkSteps, type Perform } from './walk';
import { RecordSteps, scenarioActor, type RecordStepAt } from './record-steps';

export interface RunnerDeps {
  readonly handler: CommandHandler;
  readonly ids: IdAllocator;
  readonly idempotency: IdempotencyKeys;
  readonly blobs: BlobStore;
  readonly logger: Logger;
  readonly now: () => Date;
  /** Calls of HTTP request steps, through the SSRF guard. */
  readonly outbound: OutboundHttp;
  /** The read models a search step looks in. */
  readonly readModels: ReadModels;
  /** What a file attached to a record may be. */
  readonly uploads: UploadLimits;
  /** Where the scenarios' expressions are evaluated: apart, so one cannot stop the platform. */
  readonly expressions: ExpressionEvaluator;
  /** Runs at once in this process, and for one system: a system's many runs cannot hold every slot. */
  readonly slots: FairSlots;
}

/** An accepted request and the run it is for. */
export interface ReceivedRequest {
  readonly tenant: string;
  /**
   * The run's id: the request's (its event's) id, so a redelivered request never runs twice; a queued
   * request run again after a failed scheduled run gets `<id>~<attempt>` (see `queuedRunId`).
   */
  readonly runId: string;
  readonly attempt: number;
  readonly data: WebhookRequestReceivedData;
}

/** How the run ended (also when it had ended before: a repeat reports the first outcome). */
export interface RunResult {
  readonly status: 'succeeded' | 'failed' | 'skipped';
  /** Why it failed. */
  readonly error?: string;
}

/** Operations recorded per write of a long run. */
const FLUSH_EVERY = 500;
/**
 * What one run's step outputs may add up to, in characters of JSON: a run holds its outputs while it goes (an
 * aggregator gathers every item's) and records them (the run's read model keeps them in one document), so many
 * large outputs must not add up to the platform's memory. One output is at most an expression's result
 * (EXPRESSION_MAX_RESULT_CHARS).
 */
const MAX_RUN_OUTPUT_CHARS = 8 * 1024 * 1024;
/** Output characters recorded per write: a write of large outputs stays bounded. */
const FLUSH_CHARS = 512 * 1024;

/** A step failed: the run ends there (not retried, unlike infrastructure errors). */
class RunStopped extends Error {
  constructor(
    readonly path: string,
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Runs a scenario for one request, step by step, recording each step in the run's stream: a run that was
 * interrupted (a crash, a rebalance) continues after its last recorded step with the same variables, and a
 * step that changes records does so under a command id of the run and step, so it happens once.
 */
export class ScenarioRunner {
  private readonly recordSteps: RecordSteps;

  constructor(private readonly deps: RunnerDeps) {
    this.recordSteps = new RecordSteps(deps);
  }

  async run(request: ReceivedRequest, trigger: 'instant' | 'scheduled'): Promise<RunResult> {
    if (request.data.scenarioId === null) return { status: 'skipped' };
    const release = await this.deps.slots.acquire(request.tenant);
    try {
      return await this.runHeld(request, trigger);
    } finally {
      release();
    }
  }

  private async runHeld(request: ReceivedRequest, trigger: 'instant' | 'scheduled'): Promise<RunResult> {
    const { tenant, data, runId } = request;
    if (data.scenarioId === null) return { status: 'skipped' };
    const runStream = streamName('scenarioRun', tenant, runId);
    const loaded = await this.deps.handler.load(runStream, scenarioRunDecider);
    const run = loaded.state;
    if (run.status === 'succeeded') return { status: 'succeeded' };
    if (run.status === 'failed') return { status: 'failed', error: run.error ?? 'the run failed' };
    // What the run did, written at once when it ends (or when a response must go out before the end): fewer
    // writes per run. Each write is named by the stream position it starts at, so an integrator that does the
    // same write again (a redelivery racing the first) is recognised as a repeat.
    let nextRevision = loaded.revision === undefined ? 0n : loaded.revision + 1n;
    let recorded: RunRecordCommand[] = [];
    const record = (command: RunRecordCommand): void => void recorded.push(command);
    const flush = async (): Promise<ScenarioRunState | undefined> => {
      if (recorded.length === 0) return undefined;
      const commands = recorded;
      recorded = [];
      const result = await this.deps.handler.handle(
        runStream,
        scenarioRunDecider,
        { kind: 'Batch', commands },
        {
          tenant,
          actor: scenarioActor(data.scenarioId!, null),
          commandId: `${runId}:at:${nextRevision}`,
          correlationId: runId,
          causationId: runId,
        },
      );
      if (result.revision !== undefined) nextRevision = result.revision + 1n;
      return result.state;
    };
    // A payload no longer stored (erased with a record made from it) fails the run, as a step's failure would.
    const payload = await this.payloadOf(data).catch((error: unknown) => {
      if (error instanceof StepFailure) return error;
      throw error;
    });
    if (run.status === 'none')
      record({
        kind: 'StartRun',
        runId,
        scenarioId: data.scenarioId,
        webhookId: data.webhookId,
        requestId: data.requestId,
        trigger,
        attempt: request.attempt,
        blobKeys: payload instanceof StepFailure ? [] : payload.blobKeys,
        now: this.deps.now(),
      });
    const fail = async (step: number | null, message: string): Promise<RunResult> => {
      record({ kind: 'Fail', runId, requestId: data.requestId, step, message, now: this.deps.now() });
      await flush();
      return { status: 'failed', error: message };
    };
    const scenario = (
      await this.deps.handler.load(streamName('scenario', tenant, data.scenarioId), scenarioDecider)
    ).state;
    if (scenario.status === 'none' || scenario.status === 'deleted')
      return fail(null, `scenario ${data.scenarioId} no longer exists`);
    if (payload instanceof StepFailure) return fail(null, payload.message);
    const { bundle } = payload;

    const expressions: StepScope['expressions'] = (expression, input, context) =>
      this.deps.expressions.evaluate(tenant, expression, input, context);
    let pending: HookResponse | null = null;
    let operation = 0;
    let outputChars = 0;
    let unflushedChars = 0;
    // Each operation in the walk's order: replayed from the run's record when a try before did it, done now
    // otherwise. A step's failure ends the walk with where it happened.
    const perform: Perform = async (step, path, scope, iterations) => {
      const index = operation++;
      let result: StepResult;
      if (index < run.outputs.length) {
        result = replayStep(step, run.outputs[index]);
        outputChars += sizeOf(result.output);
      } else {
        if (index >= MAX_RUN_OPERATIONS)
          throw new RunStopped(path, step.kind, `the run needs more than ${MAX_RUN_OPERATIONS} operations`);
        const started = performance.now();
        const stepScope = { bundle, runId, expressions, ...scope, ...(iterations && { iterations }) };
        result = await this.act(step, path, stepScope, {
          tenant,
          scenarioId: scenario.scenarioId,
          ownerId: scenario.ownerId,
          operation: index,
        });
        const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
        const size = sizeOf(result.output);
        outputChars += size;
        unflushedChars += size;
        if (outputChars > MAX_RUN_OUTPUT_CHARS)
          throw new RunStopped(
            path,
            step.kind,
            `the run's step outputs are more than ${MAX_RUN_OUTPUT_CHARS} characters of JSON in all`,
          );
        record({
          kind: 'CompleteStep',
          runId,
          index,
          stepKind: step.kind,
          output: result.output,
          durationMs,
          path,
        });
        if (step.kind === 'webhookResponse' && scenario.settings.autoCommit) {
          record({
            kind: 'Respond',
            runId,
            requestId: data.requestId,
            response: result.output as HookResponse,
          });
          await flush();
        }
        // A long run keeps what it did as it goes, in bounded writes.
        if (recorded.length >= FLUSH_EVERY || unflushedChars >= FLUSH_CHARS) {
          unflushedChars = 0;
          await flush();
        }
      }
      if (step.kind === 'webhookResponse' && !scenario.settings.autoCommit)
        pending = result.output as HookResponse;
      return result;
    };
    try {
      await walkSteps(scenario.settings.steps, { vars: {}, outputs: {} }, perform);
    } catch (error) {
      if (error instanceof RunStopped)
        return fail(Number.parseInt(error.path, 10), `step ${error.path} (${error.kind}): ${error.message}`);
      return this.afterUnexpected(error, runId, data.requestId, record, flush);
    }
    if (pending !== null && !run.responded)
      record({ kind: 'Respond', runId, requestId: data.requestId, response: pending });
    record({ kind: 'Succeed', runId, requestId: data.requestId, now: this.deps.now() });
    await flush();
    return { status: 'succeeded' };
  }

  /**
   * An error that is neither a step's failure nor a limit: the run keeps what it did and notes the error, and
   * the request is delivered again, until the run's decider says it has been tried long enough (then it has
   * failed, once, with why). When even the note cannot be written (the store is down) nothing is counted.
   */
  private async afterUnexpected(
    error: unknown,
    runId: string,
    requestId: string,
    record: (command: RunRecordCommand) => void,
    flush: () => Promise<ScenarioRunState | undefined>,
  ): Promise<RunResult> {
    const message = error instanceof Error ? error.message : String(error);
    record({ kind: 'NoteError', runId, requestId, message, now: this.deps.now() });
    const state = await flush().catch((noted: unknown) => {
      this.deps.logger.warn({ err: noted, runId }, "the run's error could not be noted");
      return undefined;
    });
    this.deps.logger.warn({ err: error, runId, errors: state?.errors }, 'a run met an unexpected error');
    if (state?.status === 'failed') return { status: 'failed', error: state.error ?? message };
    throw error;
  }

  /** Does one step; a failure of the step (not of the platform) stops the run at `path`. */
  private async act(
    step: ScenarioStep,
    path: string,
    scope: StepScope,
    at: Omit<RecordStepAt, 'scope'>,
  ): Promise<StepResult> {
    try {
      if (isComputeStep(step)) return await computeStep(step, scope);
      if (isRecordStep(step)) return { output: await this.recordSteps.run(step, { ...at, scope }) };
      return { output: await runHttpStep(step, scope, this.deps.outbound) };
    } catch (error) {
      if (
        error instanceof StepFailure ||
        error instanceof MappingError ||
        (error instanceof PlatformError && error.status < 500)
      )
        throw new RunStopped(path, step.kind, error.message);
      throw error;
    }
  }

  /**
   * The bundle, from the event or from the blob a large request was kept in, and the blobs the request's data
   * is in (that blob, and the files it brought).
   */
  private async payloadOf(
    data: WebhookRequestReceivedData,
  ): Promise<{ bundle: unknown; blobKeys: readonly string[] }> {
    // Erased between its arrival and its run: its sealed values read as the placeholder (whatever their type
    // says), which is nothing to run on.
    if ((data.request as unknown) === ERASED_VALUE)
      throw new StepFailure('the request was erased before its run');
    if (data.payloadBlobKey === undefined)
      return { bundle: data.bundle ?? {}, blobKeys: fileBlobKeysOf(data.request) };
    const content = await this.deps.blobs.get(data.payloadBlobKey);
    if (!content) throw new StepFailure('the request payload is no longer stored');
    const chunks: Buffer[] = [];
    for await (const chunk of content) chunks.push(chunk as Buffer);
    const payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      request: unknown;
      bundle: unknown;
    };
    return { bundle: payload.bundle, blobKeys: [data.payloadBlobKey, ...fileBlobKeysOf(payload.request)] };
  }
}

/** The characters of JSON an output takes (as recorded). */
function sizeOf(output: unknown): number {
  return JSON.stringify(output)?.length ?? 0;
}
