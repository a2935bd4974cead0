import { checkpointName, versionedCollection } from '../contracts/read-models';
import type { EventStore, Subscription } from '../infra/event-store/port';
import type { Logger } from '../infra/logging';
import type { ReadStore } from '../infra/read-store/port';
import type { ReadModelChange } from '../contracts/read-model-changes';
import type { RecordedEvent } from '../contracts/events/envelope';
import { deadLetterChange, errorMessage } from './dead-letters';
import { consumeInBatches } from './batched-consumer';
import { coalesceChanges } from './coalesce';
import { runWithRestarts } from './restarts';
import { projectEvent, type Projection } from './projection';

const IDLE_CHECKPOINT_INTERVAL_MS = 1000;

export interface RunnerDeps {
  readonly events: EventStore;
  readonly readStore: ReadStore;
  readonly logger: Logger;
  /** Events per read-store transaction while catching up. */
  readonly batchSize?: number;
  /** The clock of dead letters (tests set it). */
  readonly now?: () => Date;
  /** Told after every batch is applied (and on errors), e.g. to report progress to another thread. */
  readonly onProgress?: (runner: ProjectionRunner) => void;
  /**
   * Told, for each batch applied once live, how long its oldest event took from commit to visible (ms):
   * the write-to-visible lag.
   */
  readonly onVisible?: (projection: string, lagMs: number) => void;
}

/**
 * Feeds one version of a projection from its checkpoint: catch-up, then live. Changes are written in
 * batches, each with the checkpoint in the same `apply` (one transaction on SQLite), so a crash never
 * loses or doubles an event; a batch is written as soon as the subscription has nothing more at hand,
 * which keeps live lag at about one event loop turn.
 *
 * An event the projection cannot apply (`project` throws, or the store refuses its changes while it takes
 * other writes) never stops it: the batch is applied again event by event, and such an event is recorded as
 * a dead letter (dead-letters.ts) in the same write as the checkpoint past it. A store that refuses every
 * write (it is down) fails the run, which restarts from its checkpoint as before.
 */
export class ProjectionRunner {
  /** Every event up to this position has been applied (and checkpointed, or is in the batch being written). */
  private processed = 0n;
  /** Events applied since start (for rebuild progress). */
  applied = 0;
  /** Events recorded as dead letters since start. */
  deadLettered = 0;
  private subscription: Subscription | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private readonly waiters = new Set<{ position: bigint; resolve: () => void }>();
  private lastError: string | undefined;
  private checkpointWrittenAt = 0;
  /** Checkpoint writes, one after another: a late write must never put an older position over a newer one. */
  private checkpointWrites: Promise<void> = Promise.resolve();
  /** A checkpoint-only flush held back by the interval is written by this timer, so other processes see it. */
  private deferredCheckpoint: NodeJS.Timeout | undefined;
  private caughtUpOnce = false;
  private readonly batchSize: number;

  constructor(
    readonly projection: Projection,
    readonly version: number,
    private readonly deps: RunnerDeps,
  ) {
    this.batchSize = deps.batchSize ?? 1000;
  }

  get position(): bigint {
    return this.processed;
  }

  get isCaughtUp(): boolean {
    return this.caughtUpOnce;
  }

  get error(): string | undefined {
    return this.lastError;
  }

  collection = (base: string): string => versionedCollection(base, this.version);

  private get checkpoint(): string {
    return checkpointName(this.projection.name, this.version);
  }

  /**
   * @param withIndexes false for a rebuild: its collections fill faster without secondary indexes, which
   * it builds once, in bulk, when it has caught up (`ensureIndexes`).
   */
  async start(withIndexes = true): Promise<void> {
    if (withIndexes) await this.ensureIndexes();
    const stored = await this.deps.readStore.getCheckpoint(this.checkpoint);
    this.processed = stored === null ? 0n : BigInt(stored);
    this.loop = this.runWithRestarts();
    this.deps.onProgress?.(this);
  }

  async ensureIndexes(): Promise<void> {
    for (const [base, indexes] of Object.entries(this.projection.collections)) {
      for (const index of indexes) await this.deps.readStore.ensureIndex(this.collection(base), index);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.deferredCheckpoint);
    await this.subscription?.close();
    await this.loop;
    await this.writeCheckpoint([], () => this.processed);
  }

  /** Applies `changes` with the checkpoint at `position()` (read when the write runs), after earlier writes. */
  private writeCheckpoint(changes: readonly ReadModelChange[], position: () => bigint): Promise<void> {
    const write = this.checkpointWrites.then(() =>
      this.deps.readStore.apply(changes, { name: this.checkpoint, value: position().toString() }),
    );
    this.checkpointWrites = write.catch(() => undefined);
    this.checkpointWrittenAt = Date.now();
    return write;
  }

  /**
   * Writes the checkpoint of skipped events once the interval has passed, unless a write comes first. Readers
   * in other processes (a query API waiting for `X-Min-Position`) see progress only through the stored
   * checkpoint: without this, a projection whose last events were all skipped would look behind for ever.
   */
  private deferCheckpoint(): void {
    if (this.deferredCheckpoint !== undefined) return;
    const wait = Math.max(0, this.checkpointWrittenAt + IDLE_CHECKPOINT_INTERVAL_MS - Date.now());
    this.deferredCheckpoint = setTimeout(() => {
      this.deferredCheckpoint = undefined;
      if (this.stopped) return;
      this.writeCheckpoint([], () => this.processed).catch((error: unknown) =>
        this.deps.logger.warn(
          { err: error, projection: this.projection.name, version: this.version },
          'writing the checkpoint of skipped events failed; the next batch writes it',
        ),
      );
    }, wait);
    this.deferredCheckpoint.unref();
  }

  /** Resolves true once every event up to `position` is visible in this projection's read model. */
  waitFor(position: bigint, timeoutMs: number): Promise<boolean> {
    if (this.processed >= position) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        position,
        resolve: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        resolve(false);
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  private runWithRestarts(): Promise<void> {
    return runWithRestarts({
      run: () => this.run(),
      isStopped: () => this.stopped,
      initialBackoffMs: 100,
      onFailure: async (error) => {
        this.lastError = error instanceof Error ? error.message : String(error);
        this.deps.onProgress?.(this);
        this.deps.logger.error(
          { err: error, projection: this.projection.name, version: this.version },
          'projection failed; restarting from its checkpoint',
        );
        const stored = await this.deps.readStore.getCheckpoint(this.checkpoint).catch(() => null);
        if (stored !== null) this.processed = BigInt(stored);
      },
    });
  }

  private async run(): Promise<void> {
    this.subscription = this.deps.events.subscribeToAll({
      after: this.processed === 0n ? undefined : this.processed,
      filter: { categories: this.projection.categories },
    });
    if (this.stopped) await this.subscription.close();
    let changes: ReadModelChange[] = [];
    let events: RecordedEvent[] = [];
    /** A batch whose projecting failed is applied event by event. */
    let projectingFailed = false;
    let oldestRecordedAt: string | undefined;
    await consumeInBatches(
      this.subscription,
      {
        add: (event) => {
          events.push(event);
          if (!projectingFailed) {
            try {
              changes.push(...projectEvent(this.projection, event, this.collection));
            } catch {
              projectingFailed = true;
            }
          }
          oldestRecordedAt ??= event.recordedAt;
          this.applied++;
        },
        flush: async (position) => {
          const batch = { changes, events, projectingFailed };
          changes = [];
          events = [];
          projectingFailed = false;
          if (batch.projectingFailed) await this.applyOneByOne(batch.events, position);
          else await this.applyBatch(batch.changes, batch.events, position);
          if (oldestRecordedAt !== undefined && this.caughtUpOnce)
            this.deps.onVisible?.(this.projection.name, Date.now() - Date.parse(oldestRecordedAt));
          oldestRecordedAt = undefined;
          this.advance(position);
        },
        onCaughtUp: () => {
          this.caughtUpOnce = true;
          this.deps.onProgress?.(this);
        },
      },
      this.batchSize,
      this.processed,
    );
  }

  private async applyBatch(
    changes: readonly ReadModelChange[],
    events: readonly RecordedEvent[],
    position: bigint,
  ): Promise<void> {
    // A batch with no changes (the filter skipped everything) only moves the checkpoint: that is kept in
    // memory and written at most once a second (`deferCheckpoint`). Replaying skipped events after a
    // crash changes nothing.
    if (changes.length === 0 && Date.now() - this.checkpointWrittenAt < IDLE_CHECKPOINT_INTERVAL_MS) {
      this.deferCheckpoint();
      return;
    }
    clearTimeout(this.deferredCheckpoint);
    this.deferredCheckpoint = undefined;
    try {
      await this.writeCheckpoint(coalesceChanges(changes), () => position);
    } catch (error) {
      // One event of the batch may be the cause: find out which, event by event. (MongoDB may have applied
      // part of the batch: its writes are position-guarded, so applying them again changes nothing.)
      if (events.length === 0) throw error;
      await this.applyOneByOne(events, position);
    }
  }

  /**
   * Applies each event with the checkpoint at its position; an event that cannot be applied becomes a dead
   * letter. Before it does, the store must show that it takes writes (the checkpoint before the event) and
   * the event must fail a second time: a store that is down, or a passing failure, stops the run instead.
   */
  private async applyOneByOne(events: readonly RecordedEvent[], position: bigint): Promise<void> {
    let before = this.processed;
    for (const event of events) {
      const attempt = async (): Promise<{ error: unknown } | undefined> => {
        try {
          const changes = projectEvent(this.projection, event, this.collection);
          if (changes.length > 0) await this.writeCheckpoint(changes, () => event.position);
          return undefined;
        } catch (error) {
          return { error };
        }
      };
      let failure = await attempt();
      if (failure) {
        // Throws (the run restarts, as it did before dead letters) when the store takes no write at all.
        await this.writeCheckpoint([], () => before);
        failure = await attempt();
      }
      if (failure) await this.deadLetter(event, failure.error);
      before = event.position;
    }
    await this.writeCheckpoint([], () => position);
  }

  private async deadLetter(event: RecordedEvent, error: unknown): Promise<void> {
    const at = this.deps.now?.() ?? new Date();
    await this.writeCheckpoint(
      [deadLetterChange(this.projection.name, this.version, event, error, at)],
      () => event.position,
    );
    this.deadLettered++;
    this.deps.logger.error(
      {
        err: error,
        projection: this.projection.name,
        version: this.version,
        position: event.position.toString(),
        eventId: event.id,
        type: event.type,
        stream: event.streamId,
      },
      `projection could not apply an event and recorded it as a dead letter: ${errorMessage(error)}`,
    );
  }

  private advance(position: bigint): void {
    this.processed = position;
    this.lastError = undefined;
    for (const waiter of this.waiters) if (waiter.position <= position) waiter.resolve();
    this.deps.onProgress?.(this);
  }
}
