import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkpointName, versionedCollection } from '../../contracts/read-models';
import type { ReadModelChange } from '../../contracts/read-model-changes';
import { streamName } from '../../contracts/streams';
import type { EventStore } from '../../infra/event-store/port';
import { createSqliteEventStore } from '../../infra/event-store/sqlite';
import { createLogger } from '../../infra/logging';
import type { ReadStore } from '../../infra/read-store/port';
import { createSqliteReadStore } from '../../infra/read-store/sqlite';
import { DEAD_LETTERS_COLLECTION, DeadLetters, deadLetterId } from '../../projections/dead-letters';
import type { Projection } from '../../projections/projection';
import { pathSegmentOf } from '../../projections/read-models/common';
import { ProjectionRunner } from '../../projections/runner';
import { rebuildProjection } from '../../projections/rebuild';
import { decodeWindow } from '../../projections/window-decoder';
import { newEvent } from '../contracts/event-store';

/**
 * A projection of test events: `{poison: true}` makes it throw (a bug in a projection), anything else is
 * upserted as is.
 */
const thingsProjection: Projection = {
  name: 'things',
  categories: ['thing'],
  collections: { things: [] },
  project(event, collection) {
    const data = event.data as Record<string, unknown>;
    if (data.poison === true) throw new Error('this projection cannot handle poison');
    return [
      {
        op: 'upsert',
        collection: collection('things'),
        doc: { id: event.streamId, ...data },
        position: event.position,
      },
    ];
  },
};

/**
 * The read store, refusing any document that holds `refuse: true` while `refusing` is on (a document the
 * store cannot take, e.g. one over its size limit), or every write while `down` is on (the store is down).
 */
function refusingStore(inner: ReadStore) {
  const control = { refusing: true, down: false, refusedWrites: 0 };
  const refuses = (change: ReadModelChange) =>
    control.refusing && change.op === 'upsert' && change.doc.refuse === true;
  const store: ReadStore = Object.create(inner) as ReadStore;
  store.apply = (changes, checkpoint) => {
    if (control.down || changes.some(refuses)) {
      control.refusedWrites++;
      return Promise.reject(new Error(control.down ? 'the store is down' : 'document too large'));
    }
    return inner.apply(changes, checkpoint);
  };
  return { store, control };
}

const until = async (done: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('dead letters', () => {
  let dir: string;
  let events: EventStore;
  let inner: ReadStore;
  let runner: ProjectionRunner | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'dead-letters-'));
    events = createSqliteEventStore({ path: join(dir, 'events.db'), pollIntervalMs: 10 });
    inner = createSqliteReadStore({ path: join(dir, 'read.db') });
  });

  afterEach(async () => {
    await runner?.stop();
    runner = undefined;
    await inner.close();
    await events.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const append = async (id: number, data: Record<string, unknown>) =>
    (await events.append(streamName('thing', 'acme', id), [newEvent('ThingHappened', data)])).position;

  const startRunner = async (store: ReadStore): Promise<ProjectionRunner> => {
    runner = new ProjectionRunner(thingsProjection, 1, {
      events,
      readStore: store,
      logger: createLogger('silent'),
      now: () => new Date('2026-11-27T08:00:00.000Z'),
    });
    await runner.start();
    return runner;
  };
  const things = versionedCollection('things', 1);

  test('an event the projection throws on, or whose document the store refuses, is recorded and passed', async () => {
    const { store, control } = refusingStore(inner);
    // In one batch (catch-up) and then live, one at a time.
    await append(1, { name: 'before' });
    const thrown = await append(2, { poison: true });
    const refused = await append(3, { refuse: true, name: 'too big' });
    const after = await append(4, { name: 'after' });
    const started = await startRunner(store);
    await until(() => started.position >= after);
    const live = await append(5, { poison: true });
    const lastOne = await append(6, { name: 'last' });
    await until(() => started.position >= lastOne);

    expect(await inner.get(things, streamName('thing', 'acme', 1))).toMatchObject({ name: 'before' });
    expect(await inner.get(things, streamName('thing', 'acme', 4))).toMatchObject({ name: 'after' });
    expect(await inner.get(things, streamName('thing', 'acme', 6))).toMatchObject({ name: 'last' });
    expect(await inner.get(things, streamName('thing', 'acme', 3))).toBeNull();
    expect(started.error).toBeUndefined();
    expect(started.deadLettered).toBe(3);
    expect(await inner.getCheckpoint(checkpointName('things', 1))).toBe(lastOne.toString());

    const deadLetters = new DeadLetters({ events, readStore: inner, projections: [thingsProjection] });
    const listed = await deadLetters.list({ offset: 0, limit: 10 });
    expect(listed.total).toBe(3);
    expect(listed.items.map((item) => item.position).sort()).toEqual(
      [thrown, refused, live].map(String).sort(),
    );
    expect(listed.items.find((item) => item.position === String(refused))).toEqual({
      id: deadLetterId('things', 1, refused),
      projection: 'things',
      version: 1,
      position: String(refused),
      eventId: expect.any(String),
      type: 'ThingHappened',
      stream: streamName('thing', 'acme', 3),
      tenant: 'acme',
      error: 'document too large',
      at: '2026-11-27T08:00:00.000Z',
    });
    expect(listed.items.find((item) => item.position === String(thrown))?.error).toBe(
      'this projection cannot handle poison',
    );
    expect(await deadLetters.countsByProjection()).toEqual(new Map([['things', 3]]));

    // Retry: the projection still throws on poison: the dead letter stays, with the reason.
    const stillPoison = await deadLetters.retry(deadLetterId('things', 1, thrown));
    expect(stillPoison).toMatchObject({ kind: 'failed', error: 'this projection cannot handle poison' });
    // The store takes the document now (say, its limit was raised): retrying applies it and the letter goes.
    control.refusing = false;
    const retried = await deadLetters.retry(deadLetterId('things', 1, refused));
    expect(retried.kind).toBe('applied');
    expect(await inner.get(things, streamName('thing', 'acme', 3))).toMatchObject({ name: 'too big' });
    expect(await inner.get(DEAD_LETTERS_COLLECTION, deadLetterId('things', 1, refused))).toBeNull();
    expect((await deadLetters.list({ offset: 0, limit: 10 })).total).toBe(2);
    expect(await deadLetters.retry('things:1:999999')).toEqual({ kind: 'not-found' });
  });

  test('after a restart the projection goes on from past its dead letters, recording none twice', async () => {
    const { store } = refusingStore(inner);
    await append(1, { poison: true });
    const last = await append(2, { name: 'fine' });
    const first = await startRunner(store);
    await until(() => first.position >= last);
    await first.stop();
    const second = await startRunner(store);
    const more = await append(3, { name: 'more' });
    await until(() => second.position >= more);
    expect(second.deadLettered).toBe(0);
    expect(await inner.count(DEAD_LETTERS_COLLECTION)).toBe(1);
  });

  test('a rebuild goes past an event it cannot apply, on decoder threads or not, and records it under its version', async () => {
    await append(1, { name: 'one' });
    const poison = await append(2, { poison: true });
    const last = await append(3, { name: 'three' });
    const deps = { events, readStore: inner, logger: createLogger('silent') };
    const single = await rebuildProjection(thingsProjection, deps, () => undefined);
    expect(single).toMatchObject({ fromVersion: 1, toVersion: 2 });
    // The decoder fails on the window that holds the poison: the rebuild says so and goes on on one thread.
    const warnings: string[] = [];
    const logger = Object.create(deps.logger) as typeof deps.logger;
    logger.warn = ((_details: unknown, message: string) => void warnings.push(message)) as typeof logger.warn;
    const decoded = await rebuildProjection(thingsProjection, { ...deps, logger }, () => undefined, {
      startDecoders: async (version) => [
        {
          decode: (window) => decodeWindow(events, thingsProjection, version, window),
          close: () => Promise.resolve(),
        },
      ],
    });
    expect(decoded).toMatchObject({ fromVersion: 2, toVersion: 3 });
    expect(warnings).toEqual([expect.stringMatching(/parallel catch-up of a rebuild stopped/)]);
    for (const version of [2, 3]) {
      expect(
        await inner.get(versionedCollection('things', version), streamName('thing', 'acme', 3)),
      ).toMatchObject({ name: 'three' });
      expect(await inner.get(DEAD_LETTERS_COLLECTION, deadLetterId('things', version, poison))).toMatchObject(
        {
          version,
          error: 'this projection cannot handle poison',
        },
      );
      expect(await inner.getCheckpoint(checkpointName('things', version))).toBe(last.toString());
    }
  });

  test('a store that takes no write at all is not a poison event: the run waits and records nothing', async () => {
    const { store, control } = refusingStore(inner);
    control.down = true;
    const started = await startRunner(store);
    const position = await append(1, { name: 'waits for the store' });
    await until(() => control.refusedWrites >= 3);
    expect(started.position).toBeLessThan(position);
    expect(started.error).toBe('the store is down');
    control.down = false;
    await until(() => started.position >= position, 15_000);
    expect(await inner.get(things, streamName('thing', 'acme', 1))).toMatchObject({
      name: 'waits for the store',
    });
    expect(await inner.count(DEAD_LETTERS_COLLECTION)).toBe(0);
    expect(started.deadLettered).toBe(0);
  });
});

describe('pathSegmentOf', () => {
  test('any value is one strict path segment, distinct values stay distinct, usual ids stay as they are', () => {
    const strictSegment = /^(?!\$)[^.]+$/;
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        expect(pathSegmentOf(a)).toMatch(strictSegment);
        expect(pathSegmentOf(a)).not.toBe('__proto__');
        if (a !== b) expect(pathSegmentOf(a)).not.toBe(pathSegmentOf(b));
      }),
      { numRuns: 2000 },
    );
    for (const id of ['r-1', 'job:7:abc', '3f2b6c1e-1b2a-4c3d-9e8f-0a1b2c3d4e5f'])
      expect(pathSegmentOf(id)).toBe(id);
    expect(pathSegmentOf('\ud800.$')).toBe('%%d800;%2e;%24;');
  });
});
