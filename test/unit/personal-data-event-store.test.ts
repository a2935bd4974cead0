import fc from 'fast-check';
import type { NewEvent, RecordedEvent } from '../../contracts/events/envelope';
import { ERASED_VALUE, type DataPath } from '../../contracts/personal-data';
import { PlatformError } from '../../contracts/errors';
import { isSealedValue } from '../../infra/secrets/personal-values';
import * as aead from '../../infra/secrets/aead';
import { createSqliteEventStore } from '../../infra/event-store/sqlite';
import { personalDataStore } from '../support/personal-data';
import { MemoryEventStore } from '../support/memory-event-store';
import {
  KEPT_KEYS_PER_APPEND,
  PersonalDataEventStore,
  READ_AHEAD,
} from '../../infra/event-store/personal-data';
import { localKeyWrapper } from '../../infra/keys/local-wrapper';
import { createSqliteDataKeyStore } from '../../infra/keys/sqlite';
import type { DataKeyStore } from '../../infra/keys/port';
import type { EventStore } from '../../infra/event-store/port';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { temporaryDirectory } from '../support/temporary-directory';
import { BroadcastChannel } from 'node:worker_threads';

let sequence = 0;

function newEvent(
  data: unknown,
  sealing?: { subject: string; paths: readonly DataPath[] },
  type = 'RecordCreated',
): NewEvent {
  sequence += 1;
  return {
    id: `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
    type,
    schemaVersion: 1,
    data,
    metadata: {
      tenant: 'acme',
      actor: { userId: '1' },
      correlationId: 'c',
      causationId: 'c',
      commandId: `command-${sequence}`,
      occurredAt: new Date().toISOString(),
    },
    ...(sealing && { sealing }),
  };
}

async function all(events: AsyncIterable<RecordedEvent>): Promise<RecordedEvent[]> {
  const read: RecordedEvent[] = [];
  for await (const event of events) read.push(event);
  return read;
}

/**
 * `keys` with its reads held: each is answered as it was when asked, once `release` is called (as a MongoDB
 * store's query in flight may be, while an erasure is done meanwhile).
 */
function heldKeyReads(keys: DataKeyStore): { keys: DataKeyStore; release: () => void } {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    keys: {
      ...keys,
      existing: async (subjects) => {
        const answer = await keys.existing(subjects);
        await released;
        return answer;
      },
    },
    release: () => release(),
  };
}

/** JSON values as events carry them (no undefined, no -0: JSON has neither). */
const jsonValue = fc.jsonValue().map((value) => JSON.parse(JSON.stringify(value)) as unknown);

describe('the personal-data event store', () => {
  test('values at the sealing paths are stored sealed, read back as they were, and show as erased once the subject is', async () => {
    const store = personalDataStore();
    await store.append('record-acme.1', [
      newEvent(
        { recordId: 1, name: 'Ada', fields: { email: 'ada@x.io', n: 3, none: null } },
        {
          subject: 'record:acme:1',
          paths: [['name'], ['fields', 'email'], ['fields', 'none'], ['fields', 'missing']],
        },
      ),
    ]);
    const [stored] = await all(store.sealed.readStream('record-acme.1'));
    const data = stored!.data as { name: string; fields: Record<string, unknown> };
    expect(isSealedValue(data.name)).toBe(true);
    expect(isSealedValue(data.fields.email)).toBe(true);
    expect(data.fields).toMatchObject({ n: 3, none: null });
    expect(data.fields).not.toHaveProperty('missing');
    expect(stored!.metadata.subject).toBe('record:acme:1');
    expect(stored).not.toHaveProperty('sealing');

    const [read] = await all(store.readStream('record-acme.1'));
    expect(read!.data).toEqual({ recordId: 1, name: 'Ada', fields: { email: 'ada@x.io', n: 3, none: null } });

    expect(await store.erase('record:acme:1', Date.now())).toBe(true);
    expect(await store.erase('record:acme:1', Date.now())).toBe(false);
    const [erased] = await all(store.readAll());
    expect(erased!.data).toEqual({
      recordId: 1,
      name: ERASED_VALUE,
      fields: { email: ERASED_VALUE, n: 3, none: null },
    });
  });

  test('an erased subject takes nothing new; another append of the same call still goes', async () => {
    const store = personalDataStore();
    await store.append('record-acme.2', [
      newEvent({ name: 'Bo' }, { subject: 'record:acme:2', paths: [['name']] }),
    ]);
    await store.erase('record:acme:2', Date.now());
    await expect(
      store.append('record-acme.2', [
        newEvent({ name: 'Bo 2' }, { subject: 'record:acme:2', paths: [['name']] }),
      ]),
    ).rejects.toBeInstanceOf(PlatformError);
    const outcomes = await store.appendToStreams([
      {
        streamId: 'record-acme.2',
        events: [newEvent({ name: 'x' }, { subject: 'record:acme:2', paths: [['name']] })],
      },
      {
        streamId: 'record-acme.3',
        events: [newEvent({ name: 'Cy' }, { subject: 'record:acme:3', paths: [['name']] })],
      },
    ]);
    expect(outcomes.map((outcome) => outcome.ok)).toEqual([false, true]);
    const [kept] = await all(store.readStream('record-acme.3'));
    expect(kept!.data).toEqual({ name: 'Cy' });
  });

  test("a call's appends take their keys in one key-store call, each subject once; a failing key store fails every append, storing none", async () => {
    const keys = createSqliteDataKeyStore({
      path: join(temporaryDirectory('batched-keys-'), 'keys.db'),
      wrapper: localKeyWrapper(randomBytes(32)),
    });
    const asked: string[][] = [];
    let failing = false;
    const log = new MemoryEventStore();
    const store = new PersonalDataEventStore(log, {
      ...keys,
      keysFor: async (subjects) => {
        asked.push([...subjects]);
        if (failing) throw new Error('the key store is down');
        return keys.keysFor(subjects);
      },
    });
    const appends = (from: number) =>
      Array.from({ length: 50 }, (_, index) => {
        const subject = `record:acme:${from + index}`;
        return {
          streamId: `record-acme.${from + index}`,
          events: [
            newEvent({ name: `Name ${from + index}` }, { subject, paths: [['name']] }),
            newEvent({ note: 'called' }, { subject, paths: [['note']] }),
            newEvent({ amount: 1 }, { subject, paths: [] }),
          ],
        };
      });
    const outcomes = await store.appendToStreams(appends(100));
    expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
    expect(asked).toHaveLength(1);
    expect([...asked[0]!].sort()).toEqual(
      appends(100)
        .map(({ streamId }) => streamId.replace('record-acme.', 'record:acme:'))
        .sort(),
    );
    // Cached now: sealing more for the same subjects asks nothing.
    expect(
      (
        await store.appendToStreams([
          {
            ...appends(100)[0]!,
            events: [newEvent({ name: 'Again' }, { subject: 'record:acme:100', paths: [['name']] })],
          },
        ])
      )[0]!.ok,
    ).toBe(true);
    expect(asked).toHaveLength(1);

    failing = true;
    const failed = await store.appendToStreams(appends(200));
    expect(failed).toHaveLength(50);
    for (const outcome of failed) {
      expect(outcome.ok).toBe(false);
      expect(!outcome.ok && (outcome.error as Error).message).toBe('the key store is down');
    }
    await expect(store.append('record-acme.300', appends(300)[0]!.events)).rejects.toThrow(
      'the key store is down',
    );
    expect(await all(log.readAll())).toHaveLength(50 * 3 + 1);
    const [first] = await all(store.readStream('record-acme.100'));
    expect(first!.data).toEqual({ name: 'Name 100' });
  });

  test("a bulk append's keys seal it and are not kept (a scan does not fill the cache); an erasure known here still stands in it", async () => {
    const keys = createSqliteDataKeyStore({
      path: join(temporaryDirectory('bulk-keys-'), 'keys.db'),
      wrapper: localKeyWrapper(randomBytes(32)),
    });
    const asked: string[][] = [];
    const store = new PersonalDataEventStore(new MemoryEventStore(), {
      ...keys,
      keysFor: async (subjects) => {
        asked.push([...subjects]);
        return keys.keysFor(subjects);
      },
    });
    // One more new subject than are kept, beside the erased one.
    const count = KEPT_KEYS_PER_APPEND + 2;
    const append = (id: number, name: string) => ({
      streamId: `record-acme.${id}`,
      events: [newEvent({ name }, { subject: `record:acme:${id}`, paths: [['name']] })],
    });
    await store.append('record-acme.1', [append(1, 'Erased soon').events[0]!]);
    await store.erase('record:acme:1', Date.now());
    const bulk = Array.from({ length: count }, (_, index) => append(index + 1, `Name ${index + 1}`));
    const outcomes = await store.appendToStreams(bulk);
    expect(outcomes.map((outcome) => outcome.ok)).toEqual([false, ...Array<boolean>(count - 1).fill(true)]);
    expect(!outcomes[0]!.ok && outcomes[0]!.error).toBeInstanceOf(PlatformError);
    // Not kept by the bulk append: the next append of one of its subjects asks for the key; kept from then on.
    asked.length = 0;
    for (let round = 0; round < 2; round++)
      expect((await store.appendToStreams([append(2, `Again ${round}`)]))[0]!.ok).toBe(true);
    expect(asked).toEqual([['record:acme:2']]);
    for (let id = 3; id <= count; id++) {
      const [read] = await all(store.readStream(`record-acme.${id}`));
      expect(read!.data).toEqual({ name: `Name ${id}` });
    }
    // A small append's keys are kept, as before.
    asked.length = 0;
    const small = Array.from({ length: KEPT_KEYS_PER_APPEND }, (_, index) => append(1000 + index, 'Small'));
    await store.appendToStreams(small);
    await store.appendToStreams(small);
    expect(asked).toHaveLength(1);
  });

  test("a user's text shaped like a sealed value, in an event with no sealing, is left as it is", async () => {
    const store = personalDataStore();
    await store.append('record-acme.4', [
      newEvent({ name: 'Di' }, { subject: 'record:acme:4', paths: [['name']] }),
    ]);
    const [stored] = await all(store.sealed.readStream('record-acme.4'));
    const lookalike = (stored!.data as { name: string }).name;
    await store.append('record-acme.5', [newEvent({ note: lookalike })]);
    const [read] = await all(store.readStream('record-acme.5'));
    expect(read!.data).toEqual({ note: lookalike });
  });

  test.each([
    ['in pages (SQLite)', (): EventStore => createSqliteEventStore({ path: ':memory:' })],
    ['event by event', (): EventStore => new MemoryEventStore()],
  ])(
    'a store read %s: its events opened in order, keys read a batch at a time, and a reader that stops ends the read beneath it',
    async (_read, logOf) => {
      const keys = createSqliteDataKeyStore({
        path: join(temporaryDirectory('read-ahead-'), 'keys.db'),
        wrapper: localKeyWrapper(randomBytes(32)),
      });
      const log = logOf();
      const count = 2 * READ_AHEAD + 10;
      const data = (id: number): unknown => ({ recordId: id, name: `Name ${id}` });
      await new PersonalDataEventStore(log, keys).appendToStreams(
        Array.from({ length: count }, (_, index) => ({
          streamId: `record-acme.${index + 1}`,
          events: [newEvent(data(index + 1), { subject: `record:acme:${index + 1}`, paths: [['name']] })],
        })),
      );
      const keyReads: number[] = [];
      const reader = new PersonalDataEventStore(log, {
        ...keys,
        existing: (subjects) => {
          keyReads.push(subjects.length);
          return keys.existing(subjects);
        },
      });
      try {
        const read = await all(reader.readAll());
        expect(read.map((event) => event.data)).toEqual(
          Array.from({ length: count }, (_, index) => data(index + 1)),
        );
        // Each subject's key read once, a batch of subjects at a time.
        expect(keyReads.reduce((sum, subjects) => sum + subjects, 0)).toBe(count);
        expect(keyReads.every((subjects) => subjects <= READ_AHEAD)).toBe(true);
        expect(keyReads.length).toBeLessThanOrEqual(Math.ceil(count / READ_AHEAD) + 1);

        let ended = false;
        const endsAfterward = <T>(read: AsyncIterable<T>): AsyncIterable<T> =>
          (async function* () {
            try {
              yield* read;
            } finally {
              ended = true;
            }
          })();
        const readPages = log.readAllPages?.bind(log);
        if (readPages)
          jest.spyOn(log, 'readAllPages').mockImplementation((options) => endsAfterward(readPages(options)));
        else {
          const readEvents = log.readAll.bind(log);
          jest.spyOn(log, 'readAll').mockImplementation((options) => endsAfterward(readEvents(options)));
        }
        const stopped: unknown[] = [];
        for await (const event of reader.readAll()) {
          stopped.push(event.data);
          if (stopped.length === 3) break;
        }
        expect(stopped).toEqual([data(1), data(2), data(3)]);
        expect(ended).toBe(true);
      } finally {
        await reader.close();
      }
    },
  );

  test('a subscription reveals, and reading an erasure makes this store forget the key at once', async () => {
    const writer = personalDataStore(createSqliteEventStore({ path: ':memory:', pollIntervalMs: 10 }));
    await writer.append('record-acme.6', [
      newEvent({ name: 'Eve' }, { subject: 'record:acme:6', paths: [['name']] }),
    ]);
    const subscription = writer.subscribeToAll();
    const seen: unknown[] = [];
    for await (const item of subscription) {
      if (item.kind === 'event') seen.push(item.event.data);
      if (item.kind === 'caught-up') break;
    }
    await subscription.close();
    expect(seen).toEqual([{ name: 'Eve' }]);
    const [stored] = await all(writer.sealed.readStream('record-acme.6'));
    // The erasure's event, as another process would read it: the key is gone for this store's readers at once.
    await writer.append('record-acme.6', [
      newEvent({ recordId: 6 }, { subject: 'record:acme:6', paths: [] }, 'RecordErased'),
    ]);
    const events = await all(writer.readStream('record-acme.6'));
    expect(events.at(-1)!.metadata.subject).toBe('record:acme:6');
    expect((await writer.reveal(stored!)).data).toEqual({ name: ERASED_VALUE });
  });

  test('subscriptions of one store share a key read and an opened event; an erasure here drops what was opened', async () => {
    const path = join(temporaryDirectory('shared-open-'), 'keys.db');
    const wrapper = localKeyWrapper(randomBytes(32));
    const log = createSqliteEventStore({ path: ':memory:', pollIntervalMs: 10 });
    const writer = new PersonalDataEventStore(log, createSqliteDataKeyStore({ path, wrapper }));
    await writer.append('record-acme.8', [
      newEvent({ name: 'Gus' }, { subject: 'record:acme:8', paths: [['name']] }),
    ]);
    const keys = createSqliteDataKeyStore({ path, wrapper });
    const reads: string[][] = [];
    const reader = new PersonalDataEventStore(log, {
      ...keys,
      existing: (subjects) => {
        reads.push([...subjects]);
        return keys.existing(subjects);
      },
    });
    const firstEvents = async (): Promise<RecordedEvent[]> => {
      const subscription = reader.subscribeToAll();
      const seen: RecordedEvent[] = [];
      for await (const item of subscription) {
        if (item.kind === 'event') seen.push(item.event);
        if (item.kind === 'caught-up') break;
      }
      await subscription.close();
      return seen;
    };
    const [one, two, three] = await Promise.all([firstEvents(), firstEvents(), firstEvents()]);
    expect(one!.map((event) => event.data)).toEqual([{ name: 'Gus' }]);
    // The same opened event, from one key read.
    expect(two![0]).toBe(one![0]);
    expect(three![0]).toBe(one![0]);
    expect(reads).toEqual([['record:acme:8']]);

    await reader.erase('record:acme:8', Date.now());
    expect((await firstEvents()).map((event) => event.data)).toEqual([{ name: ERASED_VALUE }]);
    await keys.close();
    await writer.close();
  });

  test('a value sealed here and read back from the stream is taken as sealed, unopened; another decision under its id reads as stored, an erasure as erased', async () => {
    const path = join(temporaryDirectory('sealed-here-'), 'keys.db');
    const keys = createSqliteDataKeyStore({ path, wrapper: localKeyWrapper(randomBytes(32)) });
    let keyReads = 0;
    const store = new PersonalDataEventStore(new MemoryEventStore(), {
      ...keys,
      existing: (subjects) => {
        keyReads += 1;
        return keys.existing(subjects);
      },
    });
    const given = newEvent({ name: 'Hal', n: 1 }, { subject: 'record:acme:9', paths: [['name']] });
    await store.append('record-acme.9', [given]);
    const [stored] = await all(store.sealed.readStream('record-acme.9'));
    // As the stream carries it: a copy of the stored event, its data parsed again.
    const relayed = { ...stored!, data: JSON.parse(JSON.stringify(stored!.data)) as unknown };
    const opens = jest.spyOn(aead, 'xchachaOpenText');
    try {
      expect((await store.reveal(relayed)).data).toEqual({ name: 'Hal', n: 1 });
      expect(opens).not.toHaveBeenCalled();
    } finally {
      opens.mockRestore();
    }
    expect(keyReads).toBe(0);
    // Another event sealed under the same id, whose append failed: the one stored reads as stored.
    const other = newEvent({ name: 'Ida' }, { subject: 'record:acme:9', paths: [['name']] });
    await expect(store.append('record-acme.9b', [{ ...other, id: given.id }])).rejects.toThrow('conflicting');
    expect((await store.reveal(relayed)).data).toEqual({ name: 'Hal', n: 1 });
    // A value sealed here, copied into another subject's event, is not that subject's.
    const copied = { ...relayed, metadata: { ...relayed.metadata, subject: 'record:acme:10' } };
    expect((await store.reveal(copied)).data).toEqual({ name: ERASED_VALUE, n: 1 });
    await store.erase('record:acme:9', Date.now());
    expect((await store.reveal(relayed)).data).toEqual({ name: ERASED_VALUE, n: 1 });
    await store.close();
  });

  test('a value sealed here whose subject another process erased reads as erased once the key is looked up again, never taken as sealed', async () => {
    const path = join(temporaryDirectory('sealed-here-erased-'), 'keys.db');
    const wrapper = localKeyWrapper(randomBytes(32));
    const log = new MemoryEventStore();
    const here = new PersonalDataEventStore(log, createSqliteDataKeyStore({ path, wrapper }), {
      keyCacheMs: 1,
    });
    const there = new PersonalDataEventStore(log, createSqliteDataKeyStore({ path, wrapper }));
    const given = newEvent({ name: 'Gus' }, { subject: 'record:acme:11', paths: [['name']] });
    await here.append('record-acme.11', [given]);
    const [stored] = await all(here.sealed.readStream('record-acme.11'));
    const relayed = { ...stored!, data: JSON.parse(JSON.stringify(stored!.data)) as unknown };
    expect((await here.reveal(relayed)).data).toEqual({ name: 'Gus' });
    await there.erase('record:acme:11', Date.now());
    // Past the key's time in the cache: the next reveal looks the key up.
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await here.reveal(relayed)).data).toEqual({ name: ERASED_VALUE });
    await Promise.all([here.close(), there.close()]);
  });

  test('a read whose keys arrive after an erasure here (a slow key store) shows the subject erased, then and after', async () => {
    const path = join(temporaryDirectory('slow-keys-'), 'keys.db');
    const keys = createSqliteDataKeyStore({ path, wrapper: localKeyWrapper(randomBytes(32)) });
    const log = new MemoryEventStore();
    const writer = new PersonalDataEventStore(log, keys);
    await writer.appendToStreams(
      [7, 8].map((id) => ({
        streamId: `record-acme.${id}`,
        events: [newEvent({ name: `Name ${id}` }, { subject: `record:acme:${id}`, paths: [['name']] })],
      })),
    );
    const held = heldKeyReads(keys);
    const reader = new PersonalDataEventStore(log, held.keys);
    const reading = all(reader.readAll());
    await new Promise((resolve) => setImmediate(resolve));
    await reader.erase('record:acme:7', Date.now());
    held.release();
    const names = (read: RecordedEvent[]) => read.map((event) => (event.data as { name: string }).name);
    expect(names(await reading)).toEqual([ERASED_VALUE, 'Name 8']);
    expect(names(await all(reader.readAll()))).toEqual([ERASED_VALUE, 'Name 8']);
    await reader.close();
  });

  test("a fresh look after another process's erasure reads the key itself, rather than take a key read begun before", async () => {
    const path = join(temporaryDirectory('fresh-look-'), 'keys.db');
    const wrapper = localKeyWrapper(randomBytes(32));
    const log = new MemoryEventStore();
    const keys = createSqliteDataKeyStore({ path, wrapper });
    const held = heldKeyReads(keys);
    const here = new PersonalDataEventStore(log, held.keys);
    const there = new PersonalDataEventStore(log, createSqliteDataKeyStore({ path, wrapper }));
    await there.append('record-acme.12', [
      newEvent({ name: 'Hana' }, { subject: 'record:acme:12', paths: [['name']] }),
    ]);
    const [stored] = await all(there.sealed.readStream('record-acme.12'));
    const begunBefore = here.revealData(stored!.data, 'record:acme:12');
    await new Promise((resolve) => setImmediate(resolve));
    await there.erase('record:acme:12', Date.now());
    const fresh = here.revealData(stored!.data, 'record:acme:12', { fresh: true });
    held.release();
    expect(await begunBefore).toEqual({ name: 'Hana' });
    expect(await fresh).toEqual({ name: ERASED_VALUE });
    // What the fresh look found stands for the reads after it, though the read begun before cached the key.
    expect(await here.revealData(stored!.data, 'record:acme:12')).toEqual({ name: ERASED_VALUE });
    await Promise.all([here.close(), there.close()]);
  });

  test("another process's erasure: a cached key still opens for a while, a fresh look (what a delivery takes) finds it erased", async () => {
    const path = join(temporaryDirectory('shared-keys-'), 'keys.db');
    const wrapper = localKeyWrapper(randomBytes(32));
    const log = new MemoryEventStore();
    const here = new PersonalDataEventStore(log, createSqliteDataKeyStore({ path, wrapper }));
    const there = new PersonalDataEventStore(log, createSqliteDataKeyStore({ path, wrapper }));
    await here.append('record-acme.7', [
      newEvent({ name: 'Flo' }, { subject: 'record:acme:7', paths: [['name']] }),
    ]);
    expect((await all(there.readStream('record-acme.7')))[0]!.data).toEqual({ name: 'Flo' });
    await here.erase('record:acme:7', Date.now());
    const [stored] = await all(here.sealed.readStream('record-acme.7'));
    expect(await there.revealData(stored!.data, 'record:acme:7')).toEqual({ name: 'Flo' });
    expect(await there.revealData(stored!.data, 'record:acme:7', { fresh: true })).toEqual({
      name: ERASED_VALUE,
    });
    expect(await there.revealData(stored!.data, 'record:acme:7')).toEqual({ name: ERASED_VALUE });
  });

  test("the stores of a process's threads share the keys they seal under and their erasures on their channel, never undoing an erasure", async () => {
    const path = join(temporaryDirectory('key-channel-'), 'keys.db');
    const wrapper = localKeyWrapper(randomBytes(32));
    const log = new MemoryEventStore();
    const channel = `key-channel-test ${path}`;
    /** A store on `log` and the key file, counting the subjects it reads from the key store. */
    const storeOn = (keyChannel: string | undefined) => {
      // NORMAL: the keys of one append are answered together (no fsync apiece), so they share one message.
      const keys = createSqliteDataKeyStore({ path, wrapper, synchronous: 'NORMAL' });
      const reads: string[] = [];
      const store = new PersonalDataEventStore(
        log,
        { ...keys, existing: (subjects) => (reads.push(...subjects), keys.existing(subjects)) },
        { keyCacheMs: 60_000, ...(keyChannel !== undefined && { keyChannel }) },
      );
      return { store, reads };
    };
    const writer = storeOn(channel);
    const reader = storeOn(channel);
    const outsider = storeOn(`${channel} elsewhere`);
    const stores = [writer, reader, outsider];
    try {
      // Two records in one append: their keys go in one message.
      await writer.store.appendToStreams(
        [11, 12].map((id) => ({
          streamId: `record-acme.${id}`,
          events: [newEvent({ name: `N${id}` }, { subject: `record:acme:${id}`, paths: [['name']] })],
        })),
      );
      // Read at once, before the turn ends: the keys and the values sealed were shared with the append, so the
      // reader takes the values as they were sealed, without opening them.
      const names = async (store: PersonalDataEventStore) =>
        (await all(store.readAll())).map((event) => event.data);
      const opens = jest.spyOn(aead, 'xchachaOpenText');
      try {
        expect(await names(reader.store)).toEqual([{ name: 'N11' }, { name: 'N12' }]);
        expect(await names(reader.store)).toEqual([{ name: 'N11' }, { name: 'N12' }]);
        expect(opens).not.toHaveBeenCalled();
      } finally {
        opens.mockRestore();
      }
      expect(reader.reads).toEqual([]);
      expect(await names(outsider.store)).toEqual([{ name: 'N11' }, { name: 'N12' }]);
      expect(outsider.reads.sort()).toEqual(['record:acme:11', 'record:acme:12']);

      // An erasure reaches the channel's other stores though their cached key has a minute left.
      await writer.store.erase('record:acme:11', Date.now());
      await new Promise((resolve) => setImmediate(resolve));
      expect(await names(reader.store)).toEqual([{ name: ERASED_VALUE }, { name: 'N12' }]);
      expect(await names(outsider.store)).toEqual([{ name: 'N11' }, { name: 'N12' }]);

      // A key shared late (made before the erasure was known) does not bring an erased subject back.
      const late = new BroadcastChannel(channel);
      late.postMessage({
        subjects: ['record:acme:11'],
        ids: ['AAAAAAAAAAAA'],
        keys: new Uint8Array(32),
        erased: [],
      });
      late.close();
      expect(await names(reader.store)).toEqual([{ name: ERASED_VALUE }, { name: 'N12' }]);
      // Nor is anything sealed for it any more, by any store.
      await expect(
        reader.store.append('record-acme.11', [
          newEvent({ name: 'again' }, { subject: 'record:acme:11', paths: [['name']] }),
        ]),
      ).rejects.toThrow(PlatformError);
    } finally {
      for (const { store } of stores) await store.close();
    }
  });

  test('anything else on the key channel is ignored: no key taken from it, no erasure undone, nothing thrown', async () => {
    const path = join(temporaryDirectory('key-channel-noise-'), 'keys.db');
    const wrapper = localKeyWrapper(randomBytes(32));
    const log = new MemoryEventStore();
    const channel = `key-channel-noise ${path}`;
    const writer = new PersonalDataEventStore(log, createSqliteDataKeyStore({ path, wrapper }), {
      keyChannel: channel,
    });
    const reader = new PersonalDataEventStore(log, createSqliteDataKeyStore({ path, wrapper }), {
      keyChannel: channel,
    });
    const sender = new BroadcastChannel(channel);
    try {
      for (const id of [21, 22])
        await writer.append(`record-acme.${id}`, [
          newEvent({ name: `N${id}` }, { subject: `record:acme:${id}`, paths: [['name']] }),
        ]);
      await writer.erase('record:acme:21', Date.now());
      const expected = [{ name: ERASED_VALUE }, { name: 'N22' }];
      const names = async () => (await all(reader.readAll())).map((event) => event.data);
      expect(await names()).toEqual(expected);
      // Record 21 is erased, 23 has no events: whatever is taken, the reads must not change.
      const subject = fc.constantFrom('record:acme:21', 'record:acme:23', 'not a subject');
      const keyId = fc.constantFrom('AAAAAAAAAAAA', 'short', 'AAAAAAAAAAA.');
      const keys = fc.oneof(
        fc.uint8Array({ minLength: 0, maxLength: 100 }),
        fc.constantFrom(new Uint8Array(32), new Uint8Array(64)),
        fc.string(),
      );
      const nearMiss = fc.record({
        subjects: fc.oneof(fc.array(subject, { maxLength: 3 }), subject),
        ids: fc.oneof(fc.array(keyId, { maxLength: 3 }), keyId),
        keys,
        erased: fc.oneof(fc.array(fc.string(), { maxLength: 2 }), fc.constant('record:acme:23')),
        values: fc.option(
          fc.record({
            sealed: fc.array(fc.string(), { maxLength: 2 }),
            json: fc.oneof(fc.array(fc.string(), { maxLength: 2 }), fc.string()),
            subjects: fc.array(subject, { maxLength: 2 }),
          }),
          { nil: undefined },
        ),
      });
      const wellFormed = fc.constant({
        subjects: ['record:acme:21'],
        ids: ['AAAAAAAAAAAA'],
        keys: new Uint8Array(32),
        erased: [],
      });
      await fc.assert(
        fc.asyncProperty(fc.oneof(fc.anything(), nearMiss, wellFormed), async (message) => {
          try {
            sender.postMessage(message);
          } catch {
            return; // Not cloneable: nothing was sent.
          }
          await new Promise((resolve) => setImmediate(resolve));
          expect(await names()).toEqual(expected);
        }),
        { numRuns: 60 },
      );
      // Even the real sealed text of a value, named with something that is not JSON, is opened instead.
      const sealedName = (await all(writer.sealed.readAll())).map(
        (event) => (event.data as { name: string }).name,
      )[1]!;
      sender.postMessage({
        subjects: [],
        ids: [],
        keys: new Uint8Array(0),
        erased: [],
        values: { sealed: [sealedName], json: ['{not json'], subjects: ['record:acme:22'] },
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(await names()).toEqual(expected);
    } finally {
      sender.close();
      await writer.close();
      await reader.close();
    }
  });

  test('any JSON at any path: sealed, it reads back equal; erased, exactly the sealed paths read as erased', async () => {
    const store = personalDataStore();
    let recordId = 100;
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(
          // Keys an object's prototype also answers: a copy made while opening must keep them as keys.
          fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), fc.constantFrom('__proto__', 'constructor')),
          jsonValue,
          { minKeys: 1, maxKeys: 6 },
        ),
        fc.func(fc.boolean()),
        async (fields, chooses) => {
          recordId += 1;
          const subject = `record:acme:${recordId}`;
          const keys = Object.keys(fields);
          const sealedKeys = keys.filter((key) => chooses(key) && fields[key] !== null);
          const data = { recordId, fields };
          await store.append(`record-acme.${recordId}`, [
            newEvent(data, { subject, paths: sealedKeys.map((key) => ['fields', key]) }),
          ]);
          const [stored] = await all(store.sealed.readStream(`record-acme.${recordId}`));
          const storedFields = (stored!.data as { fields: Record<string, unknown> }).fields;
          for (const key of sealedKeys) expect(isSealedValue(storedFields[key])).toBe(true);
          const [read] = await all(store.readStream(`record-acme.${recordId}`));
          expect(read!.data).toEqual(data);
          await store.erase(subject, Date.now());
          const [erased] = await all(store.readStream(`record-acme.${recordId}`));
          const erasedFields = (erased!.data as { fields: Record<string, unknown> }).fields;
          for (const key of keys)
            expect(erasedFields[key]).toEqual(sealedKeys.includes(key) ? ERASED_VALUE : fields[key]);
        },
      ),
      { numRuns: 60 },
    );
  });
});
