import {
  START,
  excludeSystemEvents,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type EventStoreDBClient,
  type Position,
} from '@eventstore/db-client';
import type { SubscribeOptions, Subscription, SubscriptionItem } from './port';
import {
  categoriesRegex,
  categoryMatcher,
  esdbPosition,
  isRealPosition,
  isUserEvent,
  toRecordedEvent,
} from './eventstoredb-events';

/** Server-side filter: a checkpoint every `FILTER_SEARCH_WINDOW` scanned events (interval multiplier 1). */
const FILTER_SEARCH_WINDOW = 100;
/** Above this many queued items the gRPC stream is paused; below the low mark it resumes. */
const QUEUE_HIGH_WATER = 256;
const QUEUE_LOW_WATER = 64;
const RETRY_FIRST_DELAY_MS = 100;
const RETRY_MAX_DELAY_MS = 5000;

type Marker = { readonly kind: 'caught-up' } | { readonly kind: 'checkpoint'; readonly position: bigint };

/**
 * One server subscription, turned into an ordered, bounded queue of items. `caughtUp` and checkpoints are
 * emitted by the client when it transforms the server message, which can be while events received before
 * them still sit in the stream's readable buffer; such a marker waits until those events are delivered.
 */
class SubscriptionFeed {
  private readonly queue: SubscriptionItem[] = [];
  /** Markers waiting for `eventsBefore` more `data` emissions. */
  private readonly deferredMarkers: { eventsBefore: number; readonly marker: Marker }[] = [];
  private readonly source: AllStreamSubscription;
  private readonly matchesCategories: (event: { readonly streamId: string }) => boolean;
  private lastQueuedPosition: bigint;
  private paused = false;
  private ended = false;
  private failure: { readonly error: unknown } | undefined;
  private wakeConsumer: (() => void) | undefined;

  constructor(
    client: EventStoreDBClient,
    after: bigint | undefined,
    categories: readonly string[] | undefined,
  ) {
    this.lastQueuedPosition = after ?? 0n;
    this.matchesCategories = categoryMatcher(categories);
    const filterOptions = {
      checkpointInterval: 1,
      maxSearchWindow: FILTER_SEARCH_WINDOW,
      checkpointReached: (_: AllStreamSubscription, position: Position) =>
        this.onMarker({ kind: 'checkpoint', position: position.commit }),
    };
    this.source = client.subscribeToAll({
      fromPosition: after === undefined || after <= 0n ? START : esdbPosition(after),
      filter: categories
        ? streamNameFilter({ regex: categoriesRegex(categories), ...filterOptions })
        : excludeSystemEvents(filterOptions),
    });
    this.source.on('data', (resolved: AllStreamResolvedEvent) => this.onData(resolved));
    this.source.on('caughtUp', () => this.onMarker({ kind: 'caught-up' }));
    this.source.on('error', (error: unknown) => {
      this.failure ??= { error };
      this.wake();
    });
    const onEnd = (): void => {
      this.ended = true;
      this.wake();
    };
    this.source.on('end', onEnd);
    this.source.on('close', onEnd);
  }

  /** The next item; 'ended' when the server ended the subscription; throws the error that dropped it. */
  async next(): Promise<SubscriptionItem | 'ended'> {
    for (;;) {
      const item = this.queue.shift();
      if (item) {
        if (this.paused && this.queue.length <= QUEUE_LOW_WATER) {
          this.paused = false;
          this.source.resume();
        }
        return item;
      }
      if (this.failure) throw this.failure.error;
      if (this.ended) return 'ended';
      await new Promise<void>((resolve) => (this.wakeConsumer = resolve));
    }
  }

  /** Ends `next()` for a consumer that is closing. */
  interrupt(): void {
    this.ended = true;
    this.wake();
  }

  async dispose(): Promise<void> {
    this.interrupt();
    // Rejects when the gRPC call never opened; the failure was already reported through `next()`.
    await this.source.unsubscribe().catch(() => undefined);
    this.source.destroy();
  }

  private onData(resolved: AllStreamResolvedEvent): void {
    const event = resolved.event;
    if (
      event &&
      isUserEvent(event) &&
      this.matchesCategories(event) &&
      isRealPosition(event.position.commit)
    ) {
      this.push({ kind: 'event', event: toRecordedEvent(event, event.position.commit) });
      this.lastQueuedPosition = event.position.commit;
    }
    for (const deferred of this.deferredMarkers) deferred.eventsBefore--;
    while (this.deferredMarkers[0]?.eventsBefore === 0)
      this.queueMarker(this.deferredMarkers.shift()!.marker);
  }

  private onMarker(marker: Marker): void {
    const eventsBefore = this.source.readableLength;
    if (eventsBefore === 0) this.queueMarker(marker);
    else this.deferredMarkers.push({ eventsBefore, marker });
  }

  private queueMarker(marker: Marker): void {
    if (marker.kind === 'caught-up') {
      this.push({ kind: 'caught-up', position: this.lastQueuedPosition });
    } else if (isRealPosition(marker.position) && marker.position > this.lastQueuedPosition) {
      // Some server versions repeat a stale checkpoint once live: only ever move forwards.
      this.push({ kind: 'checkpoint', position: marker.position });
      this.lastQueuedPosition = marker.position;
    }
  }

  private push(item: SubscriptionItem): void {
    this.queue.push(item);
    if (!this.paused && this.queue.length >= QUEUE_HIGH_WATER) {
      this.paused = true;
      this.source.pause();
    }
    this.wake();
  }

  private wake(): void {
    const wake = this.wakeConsumer;
    this.wakeConsumer = undefined;
    wake?.();
  }
}

/**
 * A catch-up subscription to `$all` that survives drops: after an error or an ended stream it resubscribes,
 * with backoff, from the last position it yielded (exclusive, as ESDB subscriptions are).
 */
export class EventStoreDbSubscription implements Subscription {
  private closed = false;
  private feed: SubscriptionFeed | undefined;
  private cancelRetryDelay: (() => void) | undefined;
  private lastPosition: bigint | undefined;
  private readonly categories: readonly string[] | undefined;
  private readonly items: AsyncGenerator<SubscriptionItem, void, undefined>;

  constructor(
    private readonly client: EventStoreDBClient,
    options: SubscribeOptions,
    private readonly onDropped: (error: unknown) => void,
    private readonly onClosed: (subscription: EventStoreDbSubscription) => void,
  ) {
    this.lastPosition = options.after;
    this.categories = options.filter?.categories;
    this.items = this.run();
  }

  [Symbol.asyncIterator](): AsyncIterator<SubscriptionItem> {
    return this.items;
  }

  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.feed?.interrupt();
      this.cancelRetryDelay?.();
      this.onClosed(this);
    }
    return Promise.resolve();
  }

  private async *run(): AsyncGenerator<SubscriptionItem> {
    let failedAttempts = 0;
    try {
      while (!this.closed) {
        let feed: SubscriptionFeed | undefined;
        try {
          feed = this.feed = new SubscriptionFeed(this.client, this.lastPosition, this.categories);
          for (;;) {
            const item = await feed.next();
            if (this.closed || item === 'ended') break;
            failedAttempts = 0;
            const position = item.kind === 'event' ? item.event.position : item.position;
            if (this.lastPosition === undefined || position > this.lastPosition) this.lastPosition = position;
            yield item;
            if (this.closed) return;
          }
        } catch (error) {
          if (!this.closed) this.onDropped(error);
        } finally {
          this.feed = undefined;
          await feed?.dispose();
        }
        if (!this.closed) await this.retryDelay(failedAttempts++);
      }
    } finally {
      await this.close();
    }
  }

  private retryDelay(failedAttempts: number): Promise<void> {
    const delayMs = Math.min(RETRY_MAX_DELAY_MS, RETRY_FIRST_DELAY_MS * 2 ** failedAttempts);
    return new Promise((resolve) => {
      const timer = setTimeout(done, delayMs);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.cancelRetryDelay = done;
    });
  }
}
