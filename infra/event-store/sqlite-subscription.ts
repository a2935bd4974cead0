import type { SubscribeOptions, Subscription, SubscriptionItem } from './port';
import type { RecordedEvent } from '../../contracts/events/envelope';

/** What a subscription needs from the store: synchronous reads and a way to wait for the next append. */
export interface SubscriptionSource {
  headPosition(): number;
  /** Events in (after, head], up to `limit`, in position order. */
  readAfter(after: number, head: number, limit: number): readonly RecordedEvent[];
  /** Events of the categories in (after, upTo], up to `limit`, in position order. */
  readCategoriesAfter(
    after: number,
    upTo: number,
    categories: readonly string[],
    limit: number,
  ): readonly RecordedEvent[];
  /** Calls `wake` once after the next append committed in this process; returns a function that cancels it. */
  onNextAppend(wake: () => void): () => void;
  readonly pollIntervalMs: number;
  readonly pageSize: number;
  /** How many positions one filtered read spans, so progress (a checkpoint) is known between sparse matches. */
  readonly filterWindow: number;
}

/**
 * Catch-up then live subscription over the SQLite store. Pull-based: it reads one page when the consumer
 * asks for more, so at most one page is held in memory.
 */
export class SqliteSubscription implements Subscription {
  private closed = false;
  private wakeWaiter: (() => void) | undefined;
  private readonly items: AsyncGenerator<SubscriptionItem, void, undefined>;

  constructor(
    private readonly source: SubscriptionSource,
    options: SubscribeOptions,
    private readonly onClosed: (subscription: SqliteSubscription) => void,
  ) {
    this.items = this.read(toCursor(options.after ?? 0n), options.filter?.categories);
  }

  [Symbol.asyncIterator](): AsyncIterator<SubscriptionItem> {
    return this.items;
  }

  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.wakeWaiter?.();
      this.onClosed(this);
    }
    return Promise.resolve();
  }

  private async *read(
    after: number,
    categories: readonly string[] | undefined,
  ): AsyncGenerator<SubscriptionItem> {
    const { source } = this;
    let cursor = after;
    let behind = true;
    try {
      while (!this.closed) {
        const head = source.headPosition();
        if (head <= cursor) {
          if (behind) {
            behind = false;
            yield { kind: 'caught-up', position: BigInt(cursor) };
          } else {
            await this.waitForAppend();
          }
          continue;
        }
        let events: readonly RecordedEvent[];
        let reached: number;
        if (categories === undefined) {
          events = source.readAfter(cursor, head, source.pageSize);
          // A short page read everything committed when `head` was read.
          reached = events.length === source.pageSize ? Number(events[events.length - 1]!.position) : head;
        } else {
          const upTo = Math.min(cursor + source.filterWindow, head);
          events = source.readCategoriesAfter(cursor, upTo, categories, source.pageSize);
          reached = events.length === source.pageSize ? Number(events[events.length - 1]!.position) : upTo;
        }
        for (const event of events) {
          yield { kind: 'event', event };
          if (this.closed) return;
        }
        const lastEventPosition = events.length > 0 ? Number(events[events.length - 1]!.position) : cursor;
        cursor = Math.max(reached, lastEventPosition);
        if (cursor > lastEventPosition) yield { kind: 'checkpoint', position: BigInt(cursor) };
        // More than one read to reach the head means the consumer fell behind: announce the next catch-up.
        if (cursor < head) behind = true;
      }
    } finally {
      await this.close();
    }
  }

  /** Resolves on the next append in this process, after one poll interval (appends by other processes), or on close. */
  private waitForAppend(): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        cancelAppendWait();
        this.wakeWaiter = undefined;
        resolve();
      };
      const timer = setTimeout(wake, this.source.pollIntervalMs);
      const cancelAppendWait = this.source.onNextAppend(wake);
      this.wakeWaiter = wake;
    });
  }
}

/** Positions in SQLite are rowids, far below 2^53; larger values (foreign checkpoints) clamp to "the end". */
export function toCursor(position: bigint): number {
  return position > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(position);
}
