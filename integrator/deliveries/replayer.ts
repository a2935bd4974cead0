import { PUBLISHING_CATEGORIES } from '../../contracts/public-event-mapping';
import type { DeliveryStore, NewDelivery, Replay, SubscriptionRef } from '../../infra/deliveries/port';
import type { EventStore } from '../../infra/event-store/port';
import type { Logger } from '../../infra/logging';
import type { DeliveryMatcher } from './matcher';
import type { SubscriptionDirectory } from './subscription-directory';

interface HeldReplay {
  readonly replay: Replay;
  /** Every event up to here is queued. */
  cursor: bigint;
}

export interface ReplayerOptions {
  readonly store: DeliveryStore;
  readonly events: Pick<EventStore, 'readAll'>;
  readonly matcher: DeliveryMatcher;
  readonly directory: SubscriptionDirectory;
  readonly logger: Logger;
  readonly holder: string;
  /** Events read from the log per step. */
  readonly batch: number;
  /**
   * Deliveries a replay's subscription may have queued before the replay waits for them to go: a replay of a
   * long history queues as fast as the receiver takes them, not all at once.
   */
  readonly maxQueued: number;
  /** How long a claimed replay is held without a step before another process may take it over. */
  readonly leaseMs: number;
  /** Replays this process holds at once, stepping each in turn. */
  readonly maxHeld: number;
  readonly pollMs: number;
  /** Tells the deliverer the subscription has new deliveries. */
  readonly queued: (ref: SubscriptionRef) => void;
  readonly now?: () => number;
}

/**
 * Runs replays: holds up to `maxHeld` of them (claimed with leases in the shared store, so a replay goes on
 * where another replica left off after a crash) and steps each in turn: reads the log from its cursor, matches
 * each event of its system against its subscription and queues the matches with the step's cursor in one
 * write. The live flow goes on beside it; the replay's deliveries go in position order with the live ones of
 * each record.
 */
export class Replayer {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly held = new Map<string, HeldReplay>();
  private wake: (() => void) | undefined;
  private readonly now: () => number;

  constructor(private readonly options: ReplayerOptions) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.loop = this.run();
  }

  /** A replay was asked for: look at once. */
  notify(): void {
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let progressed = false;
      try {
        if (this.held.size < this.options.maxHeld) {
          const claimed = await this.options.store.claimReplay({
            now: this.now(),
            holder: this.options.holder,
            leaseUntil: this.now() + this.options.leaseMs,
          });
          if (claimed) {
            this.held.set(claimed.replayId, { replay: claimed, cursor: claimed.cursor });
            progressed = true;
          }
        }
        // One step of each held replay in turn: a long replay (or one waiting on a slow receiver) shares the
        // replayer with every other system's.
        for (const held of [...this.held.values()]) {
          if (this.stopped) break;
          progressed = (await this.step(held)) || progressed;
        }
      } catch (error) {
        this.options.logger.error({ err: error }, 'a replay step failed');
      }
      if (!progressed) await this.sleep(this.options.pollMs);
    }
  }

  /** One step of a held replay: whether it moved (queued something, or finished). */
  private async step(held: HeldReplay): Promise<boolean> {
    const { store, holder, batch } = this.options;
    const { replay } = held;
    const ref: SubscriptionRef = { tenant: replay.tenant, subscriptionId: replay.subscriptionId };
    const release = async (finishedAt: number | null) => {
      this.held.delete(replay.replayId);
      await store.advanceReplay(replay.replayId, holder, {
        deliveries: [],
        cursor: held.cursor,
        leaseUntil: this.now(),
        finishedAt,
      });
    };
    const entry = this.options.directory.get(replay.tenant, replay.subscriptionId);
    // Deleted since: nothing to deliver to.
    if (!entry) {
      await release(this.now());
      return true;
    }
    if ((await this.options.store.queuedCount(ref)) >= this.options.maxQueued) {
      // The receiver has enough waiting: keep the replay (renew its lease) until some of it went.
      const kept = await store.advanceReplay(replay.replayId, holder, {
        deliveries: [],
        cursor: held.cursor,
        leaseUntil: this.now() + this.options.leaseMs,
        finishedAt: null,
      });
      if (!kept) this.held.delete(replay.replayId);
      return false;
    }
    const deliveries: NewDelivery[] = [];
    let read = 0;
    let pastUntil = false;
    let last = held.cursor;
    for await (const event of this.options.events.readAll({
      after: held.cursor,
      maxCount: batch,
      filter: { categories: PUBLISHING_CATEGORIES },
    })) {
      read++;
      if (event.position > replay.until) {
        pastUntil = true;
        break;
      }
      last = event.position;
      if (event.metadata.tenant !== replay.tenant) continue;
      deliveries.push(
        ...(await this.options.matcher.deliveriesOf(event, {
          origin: `replay:${replay.replayId}`,
          only: entry,
          dueAt: this.now(),
        })),
      );
    }
    const finished = pastUntil || read < batch || last >= replay.until;
    const kept = await store.advanceReplay(replay.replayId, holder, {
      deliveries,
      cursor: finished ? replay.until : last,
      leaseUntil: finished ? this.now() : this.now() + this.options.leaseMs,
      finishedAt: finished ? this.now() : null,
    });
    if (!kept || finished) this.held.delete(replay.replayId);
    if (!kept) return false;
    if (deliveries.length > 0) this.options.queued(ref);
    if (finished)
      this.options.logger.info({ replayId: replay.replayId, ...ref }, 'replay queued every delivery');
    else held.cursor = last;
    return true;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  /** Stops after the step under way, and lets go of the replays it holds: another replica goes on at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    for (const { replay, cursor } of this.held.values())
      await this.options.store
        .advanceReplay(replay.replayId, this.options.holder, {
          deliveries: [],
          cursor,
          leaseUntil: this.now(),
          finishedAt: null,
        })
        .catch((error: unknown) =>
          this.options.logger.warn({ err: error, replayId: replay.replayId }, 'could not let go of a replay'),
        );
    this.held.clear();
  }
}
