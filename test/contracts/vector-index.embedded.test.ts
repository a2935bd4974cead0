import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { EmbeddedVectorIndex } from '../../infra/vector-index/embedded';
import { describeContract } from '../support/adapter-report';
import { axisVector, CONTRACT_DIMENSION, vectorIndexContract } from './vector-index';

describeContract('vector-index', 'embedded (SQLite + int8 scan in WebAssembly)', { kind: 'embedded' }, () => {
  vectorIndexContract(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vector-index-'));
    const index = EmbeddedVectorIndex.open(join(dir, 'vectors.db'), CONTRACT_DIMENSION);
    await index.reset('contract');
    return {
      index,
      cleanup: async () => {
        await index.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });

  test('a second process on the same file sees the first one’s writes at its next search', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vector-index-'));
    const writer = EmbeddedVectorIndex.open(join(dir, 'vectors.db'), CONTRACT_DIMENSION);
    const reader = EmbeddedVectorIndex.open(join(dir, 'vectors.db'), CONTRACT_DIMENSION);
    try {
      const base = { tenant: 'acme', spaceId: 1, moduleId: 1 } as const;
      await writer.upsert([{ ...base, recordId: 1, position: 1n, vectors: [axisVector(0)] }]);
      const probe = {
        tenant: 'acme',
        spaceId: 1,
        vector: axisVector(0),
        limit: 5,
        order: 'nearest',
        records: null,
        modules: null,
      } as const;
      expect((await reader.search(probe)).map((hit) => hit.recordId)).toEqual([1]);
      await writer.upsert([{ ...base, recordId: 2, position: 2n, vectors: [axisVector(0, 0.3)] }]);
      await writer.remove('acme', [1], 3n);
      expect((await reader.search(probe)).map((hit) => hit.recordId)).toEqual([2]);
      // A reset by the other process empties what this one holds in memory too.
      await writer.reset('rebuilt');
      expect(await reader.search(probe)).toEqual([]);
      await writer.upsert([{ ...base, recordId: 2, position: 5n, vectors: [axisVector(0, 0.3)] }]);
      // Reopened, the index is what the file holds.
      await reader.close();
      const again = EmbeddedVectorIndex.open(join(dir, 'vectors.db'), CONTRACT_DIMENSION);
      expect((await again.search(probe)).map((hit) => hit.recordId)).toEqual([2]);
      await again.close();
    } finally {
      await writer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an index file from before the codes were stored is dropped, so that its projection rebuilds it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vector-index-'));
    try {
      const old = new Database(join(dir, 'vectors.db'));
      old.exec(`CREATE TABLE vector_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO vector_meta VALUES ('identity', 'use-lite-512/record-text/1');
        CREATE TABLE vector_points (tenant TEXT NOT NULL, record_id INTEGER NOT NULL, chunk INTEGER NOT NULL,
          vector BLOB NOT NULL, PRIMARY KEY (tenant, record_id, chunk)) WITHOUT ROWID;`);
      old.close();
      const index = EmbeddedVectorIndex.open(join(dir, 'vectors.db'), CONTRACT_DIMENSION);
      expect(await index.identity()).toBeNull();
      await index.reset('again');
      await index.upsert([
        { tenant: 'a', recordId: 1, spaceId: 1, moduleId: 1, position: 1n, vectors: [axisVector(0)] },
      ]);
      expect(await index.count('a', 1)).toBe(1);
      await index.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
