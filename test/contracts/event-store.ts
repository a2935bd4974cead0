import { randomUUID } from 'node:crypto';
import type { NewEvent, RecordedEvent } from '../../contracts/events/envelope';
import { streamName } from '../../contracts/streams';
import {
  EventIdConflictError,
  WrongExpectedRevisionError,
  type AppendResult,
  type CommittedAppend,
  type EventStore,
  type ExpectedRevision,
  type ReadAllOptions,
  type StreamAppendOutcome,
  type Subscription,
  type SubscriptionItem,
} from '../../infra/event-store/port';

export type EventStoreFactory = () => Promise<{ store: EventStore; cleanup: () => Promise<void> }>;

const TENANT = 'acme';
const ITEM_TIMEOUT_MS = 5000;

/** A category no other test (or other user of a shared server) writes to, so filtered reads see only ours. */
export function uniqueCategory(): string {
  return `c${randomUUID().replace(/-/g, '').slice(0, 12)}`;
}

export function uniqueStream(category = uniqueCategory()): string {
  return streamName(category, TENANT, randomUUID().slice(0, 8));
}

export function newEvent(type = 'ThingHappened', data: unknown = { label: 'a thing', count: 1 }): NewEvent {
  const commandId = randomUUID();
  return {
    id: randomUUID(),
    type,
    schemaVersion: 1,
    data,
    metadata: {
      tenant: TENANT,
      actor: { userId: 'user-1', credentialId: 'token-1' },
      correlationId: commandId,
      causationId: commandId,
      commandId,
      occurredAt: new Date().toISOString(),
    },
  };
}

export function newEvents(count: number, type = 'ThingHappened'): NewEvent[] {
  return Array.from({ length: count }, (_, index) => newEvent(type, { index }));
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** Pulls subscription items one at a time, failing the test when one does not arrive in time. */
export class SubscriptionReader {
  private readonly iterator: AsyncIterator<SubscriptionItem>;

  constructor(readonly subscription: Subscription) {
    this.iterator = subscription[Symbol.asyncIterator]();
  }

  async next(timeoutMs = ITEM_TIMEOUT_MS): Promise<IteratorResult<SubscriptionItem>> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no subscription item within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([this.iterator.next(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Items up to and including the first one `stop` accepts. */
  async until(
    stop: (item: SubscriptionItem) => boolean,
    timeoutMs = ITEM_TIMEOUT_MS,
  ): Promise<SubscriptionItem[]> {
    const items: SubscriptionItem[] = [];
    for (;;) {
      const result = await this.next(timeoutMs);
      if (result.done)
        throw new Error(`subscription ended after ${items.length} items without the expected one`);
      items.push(result.value);
      if (stop(result.value)) return items;
    }
  }

  /** The next `count` events of `streams`, ignoring other items and other streams' events. */
  async events(count: number, streams: ReadonlySet<string>): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    while (events.length < count) {
      const result = await this.next();
      if (result.done) throw new Error(`subscription ended after ${events.length} of ${count} events`);
      if (result.value.kind === 'event' && streams.has(result.value.event.streamId))
        events.push(result.value.event);
    }
    return events;
  }

  close(): Promise<void> {
    return this.subscription.close();
  }
}

const isCaughtUp = (item: SubscriptionItem): boolean => item.kind === 'caught-up';

/** The position of a caught-up or checkpoint item; an event here fails the test. */
function progressPosition(item: SubscriptionItem | undefined): bigint {
  if (item === undefined || item.kind === 'event')
    throw new Error(`expected a progress item, got ${item?.kind}`);
  return item.position;
}

function eventsOf(items: readonly SubscriptionItem[], streams?: ReadonlySet<string>): RecordedEvent[] {
  return items.flatMap((item) =>
    item.kind === 'event' && (!streams || streams.has(item.event.streamId)) ? [item.event] : [],
  );
}

function expectStrictlyIncreasing(positions: readonly bigint[]): void {
  for (let index = 1; index < positions.length; index++) {
    expect(positions[index]! > positions[index - 1]!).toBe(true);
  }
}

async function expectWrongRevision(
  attempt: Promise<unknown>,
  streamId: string,
  expected: ExpectedRevision,
  actual: bigint | undefined,
): Promise<void> {
  const error: unknown = await attempt.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(WrongExpectedRevisionError);
  const wrong = error as WrongExpectedRevisionError;
  expect(wrong.streamId).toBe(streamId);
  expect(wrong.expected).toBe(expected);
  expect(wrong.actual).toBe(actual);
}

/** What an adapter declares of itself, so that the suite checks the declaration too. */
export interface EventStoreTraits {
  /** Whether it implements the optional `readAllPages` (the readers of one without it read event by event). */
  readonly readsPages: boolean;
}

/**
 * The event store port's contract. Every adapter runs it unchanged. The store may be shared with other
 * users (a real server), so each test writes to its own streams and categories and reasons with positions
 * relative to what it appended.
 */
export function eventStoreContract(factory: EventStoreFactory, traits: EventStoreTraits): void {
  let store: EventStore;
  let cleanup: () => Promise<void>;
  const openReaders: SubscriptionReader[] = [];

  const subscribe = (...args: Parameters<EventStore['subscribeToAll']>): SubscriptionReader => {
    const reader = new SubscriptionReader(store.subscribeToAll(...args));
    openReaders.push(reader);
    return reader;
  };

  beforeEach(async () => {
    ({ store, cleanup } = await factory());
  });

  afterEach(async () => {
    await Promise.all(openReaders.splice(0).map((reader) => reader.close()));
    await cleanup();
  });

  describe('append', () => {
    test('no_stream creates the stream at revision 0 and fails once it exists', async () => {
      const stream = uniqueStream();
      const first = await store.append(stream, [newEvent()], { expectedRevision: 'no_stream' });
      expect(first.nextExpectedRevision).toBe(0n);
      await expectWrongRevision(
        store.append(stream, [newEvent()], { expectedRevision: 'no_stream' }),
        stream,
        'no_stream',
        0n,
      );
    });

    test('stream_exists fails on a missing stream and succeeds on an existing one', async () => {
      const stream = uniqueStream();
      await expectWrongRevision(
        store.append(stream, [newEvent()], { expectedRevision: 'stream_exists' }),
        stream,
        'stream_exists',
        undefined,
      );
      await store.append(stream, [newEvent()], { expectedRevision: 'no_stream' });
      const second = await store.append(stream, [newEvent()], { expectedRevision: 'stream_exists' });
      expect(second.nextExpectedRevision).toBe(1n);
    });

    test('an exact revision succeeds when current and fails with the actual revision otherwise', async () => {
      const stream = uniqueStream();
      await expectWrongRevision(
        store.append(stream, [newEvent()], { expectedRevision: 0n }),
        stream,
        0n,
        undefined,
      );
      const first = await store.append(stream, newEvents(2), { expectedRevision: 'no_stream' });
      expect(first.nextExpectedRevision).toBe(1n);
      const second = await store.append(stream, [newEvent()], { expectedRevision: 1n });
      expect(second.nextExpectedRevision).toBe(2n);
      await expectWrongRevision(store.append(stream, [newEvent()], { expectedRevision: 1n }), stream, 1n, 2n);
      await expectWrongRevision(store.append(stream, [newEvent()], { expectedRevision: 5n }), stream, 5n, 2n);
    });

    test('any (the default) appends to missing and existing streams', async () => {
      const stream = uniqueStream();
      const first = await store.append(stream, [newEvent()]);
      const second = await store.append(stream, [newEvent()], { expectedRevision: 'any' });
      expect(first.nextExpectedRevision).toBe(0n);
      expect(second.nextExpectedRevision).toBe(1n);
      expect(second.position > first.position).toBe(true);
    });

    test('a multi-event append is atomic, 0-based, and reports the last event', async () => {
      const stream = uniqueStream();
      const events = newEvents(3);
      const result = await store.append(stream, events, { expectedRevision: 'no_stream' });
      expect(typeof result.nextExpectedRevision).toBe('bigint');
      expect(typeof result.position).toBe('bigint');
      expect(result.nextExpectedRevision).toBe(2n);

      const stored = await collect(store.readStream(stream));
      expect(stored.map((event) => event.id)).toEqual(events.map((event) => event.id));
      expect(stored.map((event) => event.revision)).toEqual([0n, 1n, 2n]);
      expectStrictlyIncreasing(stored.map((event) => event.position));
      expect(stored[2]!.position).toBe(result.position);

      await expect(store.append(stream, newEvents(3), { expectedRevision: 0n })).rejects.toBeInstanceOf(
        WrongExpectedRevisionError,
      );
      expect(await collect(store.readStream(stream))).toHaveLength(3);
    });

    test('an empty append is rejected', async () => {
      await expect(store.append(uniqueStream(), [])).rejects.toThrow();
    });

    test('positions increase across streams and the head reaches the last append', async () => {
      const before = await store.headPosition();
      expect(typeof before).toBe('bigint');
      const first = await store.append(uniqueStream(), [newEvent()]);
      const second = await store.append(uniqueStream(), newEvents(2));
      expect(first.position > before).toBe(true);
      expect(second.position > first.position).toBe(true);
      const head = await store.headPosition();
      expect(typeof head).toBe('bigint');
      expect(head >= second.position).toBe(true);
    });
  });

  describe('idempotent append by event id', () => {
    test('repeating an append returns the original result and appends nothing, whatever the expectation', async () => {
      const stream = uniqueStream();
      const events = newEvents(2);
      const original = await store.append(stream, events, { expectedRevision: 'no_stream' });

      expect(await store.append(stream, events, { expectedRevision: 'no_stream' })).toEqual(original);
      expect(await store.append(stream, events, { expectedRevision: 'any' })).toEqual(original);
      expect(await store.append(stream, events, { expectedRevision: 1n })).toEqual(original);
      expect(await store.append(stream, events)).toEqual(original);
      expect(await collect(store.readStream(stream))).toHaveLength(2);

      const later = await store.append(stream, [newEvent()], { expectedRevision: 1n });
      expect(await store.append(stream, events, { expectedRevision: later.nextExpectedRevision })).toEqual(
        original,
      );
      expect(await store.append(stream, events, { expectedRevision: 'no_stream' })).toEqual(original);

      const stored = await collect(store.readStream(stream));
      expect(stored.map((event) => event.revision)).toEqual([0n, 1n, 2n]);
      expect(new Set(stored.map((event) => event.id)).size).toBe(3);
    });

    test('a partial repeat is a conflict and appends nothing', async () => {
      const stream = uniqueStream();
      const events = newEvents(2);
      await store.append(stream, events, { expectedRevision: 'no_stream' });

      await expect(store.append(stream, [events[0]!, newEvent()])).rejects.toBeInstanceOf(
        EventIdConflictError,
      );
      await expect(
        store.append(stream, [newEvent(), events[1]!], { expectedRevision: 1n }),
      ).rejects.toBeInstanceOf(EventIdConflictError);
      expect(await collect(store.readStream(stream))).toHaveLength(2);
    });
  });

  describe('appendToStreams', () => {
    /** The results of outcomes that must all be successes. */
    function resultsOf(outcomes: readonly StreamAppendOutcome[]): AppendResult[] {
      return outcomes.map((outcome) => {
        if (!outcome.ok) throw new Error(`unexpected failure: ${String(outcome.error)}`);
        return outcome.result;
      });
    }

    test('appends to each stream as append would, positions in the order given', async () => {
      const existing = uniqueStream();
      await store.append(existing, [newEvent()], { expectedRevision: 'no_stream' });
      const [created, extended, multi] = [uniqueStream(), existing, uniqueStream()];
      const events = [[newEvent()], [newEvent()], newEvents(2)];

      const outcomes = await store.appendToStreams([
        { streamId: created, events: events[0]!, expectedRevision: 'no_stream' },
        { streamId: extended, events: events[1]!, expectedRevision: 0n },
        { streamId: multi, events: events[2]! },
      ]);

      const results = resultsOf(outcomes);
      expect(results.map((result) => result.nextExpectedRevision)).toEqual([0n, 1n, 1n]);
      expectStrictlyIncreasing(results.map((result) => result.position));
      for (const [index, streamId] of [created, extended, multi].entries()) {
        const stored = await collect(store.readStream(streamId));
        expect(stored.slice(-events[index]!.length).map((event) => event.id)).toEqual(
          events[index]!.map((event) => event.id),
        );
        expect(stored[stored.length - 1]!.position).toBe(results[index]!.position);
      }
      expect(await store.headPosition()).toBeGreaterThanOrEqual(results[2]!.position);
    });

    test('an append that fails its expectation, or has no events, fails alone and appends nothing', async () => {
      const existing = uniqueStream();
      await store.append(existing, [newEvent()], { expectedRevision: 'no_stream' });
      const [before, after] = [uniqueStream(), uniqueStream()];

      const outcomes = await store.appendToStreams([
        { streamId: before, events: [newEvent()], expectedRevision: 'no_stream' },
        { streamId: existing, events: [newEvent()], expectedRevision: 'no_stream' },
        { streamId: uniqueStream(), events: [] },
        { streamId: existing, events: newEvents(2), expectedRevision: 5n },
        { streamId: after, events: [newEvent()], expectedRevision: 'no_stream' },
      ]);

      expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, false, false, false, true]);
      const wrong = outcomes[1]!.ok ? undefined : outcomes[1]!.error;
      expect(wrong).toBeInstanceOf(WrongExpectedRevisionError);
      expect(wrong).toMatchObject({ streamId: existing, expected: 'no_stream', actual: 0n });
      expect(outcomes[3]!.ok ? undefined : outcomes[3]!.error).toBeInstanceOf(WrongExpectedRevisionError);
      expect(await collect(store.readStream(existing))).toHaveLength(1);
      expect(await collect(store.readStream(before))).toHaveLength(1);
      expect(await collect(store.readStream(after))).toHaveLength(1);
    });

    test('a repeated append returns its first result; a partial repeat is a conflict', async () => {
      const [repeated, partial, fresh] = [uniqueStream(), uniqueStream(), uniqueStream()];
      const events = newEvents(2);
      const original = await store.append(repeated, events, { expectedRevision: 'no_stream' });
      const stored = newEvents(2);
      await store.append(partial, stored, { expectedRevision: 'no_stream' });

      const outcomes = await store.appendToStreams([
        { streamId: repeated, events, expectedRevision: 'no_stream' },
        { streamId: partial, events: [stored[1]!, newEvent()], expectedRevision: 1n },
        { streamId: fresh, events: [newEvent()], expectedRevision: 'no_stream' },
      ]);

      expect(outcomes[0]).toEqual({ ok: true, result: original });
      expect(outcomes[1]!.ok ? undefined : outcomes[1]!.error).toBeInstanceOf(EventIdConflictError);
      expect(outcomes[2]!.ok).toBe(true);
      expect(await collect(store.readStream(repeated))).toHaveLength(2);
      expect(await collect(store.readStream(partial))).toHaveLength(2);
      expect(await collect(store.readStream(fresh))).toHaveLength(1);
    });

    test('no appends, no outcomes', async () => {
      await expect(store.appendToStreams([])).resolves.toEqual([]);
    });
  });

  describe('after-commit hooks', () => {
    test('a hook hears of each append once it is stored, with its stream and position, before the append returns', async () => {
      const stream = uniqueStream();
      const heard: Array<{ commits: readonly CommittedAppend[]; storedUpTo: bigint | undefined }> = [];
      store.onAfterCommit(async (commits) => {
        const stored = await collect(store.readStream(stream));
        // Still running when the store has answered would be too late: the writer waits for it.
        await new Promise((resolve) => setTimeout(resolve, 20));
        heard.push({ commits, storedUpTo: stored[stored.length - 1]?.position });
      });

      const first = await store.append(stream, newEvents(2), { expectedRevision: 'no_stream' });
      expect(heard).toEqual([{ commits: [{ streamId: stream, ...first }], storedUpTo: first.position }]);
      const second = await store.append(stream, [newEvent()]);
      expect(heard.map(({ commits }) => commits)).toEqual([
        [{ streamId: stream, ...first }],
        [{ streamId: stream, ...second }],
      ]);
      expect(heard[1]!.storedUpTo).toBe(second.position);
    });

    test('appendToStreams tells a hook once of its successful appends, in order, with their positions', async () => {
      const existing = uniqueStream();
      await store.append(existing, [newEvent()], { expectedRevision: 'no_stream' });
      const heard: CommittedAppend[][] = [];
      store.onAfterCommit((commits) => {
        heard.push([...commits]);
      });
      const [created, multi] = [uniqueStream(), uniqueStream()];

      const outcomes = await store.appendToStreams([
        { streamId: created, events: [newEvent()], expectedRevision: 'no_stream' },
        { streamId: existing, events: [newEvent()], expectedRevision: 'no_stream' },
        { streamId: multi, events: newEvents(2) },
      ]);

      expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, false, true]);
      const results = outcomes.flatMap((outcome) => (outcome.ok ? [outcome.result] : []));
      expect(heard).toEqual([
        [
          { streamId: created, ...results[0]! },
          { streamId: multi, ...results[1]! },
        ],
      ]);
      expectStrictlyIncreasing(heard[0]!.map((commit) => commit.position));
    });

    test('a failed append runs no hook, nor does an appendToStreams whose appends all fail', async () => {
      const existing = uniqueStream();
      await store.append(existing, [newEvent()], { expectedRevision: 'no_stream' });
      const hook = jest.fn();
      store.onAfterCommit(hook);

      await expectWrongRevision(
        store.append(existing, [newEvent()], { expectedRevision: 'no_stream' }),
        existing,
        'no_stream',
        0n,
      );
      const outcomes = await store.appendToStreams([
        { streamId: existing, events: [newEvent()], expectedRevision: 5n },
        { streamId: uniqueStream(), events: [newEvent()], expectedRevision: 'stream_exists' },
      ]);

      expect(outcomes.map((outcome) => outcome.ok)).toEqual([false, false]);
      expect(hook).not.toHaveBeenCalled();
    });

    test('hooks run in the order added, a removed one no longer runs, and one that throws fails the call', async () => {
      const order: string[] = [];
      store.onAfterCommit(() => {
        order.push('first');
      });
      const removeSecond = store.onAfterCommit(() => {
        order.push('second');
      });
      const stream = uniqueStream();
      await store.append(stream, [newEvent()]);
      expect(order).toEqual(['first', 'second']);

      removeSecond();
      store.onAfterCommit(() => {
        throw new Error('the hook failed');
      });
      await expect(store.append(stream, [newEvent()])).rejects.toThrow('the hook failed');
      expect(order).toEqual(['first', 'second', 'first']);
      // The events were stored before the hooks ran.
      expect(await collect(store.readStream(stream))).toHaveLength(2);
    });
  });

  describe('readStream', () => {
    test('round-trips the event and reads forwards, backwards, from a revision and with a maximum', async () => {
      const stream = uniqueStream();
      const events = [
        newEvent('RecordCreated', { title: 'é ✓', nested: { list: [1, 2, 3] } }),
        ...newEvents(4),
      ];
      const written = { ...events[0]!, schemaVersion: 3 };
      events[0] = written;
      await store.append(stream, events, { expectedRevision: 'no_stream' });

      const forwards = await collect(store.readStream(stream));
      expect(forwards).toHaveLength(5);
      const first = forwards[0]!;
      expect(first).toMatchObject({
        id: written.id,
        type: 'RecordCreated',
        schemaVersion: 3,
        data: written.data,
        metadata: written.metadata,
        streamId: stream,
        revision: 0n,
      });
      expect(typeof first.revision).toBe('bigint');
      expect(typeof first.position).toBe('bigint');
      expect(Number.isNaN(Date.parse(first.recordedAt))).toBe(false);

      const revisions = async (options: Parameters<EventStore['readStream']>[1]): Promise<bigint[]> =>
        (await collect(store.readStream(stream, options))).map((event) => event.revision);
      expect(await revisions({ direction: 'backwards' })).toEqual([4n, 3n, 2n, 1n, 0n]);
      expect(await revisions({ fromRevision: 2n })).toEqual([2n, 3n, 4n]);
      expect(await revisions({ fromRevision: 2n, maxCount: 2 })).toEqual([2n, 3n]);
      expect(await revisions({ direction: 'backwards', fromRevision: 3n, maxCount: 2 })).toEqual([3n, 2n]);
      expect(await revisions({ fromRevision: 9n })).toEqual([]);
    });

    test('a missing stream yields nothing', async () => {
      expect(await collect(store.readStream(uniqueStream()))).toEqual([]);
      expect(await collect(store.readStream(uniqueStream(), { direction: 'backwards' }))).toEqual([]);
    });

    test('reads a long stream across pages', async () => {
      const stream = uniqueStream();
      await store.append(stream, newEvents(1200), { expectedRevision: 'no_stream' });
      const forwards = await collect(store.readStream(stream));
      expect(forwards.map((event) => event.revision)).toEqual(
        Array.from({ length: 1200 }, (_, i) => BigInt(i)),
      );
      const backwards = await collect(store.readStream(stream, { direction: 'backwards', maxCount: 700 }));
      expect(backwards.map((event) => event.revision)).toEqual(
        Array.from({ length: 700 }, (_, i) => BigInt(1199 - i)),
      );
    });
  });

  describe('readAll', () => {
    test('reads forwards after a position, in order, with a maximum', async () => {
      const before = await store.headPosition();
      const streams = [uniqueStream(), uniqueStream()];
      const ids: string[] = [];
      for (let round = 0; round < 3; round++) {
        for (const stream of streams) {
          const events = newEvents(2);
          await store.append(stream, events);
          ids.push(...events.map((event) => event.id));
        }
      }
      const mine = new Set(streams);
      const all = await collect(store.readAll({ after: before }));
      expect(all.every((event) => event.position > before)).toBe(true);
      expectStrictlyIncreasing(all.map((event) => event.position));
      expect(all.filter((event) => mine.has(event.streamId)).map((event) => event.id)).toEqual(ids);

      const limited = await collect(store.readAll({ after: before, maxCount: 3 }));
      expect(limited).toHaveLength(3);
      expect(limited.map((event) => event.position)).toEqual(all.slice(0, 3).map((event) => event.position));
    });

    test('reads backwards before a position', async () => {
      const stream = uniqueStream();
      await store.append(stream, newEvents(5));
      // Positions are opaque (ESDB only accepts real ones): read them back instead of computing them.
      const positions = (await collect(store.readStream(stream))).map((event) => event.position);

      const backwards = await collect(store.readAll({ direction: 'backwards', after: positions[4] }));
      expect(backwards.slice(0, 4).map((event) => event.position)).toEqual(positions.slice(0, 4).reverse());
      const limited = await collect(
        store.readAll({ direction: 'backwards', after: positions[3], maxCount: 2 }),
      );
      expect(limited.map((event) => event.position)).toEqual([positions[2], positions[1]]);
      expect(typeof limited[0]!.position).toBe('bigint');
    });

    test('reads one event either way (a search by time reads single events)', async () => {
      const stream = uniqueStream();
      await store.append(stream, newEvents(3));
      const recorded = await collect(store.readStream(stream));
      const positions = recorded.map((event) => event.position);
      const [next] = await collect(store.readAll({ after: positions[0], maxCount: 1 }));
      expect(next).toEqual(recorded[1]);
      const [previous] = await collect(
        store.readAll({ direction: 'backwards', after: positions[2], maxCount: 1 }),
      );
      expect(previous).toEqual(recorded[1]);
      expect(await collect(store.readAll({ after: await store.headPosition(), maxCount: 1 }))).toEqual([]);
      const [last] = await collect(store.readAll({ direction: 'backwards', maxCount: 1 }));
      expect(last!.position).toBe(await store.headPosition());
    });

    test('filters by category in both directions', async () => {
      const [wanted, other] = [uniqueCategory(), uniqueCategory()];
      const wantedStreams = [uniqueStream(wanted), uniqueStream(wanted)];
      const expectedIds: string[] = [];
      for (let round = 0; round < 3; round++) {
        for (const stream of wantedStreams) {
          const event = newEvent();
          await store.append(stream, [event]);
          expectedIds.push(event.id);
        }
        await store.append(uniqueStream(other), newEvents(3));
      }
      const filter = { categories: [wanted] };
      const forwards = await collect(store.readAll({ filter }));
      expect(forwards.map((event) => event.id)).toEqual(expectedIds);
      expect(forwards.every((event) => event.streamId.startsWith(`${wanted}-`))).toBe(true);

      const backwards = await collect(store.readAll({ filter, direction: 'backwards', maxCount: 4 }));
      expect(backwards.map((event) => event.id)).toEqual([...expectedIds].reverse().slice(0, 4));
      const afterSecond = await collect(store.readAll({ filter, after: forwards[1]!.position, maxCount: 2 }));
      expect(afterSecond.map((event) => event.id)).toEqual(expectedIds.slice(2, 4));

      const both = await collect(store.readAll({ filter: { categories: [wanted, other] } }));
      expect(both).toHaveLength(6 + 9);
      const positions = both.map((event) => event.position);
      expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : 1)));
      const bothBackwards = await collect(
        store.readAll({ filter: { categories: [wanted, other] }, direction: 'backwards' }),
      );
      expect(bothBackwards.map((event) => event.id)).toEqual(both.map((event) => event.id).reverse());
    });
    if (!traits.readsPages)
      test('has no readAllPages, as it declares (its readers read event by event)', () => {
        expect(store.readAllPages).toBeUndefined();
      });
    else
      test('readAllPages: the pages hold what readAll reads, none empty, whatever the options', async () => {
        expect(store.readAllPages).toBeInstanceOf(Function);
        const readAllPages = store.readAllPages!.bind(store);
        const [wanted, other] = [uniqueCategory(), uniqueCategory()];
        const before = await store.headPosition();
        for (let round = 0; round < 3; round++) {
          await store.append(uniqueStream(wanted), newEvents(400));
          await store.append(uniqueStream(other), newEvents(300));
        }
        const middle = (await collect(store.readAll({ after: before, maxCount: 1000 })))[999]!.position;
        const pagesOf = async (options: ReadAllOptions): Promise<RecordedEvent[]> => {
          const events: RecordedEvent[] = [];
          for await (const page of readAllPages(options)) {
            expect(page.length).toBeGreaterThan(0);
            events.push(...page);
          }
          return events;
        };
        const filter = { categories: [wanted] };
        for (const options of [
          { after: before },
          { after: before, maxCount: 1 },
          { after: before, maxCount: 777 },
          { after: middle, direction: 'backwards' as const, maxCount: 900 },
          { after: before, filter },
          { after: middle, filter, maxCount: 450 },
          { direction: 'backwards' as const, filter, maxCount: 1001 },
          { after: before, maxCount: 0 },
        ])
          expect(await pagesOf(options)).toEqual(await collect(store.readAll(options)));
      });
  });

  describe('subscribeToAll', () => {
    test('catches up, reports caught-up, then delivers live events', async () => {
      const before = await store.headPosition();
      const stream = uniqueStream();
      const mine = new Set([stream]);
      const historic = newEvents(3);
      await store.append(stream, historic);

      const reader = subscribe({ after: before });
      const caughtUp = await reader.until(isCaughtUp);
      expect(eventsOf(caughtUp, mine).map((event) => event.id)).toEqual(historic.map((event) => event.id));
      const caughtUpPosition = progressPosition(caughtUp[caughtUp.length - 1]);
      expect(typeof caughtUpPosition).toBe('bigint');
      expect(caughtUpPosition >= eventsOf(caughtUp, mine)[2]!.position).toBe(true);
      expectStrictlyIncreasing(eventsOf(caughtUp).map((event) => event.position));

      const live = newEvents(2);
      const appended = await store.append(stream, live);
      const delivered = await reader.events(2, mine);
      expect(delivered.map((event) => event.id)).toEqual(live.map((event) => event.id));
      expect(delivered.map((event) => event.revision)).toEqual([3n, 4n]);
      expect(delivered[1]!.position).toBe(appended.position);
      expect(typeof delivered[0]!.position).toBe('bigint');
    });

    test('resumes after a checkpoint, exclusively', async () => {
      const stream = uniqueStream();
      const events = newEvents(3);
      await store.append(stream, events);
      const stored = await collect(store.readStream(stream));

      const reader = subscribe({ after: stored[1]!.position });
      const [resumed] = await reader.events(1, new Set([stream]));
      expect(resumed!.id).toBe(events[2]!.id);
      expect(resumed!.position).toBe(stored[2]!.position);
    });

    test('filters by category and reports progress over skipped events', async () => {
      const before = await store.headPosition();
      const [wanted, other] = [uniqueCategory(), uniqueCategory()];
      const wantedStream = uniqueStream(wanted);
      const first = newEvent();
      const firstResult = await store.append(wantedStream, [first]);
      for (let batch = 0; batch < 5; batch++) await store.append(uniqueStream(other), newEvents(50));

      const reader = subscribe({ after: before, filter: { categories: [wanted] } });
      const items = await reader.until(
        (item) =>
          (item.kind === 'checkpoint' || item.kind === 'caught-up') && item.position > firstResult.position,
      );
      expect(eventsOf(items).map((event) => event.id)).toEqual([first.id]);
      const progress = progressPosition(items[items.length - 1]);
      expect(typeof progress).toBe('bigint');

      const next = newEvent();
      await store.append(wantedStream, [next]);
      await store.append(uniqueStream(other), newEvents(2));
      const fromProgress = subscribe({ after: progress, filter: { categories: [wanted] } });
      const [resumed] = await fromProgress.events(1, new Set([wantedStream]));
      expect(resumed!.id).toBe(next.id);
      const [live] = await reader.events(1, new Set([wantedStream]));
      expect(live!.id).toBe(next.id);
    });

    test('a subscriber started before the first append of its category receives it live', async () => {
      const category = uniqueCategory();
      const reader = subscribe({ filter: { categories: [category] } });
      const caughtUp = await reader.until(isCaughtUp, 20_000);
      expect(eventsOf(caughtUp)).toEqual([]);

      const stream = uniqueStream(category);
      const event = newEvent();
      const result = await store.append(stream, [event], { expectedRevision: 'no_stream' });
      const [delivered] = await reader.events(1, new Set([stream]));
      expect(delivered).toMatchObject({
        id: event.id,
        streamId: stream,
        revision: 0n,
        position: result.position,
      });
    });

    test('close ends the iteration of a consumer waiting for live events', async () => {
      await store.append(uniqueStream(), [newEvent()]);
      const reader = subscribe({ after: await store.headPosition() });
      await reader.until(isCaughtUp);
      const waiting = reader.next();
      await new Promise((resolve) => setTimeout(resolve, 50)); // the consumer is now waiting for a live event
      await reader.close();
      expect(await waiting).toEqual({ done: true, value: undefined });
    });

    test('delivers many events across many streams in order, without gaps or duplicates', async () => {
      const category = uniqueCategory();
      const streams = Array.from({ length: 100 }, () => uniqueStream(category));
      const reader = subscribe({ after: await store.headPosition(), filter: { categories: [category] } });
      await reader.until(isCaughtUp);

      // Consume while appending, so delivery mixes live wake-ups and catch-up reads.
      const delivering = reader.events(3000, new Set(streams));
      const appendedIds: string[] = [];
      for (let round = 0; round < 3; round++) {
        for (const stream of streams) {
          const events = newEvents(10);
          await store.append(stream, events);
          appendedIds.push(...events.map((event) => event.id));
        }
      }
      const delivered = await delivering;
      expect(delivered.map((event) => event.id)).toEqual(appendedIds);
      expectStrictlyIncreasing(delivered.map((event) => event.position));
      const revisionsByStream = new Map<string, bigint[]>();
      for (const event of delivered) {
        revisionsByStream.set(event.streamId, [
          ...(revisionsByStream.get(event.streamId) ?? []),
          event.revision,
        ]);
      }
      for (const revisions of revisionsByStream.values()) {
        expect(revisions).toEqual(Array.from({ length: 30 }, (_, i) => BigInt(i)));
      }

      const replayed = await collect(store.readAll({ filter: { categories: [category] } }));
      expect(replayed.map((event) => event.id)).toEqual(appendedIds);
    }, 60_000);
  });
}
