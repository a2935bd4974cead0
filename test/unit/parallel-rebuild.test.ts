import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewEvent } from '../../contracts/events/envelope';
import { checkpointName, versionedCollection } from '../../contracts/read-models';
import { newId } from '../../contracts/ids';
import { streamName } from '../../contracts/streams';
import { startRebuildDecoders } from '../../bin/threads';
import { loadConfig } from '../../infra/config';
import { createSqliteEventStore, type SqliteEventStoreHandle } from '../../infra/event-store/sqlite';
import { createLogger } from '../../infra/logging';
import type { ReadStore } from '../../infra/read-store/port';
import type { Document } from '../../contracts/read-model-changes';
import { createSqliteReadStore } from '../../infra/read-store/sqlite';
import { prepareChanges } from '../../infra/read-store/prepared';
import { catchUpInParallel, windowsBetween } from '../../projections/parallel-catch-up';
import { recordsProjection } from '../../projections/read-models/records';
import { rebuildProjection } from '../../projections/rebuild';
import { decodeWindow, type PositionWindow, type WindowDecoder } from '../../projections/window-decoder';

/** Records created, updated, some deleted, with other categories in between: about 12,000 events. */
const RECORDS = 3000;

let directory: string;
let events: SqliteEventStoreHandle;
const openStores: ReadStore[] = [];

function event(type: string, data: Record<string, unknown>): NewEvent {
  const commandId = newId();
  return {
    id: newId(),
    type,
    schemaVersion: 1,
    data,
    metadata: {
      tenant: 'acme',
      actor: { userId: '1', credentialId: 'token:test' },
      correlationId: commandId,
      causationId: commandId,
      commandId,
      occurredAt: '2026-11-22T10:00:00.000Z',
    },
  };
}

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'parallel-rebuild-'));
  events = createSqliteEventStore({ path: join(directory, 'events.db') });
  for (let id = 1; id <= RECORDS; id++) {
    const stream = streamName('record', 'acme', id);
    await events.append(stream, [
      event('RecordCreated', { recordId: id, moduleId: 1, spaceId: 1, name: `R${id}`, fields: { n: id } }),
      event('RecordUpdated', { recordId: id, changes: [{ field: 'fields.n', from: id, to: id + 1 }] }),
    ]);
    await events.append(streamName('space', 'acme', id), [
      event('SpaceCreated', { spaceId: id, name: `S${id}` }),
    ]);
  }
  // Later changes to early records land in later windows than their creation.
  for (let id = 1; id <= RECORDS; id += 3) {
    const stream = streamName('record', 'acme', id);
    await events.append(
      stream,
      id % 2 === 0
        ? [event('RecordDeleted', { recordId: id })]
        : [
            event('RecordUpdated', {
              recordId: id,
              changes: [{ field: 'name', from: `R${id}`, to: `Late ${id}` }],
            }),
          ],
    );
  }
});

afterAll(async () => {
  await Promise.all(openStores.map((store) => store.close()));
  await events.close();
  rmSync(directory, { recursive: true, force: true });
});

async function newReadStore(): Promise<ReadStore> {
  const store = createSqliteReadStore({ path: join(directory, `read-${newId()}.db`) });
  openStores.push(store);
  return store;
}

async function allDocuments(store: ReadStore, version: number): Promise<Document[]> {
  const found = await store.find(versionedCollection('records', version), {
    sort: [{ path: 'recordId', direction: 'asc' }],
    limit: 1000,
    offset: 0,
  });
  const rest = [];
  for (let offset = 1000; offset < (found.total ?? 0); offset += 1000) {
    const page = await store.find(versionedCollection('records', version), {
      sort: [{ path: 'recordId', direction: 'asc' }],
      limit: 1000,
      offset,
    });
    rest.push(...page.items);
  }
  return [...found.items, ...rest];
}

/** Decodes in this thread; `failOn` makes the window starting there fail. */
function inThreadDecoder(failOn?: bigint): WindowDecoder {
  return {
    decode: (window: PositionWindow) =>
      window.after === failOn
        ? Promise.reject(new Error('decoder broke'))
        : decodeWindow(events, recordsProjection, 2, window),
    close: () => Promise.resolve(),
  };
}

const logger = createLogger('silent');

test('windows cover (from, head] once, in order, at least 5,000 positions wide', () => {
  const windows = windowsBetween(0n, 12_345n);
  expect(windows).toEqual([
    { after: 0n, upTo: 5000n },
    { after: 5000n, upTo: 10_000n },
    { after: 10_000n, upTo: 12_345n },
  ]);
  expect(windowsBetween(7n, 7n)).toEqual([]);
  const big = windowsBetween(0n, 100_000_000n);
  expect(big).toHaveLength(1000);
  expect(big.at(-1)!.upTo).toBe(100_000_000n);
});

test('a rebuild decoded on several decoders equals a rebuild on one thread', async () => {
  const oneThread = await newReadStore();
  const parallel = await newReadStore();
  const single = await rebuildProjection(
    recordsProjection,
    { events, readStore: oneThread, logger },
    () => undefined,
  );
  const spread = await rebuildProjection(
    recordsProjection,
    { events, readStore: parallel, logger },
    () => undefined,
    {
      startDecoders: async () => [inThreadDecoder(), inThreadDecoder(), inThreadDecoder()],
    },
  );
  expect(spread.events).toBe(single.events);
  expect(single.events).toBe(RECORDS * 2 + Math.ceil(RECORDS / 3));
  const expected = await allDocuments(oneThread, 2);
  // Deleted records stay, marked (a soft delete).
  expect(expected.length).toBe(RECORDS);
  expect(expected.filter((doc) => doc.deletedAt !== undefined).length).toBe(
    Math.floor(Math.ceil(RECORDS / 3) / 2),
  );
  expect(await allDocuments(parallel, 2)).toEqual(expected);
  expect(expected.find((doc) => doc.recordId === 1)).toMatchObject({ name: 'Late 1', fields: { n: 2 } });
});

test('while its decoders start, a rebuild decodes the first windows on this thread, to the same result', async () => {
  const reference = await newReadStore();
  await rebuildProjection(recordsProjection, { events, readStore: reference, logger }, () => undefined);
  const store = await newReadStore();
  let started: (decoders: WindowDecoder[]) => void = () => undefined;
  const decodedThere: bigint[] = [];
  const decoder = inThreadDecoder();
  const starting = new Promise<WindowDecoder[]>((resolve) => (started = resolve));
  // The decoders are ready once this thread has written its first window.
  const writing: ReadStore = Object.create(store) as ReadStore;
  writing.apply = (changes, checkpoint) => {
    started([
      {
        decode: (window) => {
          decodedThere.push(window.after);
          return decoder.decode(window);
        },
        close: () => decoder.close(),
      },
    ]);
    return store.apply(changes, checkpoint);
  };
  const result = await rebuildProjection(
    recordsProjection,
    { events, readStore: writing, logger },
    () => undefined,
    { startDecoders: () => starting },
  );
  expect(result.events).toBe(RECORDS * 2 + Math.ceil(RECORDS / 3));
  // Two windows: the first written here, the second by the decoder.
  expect(decodedThere).toEqual([5000n]);
  expect(await allDocuments(store, 2)).toEqual(await allDocuments(reference, 2));
});

test('a failing window stops the catch-up with the checkpoint after the last written window', async () => {
  const store = await newReadStore();
  const head = await events.headPosition();
  const checkpoint = checkpointName('records', 2);
  await expect(
    catchUpInParallel({
      readStore: store,
      checkpoint,
      decoders: [inThreadDecoder(5000n), inThreadDecoder(5000n)],
      from: 0n,
      head,
    }),
  ).rejects.toThrow('decoder broke');
  expect(await store.getCheckpoint(checkpoint)).toBe('5000');
  const resumed = await catchUpInParallel({
    readStore: store,
    checkpoint,
    decoders: [inThreadDecoder()],
    from: 5000n,
    head,
  });
  expect(resumed).toBeGreaterThan(0);
  const reference = await newReadStore();
  await catchUpInParallel({
    readStore: reference,
    checkpoint,
    decoders: [inThreadDecoder()],
    from: 0n,
    head,
  });
  expect(await allDocuments(store, 2)).toEqual(await allDocuments(reference, 2));
});

test('a decoder thread decodes a window as this thread does', async () => {
  const config = loadConfig({ DATA_DIR: directory, REBUILD_THREADS: '2' });
  const decoders = await startRebuildDecoders(config, 'records', 2);
  try {
    expect(decoders).toHaveLength(2);
    const window = { after: 5000n, upTo: 10_000n };
    const [first, second] = await Promise.all(decoders.map((decoder) => decoder.decode(window)));
    const local = await decodeWindow(events, recordsProjection, 2, window);
    expect(local.events).toBeGreaterThan(1000);
    // Prepared for the SQLite read store: the documents as JSON.
    const prepared = { events: local.events, prepared: prepareChanges(local.changes) };
    expect(first).toEqual(prepared);
    expect(second).toEqual(prepared);
  } finally {
    await Promise.all(decoders.map((decoder) => decoder.close()));
  }
  await expect(decoders[0]!.decode({ after: 0n, upTo: 10n })).rejects.toThrow('decoder closed');
});

test('decoder threads for an unknown projection fail to start, with the reason', async () => {
  const config = loadConfig({ DATA_DIR: directory, REBUILD_THREADS: '2' });
  await expect(startRebuildDecoders(config, 'no-such-projection', 2)).rejects.toThrow(
    'decoder thread failed: unknown projection no-such-projection',
  );
});

test('no decoder threads when REBUILD_THREADS is 0 or the store is EventStoreDB', async () => {
  expect(
    await startRebuildDecoders(loadConfig({ DATA_DIR: directory, REBUILD_THREADS: '0' }), 'records', 2),
  ).toEqual([]);
  const esdb = loadConfig({
    DATA_DIR: directory,
    EVENT_STORE: 'eventstoredb',
    ESDB_URL: 'esdb://127.0.0.1:2113',
  });
  expect(await startRebuildDecoders(esdb, 'records', 2)).toEqual([]);
});
