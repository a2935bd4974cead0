import { PUBLISHING_CATEGORIES } from '../../contracts/public-event-mapping';
import type { DeliveryStore, NewDelivery, Replay, SubscriptionRef } from '../../infra/deliveries/port';
import type { EventStore } from '../../infra/event-store/port';
import type { Logger } from '../../infra/logging';
import type { DeliveryMatcher } from './matcher';
import type { SubscriptionDirectory } from './subscription-directory';

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
  readonly pollMs: number;
  /** Tells the deliverer the subscription has new deliveries. */
  readonly queued: (ref: SubscriptionRef) => void;
  /** How many deliveries the subscription has queued (for `maxQueued`). */
  readonly queuedCount: (ref: SubscriptionRef) => Promise<number>;
  readonly now?: () => number;
}

/**
 * Runs replays: claims one at a time (every replica runs one, so a replay goes on where another left off after
 * a crash), reads the log from its cursor in steps, matches each event of its system against its subscription
 * and queues the matches with the step's cursor in one write. The live flow goes on beside it; the replay's
 * deliveries go in position order with the live ones of each record.
 */
export class Replayer {
  private stopped = false;
  private loop: Promise<void> | undefined;
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
      let replay: Replay | null = null;
      try {
        replay = await this.options.store.claimReplay({
          now: this.now(),
          holder: this.options.holder,
          leaseUntil: this.now() + this.options.leaseMs,
        });
        if (replay) await this.replay(replay);
      } catch (error) {
        this.options.logger.error({ err: error, replayId: replay?.replayId }, 'a replay step failed');
      }
      if (!replay) await this.sleep(this.options.pollMs);
    }
  }

  private async replay(replay: Replay): Promise<void> {
    const { store, holder, batch } = this.options;
    const ref: SubscriptionRef = { tenant: replay.tenant, subscriptionId: replay.subscriptionId };
    const origin = `replay:${replay.replayId}`;
    let cursor = replay.cursor;
    while (!this.stopped) {
      const entry = this.options.directory.get(replay.tenant, replay.subscriptionId);
      if (!entry) {
        // Deleted since: nothing to deliver to.
        await store.advanceReplay(replay.replayId, holder, {
          deliveries: [],
          cursor,
          leaseUntil: this.now(),
          finishedAt: this.now(),
        });
        return;
      }
      if ((await this.options.queuedCount(ref)) >= this.options.maxQueued) {
        // The receiver has enough waiting: hold the replay (and its lease) until some of it went.
        await store.advanceReplay(replay.replayId, holder, {
          deliveries: [],
          cursor,
          leaseUntil: this.now() + this.options.leaseMs,
          finishedAt: null,
        });
        await this.sleep(this.options.pollMs);
        continue;
      }
      const deliveries: NewDelivery[] = [];
      let read = 0;
      let pastUntil = false;
      let last = cursor;
      for await (const event of this.options.events.readAll({
        after: cursor,
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
          ...(await this.options.matcher.deliveriesOf(event, { origin, only: entry, dueAt: this.now() })),
        );
      }
      const finished = pastUntil || read < batch || last >= replay.until;
      const held = await store.advanceReplay(replay.replayId, holder, {
        deliveries,
        cursor: finished ? replay.until : last,
        leaseUntil: finished ? this.now() : this.now() + this.options.leaseMs,
        finishedAt: finished ? this.now() : null,
      });
      if (!held) return;
      if (deliveries.length > 0) this.options.queued(ref);
      if (finished) {
        this.options.logger.info({ replayId: replay.replayId, ...ref }, 'replay queued every delivery');
        return;
      }
      cursor = last;
    }
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

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }
}
