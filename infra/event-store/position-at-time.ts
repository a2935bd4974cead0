import type { EventStore } from './port';

/**
 * The position of the last event that occurred before `time` (its `occurredAt`; 0n: none), found by bisecting
 * positions: a few dozen one-event reads, whatever the size of the log. Times follow positions (a command is
 * stamped as it is handled, a moment before its append); where a clock stepped back, the answer is one of the
 * events around the step.
 */
export async function positionBefore(
  events: Pick<EventStore, 'readAll' | 'headPosition'>,
  time: Date,
): Promise<bigint> {
  const limit = time.getTime();
  const firstFrom = async (from: bigint) => {
    for await (const event of events.readAll({ ...(from > 0n && { after: from - 1n }), maxCount: 1 }))
      return event;
    return undefined;
  };
  // `low` is 0n or an event recorded before `time`; no event at or after `high` was.
  let low = 0n;
  let high = (await events.headPosition()) + 1n;
  while (high - low > 1n) {
    const middle = low + (high - low) / 2n;
    const event = await firstFrom(middle);
    if (event === undefined || event.position >= high) high = middle;
    else if (Date.parse(event.metadata.occurredAt) < limit) low = event.position;
    else high = middle;
  }
  return low;
}
