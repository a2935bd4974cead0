import { MAX_SHOWN_VALUE_CHARS } from '../../contracts/api/ai';
import { parseValueAnswer, parseVerdictAnswer } from '../../contracts/ai-output';
import type { AiJobItem } from '../../contracts/events/ai';
import type { FieldValue } from '../../contracts/events/records';
import { PlatformError } from '../../contracts/errors';
import { isPersonalField, type FieldDefinition } from '../../contracts/fields';
import { streamName } from '../../contracts/streams';
import type { CompletionRequest } from '../../infra/ai/language-model/port';
import type { CommandReads } from '../../infra/read-store/command-reads';
import type { Logger } from '../../infra/logging';
import { aiJobDecider, type AiJobState } from './domain/ai-job';
import type { AttributesState } from '../kit/attributes';
import { writeComputedValue } from '../records/commands';
import { recordDecider } from '../records/domain/record';
import { withCommandId, type CommandOrigin, type CommandHandler } from '../kit/handler';
import type { IdAllocator } from '../kit/id-allocator';
import { requestHash, type IdempotencyKeys } from '../kit/idempotency';
import { OneAtATime } from '../kit/one-at-a-time';
import { activeConfiguration, configurationField, validationResultDecider } from './configurations';
import type { AiSlots } from './ai-slots';
import { ReservationBlock, type MeteredAnswer, type MeteredModel } from './metered-model';
import { recordReferences, transformRequest, validationRequest } from './requests';

/** Outcomes are appended to the job a few at a time: at most this many per event, at least every 200 ms. */
const ITEMS_PER_EVENT = 50;
const FLUSH_MS = 200;
/** Attempts per record while the model is rate limited, unavailable or slow. */
const ATTEMPTS_PER_RECORD = 5;
/** Records one reservation of a job covers (see `ReservationBlock`). */
const RECORDS_PER_RESERVATION = 16;

export interface AiJobsOptions {
  readonly handler: CommandHandler;
  readonly ids: IdAllocator;
  readonly idempotency: IdempotencyKeys;
  readonly model: MeteredModel;
  readonly slots: AiSlots;
  readonly reads: Pick<CommandReads, 'latestValidationResult' | 'runningAiJobs'>;
  readonly now: () => Date;
  readonly logger: Logger;
  /** Model calls one job makes at once. */
  readonly concurrency: number;
  /**
   * How long a process holds a job it runs without saying so again (it renews at a third of it): another
   * process takes an unfinished job over only once its lease has run out, so two never run one job.
   */
  readonly leaseMs: number;
}

export interface StartJob {
  readonly tenant: string;
  readonly jobId: number;
  readonly kind: 'transform' | 'validation';
  readonly entityId: number;
  readonly ids: readonly number[];
  readonly context: CommandOrigin;
  /** The command id of the request that starts it (a repeat with the same Idempotency-Key starts nothing). */
  readonly commandId: string;
}

/** What a job works from: its configuration, and the field it writes or checks. */
interface JobSetting {
  readonly configuration: AttributesState;
  readonly field: FieldDefinition;
  /** Every field of the module, for the record updates' checks. */
  readonly fields: readonly FieldDefinition[];
}

/**
 * Runs execute jobs in this process: each record's model call takes a fair slot (AiSlots), each outcome is
 * kept on the job as it finishes, and a job cut short goes on from its last kept outcome when it is run again.
 * Record changes and validation results are named by the job and the record, so running a record twice writes
 * once; answers are kept by what was asked, so asking twice spends once.
 */
export class AiJobs {
  private readonly running = new Map<string, Promise<AiJobState>>();
  private readonly appends = new OneAtATime();
  private stopping = new AbortController();
  /** This process, as the owner of the jobs it runs. */
  private readonly owner = crypto.randomUUID();
  private resumeTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: AiJobsOptions) {}

  /** Starts the job (or finds it started) and runs it; resolves with the job once every record has its outcome. */
  async start(job: StartJob): Promise<{ state: AiJobState; done: Promise<AiJobState> }> {
    const stream = jobStream(job.tenant, job.jobId);
    const started = await this.options.handler.handle(
      stream,
      aiJobDecider,
      {
        kind: 'StartJob',
        jobId: job.jobId,
        job: job.kind,
        entityId: job.entityId,
        ids: job.ids,
        userId: job.context.actor.userId,
        credentialId: job.context.actor.credentialId ?? null,
        concurrency: this.options.concurrency,
        now: this.options.now(),
      },
      withCommandId(job.context, job.commandId),
      { mayBeRepeat: true },
    );
    return { state: started.state, done: this.run(job.tenant, job.jobId, job.context) };
  }

  /** Runs a job to its end (once in this process however often asked). */
  run(tenant: string, jobId: number, context: CommandOrigin, takeOver = false): Promise<AiJobState> {
    const key = `${tenant}.${jobId}`;
    const known = this.running.get(key);
    if (known) return known;
    const running = this.runToEnd(tenant, jobId, context, takeOver).finally(() => this.running.delete(key));
    this.running.set(key, running);
    // Whoever started it may have stopped waiting: a failure is logged here, and the job stays resumable.
    running.catch((error: unknown) =>
      this.options.logger.error({ err: error, tenant, jobId }, 'an AI job stopped before its end'),
    );
    return running;
  }

  /**
   * Goes on with the jobs a stopped process left unfinished (each from its last kept outcome). Records it was
   * working on are run again: their writes are named by the job, and their answers kept, so nothing is written
   * or spent twice.
   */
  async resumeUnfinished(force = false): Promise<number> {
    const unfinished = await this.options.reads.runningAiJobs(10_000);
    let resumed = 0;
    for (const { tenant, jobId } of unfinished) {
      if (this.running.has(`${tenant}.${jobId}`)) continue;
      const { job } = await this.current(tenant, jobId);
      const leased = job.lease !== null && job.lease.until > this.options.now().getTime();
      if (job.status !== 'running' || (leased && !force)) continue;
      resumed++;
      this.run(
        tenant,
        jobId,
        {
          tenant,
          actor: { userId: job.userId, ...(job.credentialId !== null && { credentialId: job.credentialId }) },
          correlationId: `aiJob:${jobId}`,
          causationId: `aiJob:${jobId}:resume`,
        },
        force,
      ).catch(() => undefined);
    }
    return resumed;
  }

  /**
   * Resumes unfinished jobs now and every half lease (a process that died leaves its jobs to the others once
   * their leases run out). `soleProcess`: this process is the whole platform, so the jobs' leases at its start
   * are its own from before a crash, and it takes them at once.
   */
  startResuming(soleProcess: boolean): void {
    const sweep = (force: boolean) =>
      this.resumeUnfinished(force)
        .then((resumed) => {
          if (resumed > 0) this.options.logger.info({ resumed }, 'resumed unfinished AI jobs');
        })
        .catch((error: unknown) => this.options.logger.error({ err: error }, 'resuming AI jobs failed'));
    void sweep(soleProcess);
    this.resumeTimer = setInterval(() => void sweep(false), this.options.leaseMs / 2);
    this.resumeTimer.unref();
  }

  /** The job as it is now, and the position of its last event (404 when there is none). */
  async current(tenant: string, jobId: number): Promise<{ job: AiJobState; position: bigint | undefined }> {
    const { state, position } = await this.options.handler.load(jobStream(tenant, jobId), aiJobDecider);
    if (state.status === 'none') throw new PlatformError('not_found', `AI job ${jobId} not found`);
    return { job: state, position };
  }

  /** Stops taking records; calls under way are cut, their records stay without an outcome until a resume. */
  async stop(): Promise<void> {
    clearInterval(this.resumeTimer);
    this.stopping.abort(new Error('the platform is stopping'));
    await Promise.allSettled([...this.running.values()]);
    this.stopping = new AbortController();
  }

  private async runToEnd(
    tenant: string,
    jobId: number,
    context: CommandOrigin,
    takeOver: boolean,
  ): Promise<AiJobState> {
    const stream = jobStream(tenant, jobId);
    const before = (await this.options.handler.load(stream, aiJobDecider)).state;
    if (before.status !== 'running') return before;
    const lease = (force = false, ttlMs = this.options.leaseMs) =>
      this.appends.run(stream, () =>
        this.options.handler.handle(
          stream,
          aiJobDecider,
          { kind: 'LeaseJob', owner: this.owner, now: this.options.now(), ttlMs, force },
          withCommandId(context, crypto.randomUUID()),
        ),
      );
    let job: AiJobState;
    try {
      // The job as it is once this process holds it (a process before may have gone on meanwhile).
      job = (await lease(takeOver)).state;
    } catch (error) {
      // Another process runs it.
      if (error instanceof PlatformError && error.kind === 'conflict') return before;
      throw error;
    }
    if (job.status !== 'running') return job;
    const pending = job.ids.filter((id) => !job.items.has(id));
    let setting: JobSetting | PlatformError;
    try {
      setting = await this.settingOf(tenant, job);
    } catch (error) {
      if (!(error instanceof PlatformError)) throw error;
      setting = error;
    }

    const buffer: AiJobItem[] = [];
    /** Appends the outcomes waiting; when that fails they wait for the next flush (the final one throws). */
    const flush = async (final = false): Promise<void> => {
      const items = buffer.splice(0, buffer.length);
      if (items.length === 0) return;
      try {
        await this.appends.run(stream, () =>
          this.options.handler.handle(
            stream,
            aiJobDecider,
            { kind: 'RecordItems', items },
            withCommandId(context, crypto.randomUUID()),
          ),
        );
      } catch (error) {
        buffer.unshift(...items);
        if (final) throw error;
        this.options.logger.warn({ err: error, tenant, jobId }, 'keeping AI job outcomes failed; retrying');
      }
    };
    const flushing = new Set<Promise<void>>();
    const track = (promise: Promise<void>) => {
      const tracked = promise.finally(() => flushing.delete(tracked));
      flushing.add(tracked);
    };
    const keep = (item: AiJobItem) => {
      buffer.push(item);
      if (buffer.length >= ITEMS_PER_EVENT) track(flush());
    };
    const timer = setInterval(() => track(flush()), FLUSH_MS);
    // Stopped with the process, or when the lease is lost (another process took the job over).
    const leaseLost = new AbortController();
    const signal = AbortSignal.any([this.stopping.signal, leaseLost.signal]);
    const renewal = setInterval(() => {
      lease().catch((error: unknown) => leaseLost.abort(error));
    }, this.options.leaseMs / 3);
    const heldFor = `aiJob:${jobId}`;
    const block = new ReservationBlock(tenant, context, RECORDS_PER_RESERVATION, heldFor);

    try {
      let next = 0;
      const worker = async () => {
        while (next < pending.length && !signal.aborted) {
          const recordId = pending[next++]!;
          if (setting instanceof PlatformError) {
            keep({ recordId, status: 'failed', reason: setting.message, tokens: 0, cached: false });
            continue;
          }
          const release = await this.options.slots.acquire(tenant, job.credentialId ?? `user:${job.userId}`);
          try {
            if (signal.aborted) return;
            keep(await this.runRecord(tenant, job, setting, recordId, context, signal, block));
          } catch (error) {
            if (signal.aborted) return;
            keep(failure(recordId, error));
          } finally {
            release();
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(job.concurrency, pending.length) }, worker));
    } finally {
      clearInterval(timer);
      clearInterval(renewal);
      await Promise.allSettled([...flushing]);
      try {
        await flush(true);
      } finally {
        // What the block still holds is let go (or lapses, should the store not answer now).
        await this.options.model.closeBlock(block).catch(() => undefined);
        // Stopping: the lease ends now, so another process goes on with the job at its next look.
        if (this.stopping.signal.aborted) await lease(false, 0).catch(() => undefined);
      }
    }
    if (signal.aborted) return (await this.options.handler.load(stream, aiJobDecider)).state;
    // Every record has its outcome: nothing of the job's is under way anywhere, so what a process that died
    // while running it had reserved is let go now (before the job shows finished) rather than when it lapses.
    await this.options.model
      .releaseHeldFor({ tenant, context }, heldFor)
      .catch((error: unknown) =>
        this.options.logger.warn({ err: error, tenant, jobId }, 'letting go of AI job reservations failed'),
      );
    const finished = await this.appends.run(stream, () =>
      this.options.handler.handle(
        stream,
        aiJobDecider,
        { kind: 'FinishJob', now: this.options.now() },
        { ...context, commandId: `${jobId}:finish` },
        { mayBeRepeat: true },
      ),
    );
    return finished.state;
  }

  /** The configuration as it is now, and its field (a job whose configuration or field is gone fails each record). */
  private async settingOf(tenant: string, job: AiJobState): Promise<JobSetting> {
    const configuration = await activeConfiguration(this.options.handler, job.kind, tenant, job.entityId);
    return { configuration, ...(await configurationField(this.options.handler, tenant, configuration)) };
  }

  private async runRecord(
    tenant: string,
    job: AiJobState,
    setting: JobSetting,
    recordId: number,
    context: CommandOrigin,
    signal: AbortSignal,
    block: ReservationBlock,
  ): Promise<AiJobItem> {
    const { configuration, field } = setting;
    const stream = streamName('record', tenant, recordId);
    const record = (await this.options.handler.load(stream, recordDecider)).state;
    const moduleId = configuration.attributes.moduleId as number;
    if (record.status !== 'active' || record.moduleId !== moduleId)
      return {
        recordId,
        status: 'failed',
        reason:
          record.status === 'active'
            ? `record ${recordId} is not in module ${moduleId}`
            : `record ${recordId} not found`,
        tokens: 0,
        cached: false,
      };
    const current = record.fields[field.key] ?? null;
    const references = recordReferences(record, field);
    const purpose = {
      configuration: { kind: job.kind, entityId: job.entityId },
      userId: context.actor.userId,
      recordId,
    };
    const attributes = configuration.attributes;
    // The transform's own actor in the record's history: the transform, for the user who ran it.
    const actor = { userId: context.actor.userId, credentialId: `${job.kind}:${job.entityId}` };
    const ask = (request: CompletionRequest) =>
      this.options.model.complete({
        tenant,
        purpose: {
          ...purpose,
          operation: job.kind === 'transform' ? 'transform-execute' : 'validation-execute',
        },
        request,
        attempts: ATTEMPTS_PER_RECORD,
        keptFor: `aiJob:${job.jobId}:${recordId}`,
        forRecord: recordId,
        context: { ...context, actor },
        block,
      });
    const failedAnswer = (reason: string, answer: MeteredAnswer): AiJobItem => ({
      recordId,
      status: 'failed',
      reason,
      tokens: answer.tokens,
      cached: answer.cached,
    });

    if (job.kind === 'transform') {
      if (attributes.onlyEmpty === true && !isEmpty(current))
        return { recordId, status: 'skipped', reason: 'the field has a value', tokens: 0, cached: false };
      const answer = await ask(transformRequest(attributes, field, references, signal));
      const parsed = parseValueAnswer(answer.text, field);
      if (!parsed.ok) return failedAnswer(parsed.reason, answer);
      const value = parsed.value as FieldValue;
      if (JSON.stringify(value) === JSON.stringify(current))
        return {
          recordId,
          status: 'unchanged',
          ...shown(value, field),
          tokens: answer.tokens,
          cached: answer.cached,
        };
      await writeComputedValue(
        this.options.handler,
        { ...context, actor, commandId: `aiJob:${job.jobId}:${recordId}` },
        recordId,
        { fieldKey: field.key, value, schema: setting.fields },
      );
      return {
        recordId,
        status: 'done',
        ...shown(value, field),
        tokens: answer.tokens,
        cached: answer.cached,
      };
    }

    const request = validationRequest(attributes, field, record, references, signal);
    const answer = await ask(request);
    const parsed = parseVerdictAnswer(answer.text);
    if (!parsed.ok) return failedAnswer(parsed.reason, answer);
    // Kept answers carry the digest of what was asked: the same digest is the same rule, value and model.
    const inputDigest = answer.digest ?? null;
    const latest = await this.options.reads.latestValidationResult(tenant, job.entityId, recordId);
    const verdict = { valid: parsed.value.valid, reason: parsed.value.reason };
    if (latest !== null && latest.inputDigest === inputDigest && latest.source === 'ai')
      return {
        recordId,
        status: 'unchanged',
        value: verdict,
        validationResultId: latest.id,
        tokens: answer.tokens,
        cached: answer.cached,
      };
    const written = {
      valid: verdict.valid,
      reason: verdict.reason,
      source: 'ai',
      checkedValue: current,
      checkedAt: this.options.now().toISOString(),
      inputDigest,
    };
    const commandId = `aiJob:${job.jobId}:${recordId}`;
    let validationResultId: number;
    if (latest !== null) {
      validationResultId = latest.id;
      await this.options.handler.handle(
        streamName('columnDataValidationResult', tenant, latest.id),
        validationResultDecider,
        { kind: 'Update', attributes: written },
        { ...context, actor, commandId },
        { mayBeRepeat: true },
      );
    } else {
      // Named by the job and the record: a job run again after a crash finds the result it made.
      const identity = await this.options.idempotency.identify(
        tenant,
        `aiJob:${job.jobId}`,
        `record:${recordId}`,
        () => requestHash('POST', '/ai/column-data-validation-result', { recordId }),
        () => this.options.ids.next(tenant, 'columnDataValidationResult'),
      );
      validationResultId = identity.entityId!;
      await this.options.handler.handle(
        streamName('columnDataValidationResult', tenant, validationResultId),
        validationResultDecider,
        {
          kind: 'Create',
          id: validationResultId,
          attributes: {
            validationId: job.entityId,
            recordId,
            fieldId: field.fieldId,
            moduleId: record.moduleId,
            severity: attributes.severity,
            ...written,
          },
        },
        { ...context, actor, commandId: identity.commandId },
        { mayBeRepeat: true },
      );
    }
    return {
      recordId,
      status: 'done',
      value: verdict,
      validationResultId,
      tokens: answer.tokens,
      cached: answer.cached,
    };
  }
}

function jobStream(tenant: string, jobId: number): string {
  return streamName('aiJob', tenant, jobId);
}

/** A value as a job's outcome keeps it: a long text cut (the record holds it whole, and a job may have 10,000). */
/**
 * The value an item shows: none for a personal field (the job's items are not the record's, so they could not
 * be erased with it; the value is in the record), else the value, a long text cut.
 */
function shown(
  value: FieldValue,
  field: Pick<FieldDefinition, 'type' | 'personal'>,
): { value?: FieldValue; cut?: true } {
  if (isPersonalField(field)) return {};
  return typeof value === 'string' && value.length > MAX_SHOWN_VALUE_CHARS
    ? { value: value.slice(0, MAX_SHOWN_VALUE_CHARS), cut: true }
    : { value };
}

function isEmpty(value: unknown): boolean {
  return value === null || value === '' || (Array.isArray(value) && value.length === 0);
}

function failure(recordId: number, error: unknown): AiJobItem {
  const reason = error instanceof Error ? error.message : String(error);
  return { recordId, status: 'failed', reason, tokens: 0, cached: false };
}
