import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { READ_THREAD_ENTRY } from '../../bin/threads';
import type { ReadStore } from '../../infra/read-store/port';
import { createSqliteReadStore } from '../../infra/read-store/sqlite';
import { pooledReadStore, SqliteReadPool } from '../../infra/read-store/sqlite-read-pool';
import { startTypeScriptWorker } from '../../infra/worker-thread';
import { describeContract } from '../support/adapter-report';
import { readStoreContract } from './read-store';

for (const groupCommit of [false, true]) {
  describeContract(
    'read-store',
    groupCommit ? 'sqlite (group commit)' : 'sqlite',
    { kind: 'embedded' },
    () => {
      readStoreContract(async () => {
        const directory = mkdtempSync(join(tmpdir(), 'read-store-sqlite-'));
        const store = createSqliteReadStore({ path: join(directory, 'read-models.db'), groupCommit });
        return {
          store,
          cleanup: async () => {
            await store.close();
            rmSync(directory, { recursive: true, force: true });
          },
        };
      });
    },
  );
}

describeContract('read-store', 'sqlite (list queries on the read pool)', { kind: 'embedded' }, () => {
  readStoreContract(async () => {
    const directory = mkdtempSync(join(tmpdir(), 'read-store-pool-'));
    const path = join(directory, 'read-models.db');
    const writer = createSqliteReadStore({ path, groupCommit: true });
    const pool = await SqliteReadPool.start({
      size: 1,
      budgetMs: 10_000,
      queuePerLane: 100,
      startWorker: () => startTypeScriptWorker(READ_THREAD_ENTRY, { path }),
    });
    // Every list and count through the pool, as the query API's (which always name their tenant) go.
    const pooled = pooledReadStore(writer, pool);
    const store: ReadStore = Object.create(pooled) as ReadStore;
    store.find = (collection, query) => pooled.find(collection, query, { lane: 'contract' });
    store.count = (collection, query) => pooled.count(collection, query, { lane: 'contract' });
    return {
      store,
      cleanup: async () => {
        await pool.close();
        await writer.close();
        rmSync(directory, { recursive: true, force: true });
      },
    };
  });
});

describe('sqlite read store group commit', () => {
  test('applies of one turn share a transaction, yet a failing apply fails alone and writes nothing', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'read-store-group-'));
    const store = createSqliteReadStore({ path: join(directory, 'read-models.db'), groupCommit: true });
    try {
      await store.ensureIndex('people', { name: 'email', paths: ['email'], unique: true });
      await store.apply([
        { op: 'upsert', collection: 'people', position: 1n, doc: { id: 'a', email: 'a@x' } },
      ]);
      const outcomes = await Promise.allSettled([
        store.apply([{ op: 'upsert', collection: 'people', position: 2n, doc: { id: 'b', email: 'b@x' } }], {
          name: 'first',
          value: '2',
        }),
        // The same email as `a`: a unique-index violation.
        store.apply([{ op: 'upsert', collection: 'people', position: 3n, doc: { id: 'c', email: 'a@x' } }], {
          name: 'second',
          value: '3',
        }),
        store.apply([{ op: 'upsert', collection: 'pets', position: 4n, doc: { id: 'd', name: 'Rex' } }], {
          name: 'third',
          value: '4',
        }),
      ]);
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await store.get('people', 'b')).toMatchObject({ email: 'b@x' });
      expect(await store.get('people', 'c')).toBeNull();
      expect(await store.get('pets', 'd')).toMatchObject({ name: 'Rex' });
      expect(await store.getCheckpoint('first')).toBe('2');
      expect(await store.getCheckpoint('second')).toBeNull();
      expect(await store.getCheckpoint('third')).toBe('4');
    } finally {
      await store.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });

  test('close commits the applies still waiting for their turn', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'read-store-group-'));
    const path = join(directory, 'read-models.db');
    const store = createSqliteReadStore({ path, groupCommit: true });
    const pending = store.apply([{ op: 'upsert', collection: 'people', position: 1n, doc: { id: 'a' } }]);
    await store.close();
    await pending;
    const reopened = createSqliteReadStore({ path });
    try {
      expect(await reopened.get('people', 'a')).toMatchObject({ id: 'a' });
    } finally {
      await reopened.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
