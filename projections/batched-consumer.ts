import { setImmediate as nextMacrotask } from 'node:timers/promises';
import type { RecordedEvent } from '../contracts/events/envelope';
import type { Subscription, SubscriptionItem } from '../infra/event-store/port';

export interface BatchHandlers {
  /** Takes one event into the batch being built. */
  add(event: RecordedEvent): void;
  /** Writes the batch and records that everything up to `position` is done. */
  flush(position: bigint): Promise<void>;
  onCaughtUp?(): void;
}

const IDLE = Symbol('idle');

/**
 * Drains a subscription in batches: a batch is flushed when it is full, at every caught-up or checkpoint
 * marker, and as soon as the subscription has nothing more at hand (the next item is not ready within one
 * event-loop turn). Catch-up thus runs in large batches while live events are written at once.
 */
export async function consumeInBatches(
  subscription: Subscription,
  handlers: BatchHandlers,
  batchSize: number,
  from: bigint,
): Promise<void> {
  const iterator = subscription[Symbol.asyncIterator]();
  let flushed = from;
  let batchEnd = from;
  let inBatch = 0;
  const flush = async (): Promise<void> => {
    if (batchEnd === flushed) return;
    await handlers.flush(batchEnd);
    flushed = batchEnd;
    inBatch = 0;
  };
  let pending: Promise<IteratorResult<SubscriptionItem>> = iterator.next();
  // One macrotask timer serves every item that arrives before it fires (items in hand arrive in microtasks).
  let idle: Promise<typeof IDLE> | undefined;
  for (;;) {
    let pulled: IteratorResult<SubscriptionItem> | typeof IDLE;
    if (batchEnd > flushed) {
      idle ??= nextMacrotask(IDLE);
      pulled = await Promise.race([pending, idle]);
    } else {
      pulled = await pending;
    }
    if (pulled === IDLE) {
      idle = undefined;
      await flush();
      continue;
    }
    if (pulled.done) break;
    pending = iterator.next();
    const item = pulled.value;
    if (item.kind === 'event') {
      handlers.add(item.event);
      inBatch++;
      batchEnd = item.event.position;
      if (inBatch >= batchSize) await flush();
      continue;
    }
    if (item.position > batchEnd) batchEnd = item.position;
    await flush();
    if (item.kind === 'caught-up') handlers.onCaughtUp?.();
  }
  await flush();
}
