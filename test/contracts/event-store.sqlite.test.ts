import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventIdConflictError } from '../../infra/event-store/port';
import { categoryOf } from '../../contracts/streams';
import { createSqliteEventStore } from '../../infra/event-store/sqlite';
import {
  collect,
  eventStoreContract,
  newEvent,
  newEvents,
  SubscriptionReader,
  uniqueCategory,
  uniqueStream,
} from './event-store';
import { describeContract } from '../support/adapter-report';

function temporaryDirectory(): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'event-store-sqlite-'));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

for (const groupCommit of [false, true]) {
  describeContract(
    'event-store',
    groupCommit ? 'sqlite (group commit)' : 'sqlite',
    { kind: 'embedded' },
    () => {
      eventStoreContract(
        async () => {
          const directory = temporaryDirectory();
          const store = createSqliteEventStore({
            path: join(directory.path, 'events.db'),
            pollIntervalMs: 50,
            groupCommit,
          });
          return {
            store,
            cleanup: async () => {
              await store.close();
              directory.remove();
            },
          };
        },
        { readsPages: true },
      );
    },
  );
}

describe('sqlite event store with group commit', () => {
  test('appends of one turn commit together, yet a failing expectation fails only its own append', async () => {
    const directory = temporaryDirectory();
    const store = createSqliteEventStore({ path: join(directory.path, 'events.db'), groupCommit: true });
    try {
      const stream = uniqueStream();
      const results = await Promise.allSettled([
        store.append(stream, newEvents(1), { expectedRevision: 'no_stream' }),
        store.append(stream, newEvents(1), { expectedRevision: 'no_stream' }),
        store.append(stream, newEvents(2), { expectedRevision: 0n }),
        store.append(uniqueStream(), newEvents(1)),
      ]);
      expect(results.map((result) => result.status)).toEqual([
        'fulfilled',
        'rejected',
        'fulfilled',
        'fulfilled',
      ]);
      const revisions = (await collect(store.readStream(stream))).map((event) => event.revision);
      expect(revisions).toEqual([0n, 1n, 2n]);
      const positions = results.flatMap((result) =>
        result.status === 'fulfilled' ? [result.value.position] : [],
      );
      expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : 1)));
    } finally {
      await store.close();
      directory.remove();
    }
  });
});

describe('sqlite appendToStreams', () => {
  test('a one-event append whose id another stream holds fails alone, keeping nothing, in the shared transaction', async () => {
    const directory = temporaryDirectory();
    const store = createSqliteEventStore({ path: join(directory.path, 'events.db') });
    try {
      const held = newEvent();
      await store.append(uniqueStream(), [held]);
      const [before, taken, after] = [uniqueStream(), uniqueStream(), uniqueStream()];
      const outcomes = await store.appendToStreams([
        { streamId: before, events: [newEvent()], expectedRevision: 'no_stream' },
        { streamId: taken, events: [held], expectedRevision: 'no_stream' },
        { streamId: after, events: [newEvent()], expectedRevision: 'no_stream' },
      ]);
      expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, false, true]);
      expect(outcomes[1]!.ok ? undefined : outcomes[1]!.error).toBeInstanceOf(EventIdConflictError);
      expect(await collect(store.readStream(taken))).toEqual([]);
      const positions = outcomes.flatMap((outcome) => (outcome.ok ? [outcome.result.position] : []));
      // Consecutive: the failed insert left no row behind.
      expect(positions[1]! - positions[0]!).toBe(1n);
      expect(await store.headPosition()).toBe(positions[1]);
    } finally {
      await store.close();
      directory.remove();
    }
  });
});

describe("sqlite subscriptions see this process's appends at once", () => {
  test('whether or not a subscriber was listening when they were made (no poll needed)', async () => {
    const directory = temporaryDirectory();
    // A poll interval no test waits for: every event below must arrive without polling.
    const store = createSqliteEventStore({
      path: join(directory.path, 'events.db'),
      pollIntervalMs: 600_000,
    });
    try {
      const stream = uniqueStream();
      const streams = new Set([stream]);
      const before = await store.append(stream, [newEvent()]);
      const first = new SubscriptionReader(store.subscribeToAll());
      expect((await first.events(1, streams))[0]!.position).toBe(before.position);
      const live = await store.append(stream, [newEvent()]);
      expect((await first.events(1, streams))[0]!.position).toBe(live.position);
      await first.close();

      const unheard = await store.appendToStreams([{ streamId: stream, events: [newEvent()] }]);
      const second = new SubscriptionReader(store.subscribeToAll({ after: live.position }));
      const [caughtUp] = await second.events(1, streams);
      expect(caughtUp!.position).toBe(unheard[0]!.ok ? unheard[0]!.result.position : undefined);
      await second.close();
    } finally {
      await store.close();
      directory.remove();
    }
  });
});

describe('sqlite event store on disk', () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  let path: string;

  beforeEach(() => {
    directory = temporaryDirectory();
    path = join(directory.path, 'events.db');
  });

  afterEach(() => directory.remove());

  test('events survive close and reopen, and revisions and positions continue', async () => {
    const stream = uniqueStream();
    const events = newEvents(3);
    const first = createSqliteEventStore({ path, synchronous: 'FULL' });
    const written = await first.append(stream, events, { expectedRevision: 'no_stream' });
    await first.close();

    const reopened = createSqliteEventStore({ path });
    try {
      expect(await reopened.headPosition()).toBe(written.position);
      const stored = await collect(reopened.readStream(stream));
      expect(stored.map((event) => event.id)).toEqual(events.map((event) => event.id));
      const next = await reopened.append(stream, [newEvent()], { expectedRevision: 2n });
      expect(next.nextExpectedRevision).toBe(3n);
      expect(next.position).toBe(written.position + 1n);
      expect(await reopened.append(stream, events, { expectedRevision: 'no_stream' })).toEqual(written);
    } finally {
      await reopened.close();
    }
  });

  test('a second store on the same file sees the first one’s appends by polling', async () => {
    const writer = createSqliteEventStore({ path });
    const watcher = createSqliteEventStore({ path, pollIntervalMs: 20 });
    const reader = new SubscriptionReader(watcher.subscribeToAll());
    try {
      await reader.until((item) => item.kind === 'caught-up');
      const stream = uniqueStream();
      const event = newEvent();
      const result = await writer.append(stream, [event]);
      const [seen] = await reader.events(1, new Set([stream]));
      expect(seen).toMatchObject({ id: event.id, position: result.position, revision: 0n });
      await expect(writer.append(stream, [newEvent()], { expectedRevision: 'no_stream' })).rejects.toThrow();
      await watcher.append(stream, [newEvent()], { expectedRevision: 0n });
      expect((await collect(writer.readStream(stream))).map((stored) => stored.revision)).toEqual([0n, 1n]);
    } finally {
      await reader.close();
      await watcher.close();
      await writer.close();
    }
  });

  test('a subscriber in the same process is woken by the append, not by the poll', async () => {
    const store = createSqliteEventStore({ path, pollIntervalMs: 60_000 });
    const reader = new SubscriptionReader(store.subscribeToAll());
    try {
      await reader.until((item) => item.kind === 'caught-up');
      const stream = uniqueStream();
      const delivered = reader.events(1, new Set([stream]));
      await new Promise((resolve) => setTimeout(resolve, 50)); // let the subscription start waiting
      const started = performance.now();
      await store.append(stream, [newEvent()]);
      await delivered;
      expect(performance.now() - started).toBeLessThan(1000);
    } finally {
      await reader.close();
      await store.close();
    }
  });

  test("live subscribers of another process's appends read and parse each event once between them, and each gets its own", async () => {
    const writer = createSqliteEventStore({ path });
    // Like the projections thread: it appends nothing and hears of the writer's appends by notification.
    const watcher = createSqliteEventStore({ path, pollIntervalMs: 60_000 });
    const [wanted, other] = [uniqueStream(), uniqueStream()];
    const everything = new SubscriptionReader(watcher.subscribeToAll());
    const filtered = new SubscriptionReader(
      watcher.subscribeToAll({ filter: { categories: [categoryOf(wanted)] } }),
    );
    const parse = jest.spyOn(JSON, 'parse');
    try {
      await everything.until((item) => item.kind === 'caught-up');
      await filtered.until((item) => item.kind === 'caught-up');
      const wantedPositions: bigint[] = [];
      for (let round = 0; round < 12; round++) {
        const appended: bigint[] = [];
        const appendedWanted: bigint[] = [];
        for (const stream of [wanted, other]) {
          const count = 1 + ((round + appended.length) % 3);
          const { position } = await writer.append(stream, newEvents(count));
          const positions = Array.from({ length: count }, (_, index) => position - BigInt(count - 1 - index));
          appended.push(...positions);
          if (stream === wanted) appendedWanted.push(...positions);
        }
        wantedPositions.push(...appendedWanted);
        parse.mockClear();
        watcher.notifyExternalAppend();
        const [seen, seenWanted] = await Promise.all([
          everything.events(appended.length, new Set([wanted, other])),
          filtered.events(appendedWanted.length, new Set([wanted])),
        ]);
        expect(seen.map((event) => event.position)).toEqual(appended);
        expect(seenWanted.map((event) => event.position)).toEqual(appendedWanted);
        // Data and metadata of each event, parsed once: the second subscriber read them from the ring.
        expect(parse).toHaveBeenCalledTimes(2 * appended.length);
      }
      // A subscriber behind the ring reads the database on its own and misses nothing.
      const laggard = new SubscriptionReader(
        watcher.subscribeToAll({ filter: { categories: [categoryOf(wanted)] } }),
      );
      const all = await laggard.events(wantedPositions.length, new Set([wanted]));
      expect(all.map((event) => event.position)).toEqual(wantedPositions);
      await laggard.close();
    } finally {
      parse.mockRestore();
      await Promise.all([everything.close(), filtered.close()]);
      await watcher.close();
      await writer.close();
    }
  });

  test('a sparse category filter reports progress through long stretches of other events', async () => {
    const store = createSqliteEventStore({ path });
    const wanted = uniqueCategory();
    const wantedStream = uniqueStream(wanted);
    const reader = new SubscriptionReader(store.subscribeToAll({ filter: { categories: [wanted] } }));
    try {
      await store.append(wantedStream, [newEvent()]);
      for (let batch = 0; batch < 24; batch++) await store.append(uniqueStream(), newEvents(500));
      const last = await store.append(wantedStream, [newEvent()]);

      const items = await reader.until((item) => item.kind === 'caught-up');
      const kinds = items.map((item) => item.kind);
      expect(kinds.filter((kind) => kind === 'event')).toHaveLength(2);
      expect(kinds.filter((kind) => kind === 'checkpoint').length).toBeGreaterThanOrEqual(2);
      expect(kinds.indexOf('checkpoint')).toBeGreaterThan(kinds.indexOf('event'));
      const positions = items.map((item) => (item.kind === 'event' ? item.event.position : item.position));
      for (let index = 1; index < positions.length; index++) {
        expect(positions[index]! >= positions[index - 1]!).toBe(true);
      }
      expect(positions[positions.length - 1]).toBe(last.position);
    } finally {
      await reader.close();
      await store.close();
    }
  });

  test('a read of several categories pages through them in order, each event once, either way', async () => {
    const store = createSqliteEventStore({ path });
    try {
      const [first, second] = [uniqueCategory(), uniqueCategory()];
      const expected: string[] = [];
      // Pages (500 rows) end inside the categories' stretches, and other events lie between them.
      for (let round = 0; round < 4; round++) {
        for (const category of [first, second]) {
          const events = newEvents(301);
          await store.append(uniqueStream(category), events);
          expected.push(...events.map((event) => event.id));
        }
        await store.append(uniqueStream(), newEvents(150));
      }
      const filter = { categories: [first, second] };
      const forwards = await collect(store.readAll({ filter }));
      expect(forwards.map((event) => event.id)).toEqual(expected);
      const backwards = await collect(store.readAll({ filter, direction: 'backwards' }));
      expect(backwards.map((event) => event.id)).toEqual([...expected].reverse());
      const fromMiddle = await collect(
        store.readAll({ filter, after: forwards[700]!.position, maxCount: 600 }),
      );
      expect(fromMiddle.map((event) => event.id)).toEqual(expected.slice(701, 1301));
    } finally {
      await store.close();
    }
  });

  // ESDB has no index of event ids across streams, so this check is the embedded store's own.
  test('ids already stored in another stream are a conflict', async () => {
    const store = createSqliteEventStore({ path });
    try {
      const events = newEvents(1);
      await store.append(uniqueStream(), events);
      const other = uniqueStream();
      await expect(store.append(other, events)).rejects.toBeInstanceOf(EventIdConflictError);
      await expect(store.append(other, [newEvent(), newEvent(), ...events])).rejects.toBeInstanceOf(
        EventIdConflictError,
      );
      expect(await collect(store.readStream(other))).toHaveLength(0);
    } finally {
      await store.close();
    }
  });

  test('the same id twice in one append is a conflict', async () => {
    const store = createSqliteEventStore({ path });
    try {
      const event = newEvent();
      const stream = uniqueStream();
      await expect(store.append(stream, [event, event])).rejects.toBeInstanceOf(EventIdConflictError);
      expect(await collect(store.readStream(stream))).toHaveLength(0);
    } finally {
      await store.close();
    }
  });

  test('a closed store refuses further work', async () => {
    const store = createSqliteEventStore({ path });
    await store.close();
    await expect(store.append(uniqueStream(), [newEvent()])).rejects.toThrow('event store closed');
    await expect(store.headPosition()).rejects.toThrow('event store closed');
  });
});

test('the head of some categories is their last event, by an index seek, whoever appended it', async () => {
  const directory = temporaryDirectory();
  const path = join(directory.path, 'events.db');
  const [writer, reader] = [createSqliteEventStore({ path }), createSqliteEventStore({ path })];
  try {
    const watched = uniqueCategory();
    expect(await reader.categoryHead!([watched])).toBe(0n);
    const last = await writer.append(uniqueStream(watched), [newEvent()]);
    await writer.append(uniqueStream(), newEvents(2));
    expect(await reader.categoryHead!([watched, uniqueCategory()])).toBe(last.position);
    expect(await reader.categoryHead!([])).toBe(0n);
    expect(await reader.headPosition()).toBe(last.position + 2n);
  } finally {
    await writer.close();
    await reader.close();
    directory.remove();
  }
});

test('the heads, kept between commits, are never behind: any mix of appends and reads on two connections', async () => {
  const directory = temporaryDirectory();
  const path = join(directory.path, 'events.db');
  const stores = [createSqliteEventStore({ path }), createSqliteEventStore({ path })];
  const categories = [uniqueCategory(), uniqueCategory()];
  const last = new Map<string, bigint>();
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            store: fc.integer({ min: 0, max: 1 }),
            category: fc.integer({ min: 0, max: 1 }),
            append: fc.boolean(),
          }),
          { minLength: 1, maxLength: 20 },
        ),
        async (steps) => {
          for (const step of steps) {
            const store = stores[step.store]!;
            const category = categories[step.category]!;
            if (step.append) {
              const { position } = await store.append(uniqueStream(category), [newEvent()]);
              last.set(category, position);
            }
            expect(await store.categoryHead!([category])).toBe(last.get(category) ?? 0n);
            expect(await store.categoryHead!(categories)).toBe(
              [...last.values()].reduce((highest, position) => (position > highest ? position : highest), 0n),
            );
          }
        },
      ),
      { numRuns: 30 },
    );
  } finally {
    for (const store of stores) await store.close();
    directory.remove();
  }
});
