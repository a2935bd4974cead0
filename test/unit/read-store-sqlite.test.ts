import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { StoreQuery } from '../../contracts/query/store-query';
import { UniqueViolationError, type Document, type ReadModelChange } from '../../infra/read-store/port';
import { createSqliteReadStore, type SqliteReadStore } from '../../infra/read-store/sqlite';
import { compare, isIn, uniqueName, upsert } from '../contracts/read-store';

/** What only the SQLite adapter promises: atomic batches, indexes its queries use, a durable file. */

let directory: string;
let path: string;
let store: SqliteReadStore;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'read-store-sqlite-unit-'));
  path = join(directory, 'read-models.db');
  store = createSqliteReadStore({ path });
});

afterEach(async () => {
  await store.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('indexes serve the compiled queries (EXPLAIN QUERY PLAN)', () => {
  const collection = 'records';
  const STATUSES = ['open', 'closed', 'pending', 'draft'];

  beforeEach(async () => {
    const docs: Document[] = Array.from({ length: 2000 }, (_, n) => ({
      id: `test.${n}`,
      status: STATUSES[n % STATUSES.length],
      moduleId: n % 40,
      createdAt: new Date(Date.UTC(2024, 0, 1) + n * 60_000).toISOString(),
      email: `user${n}@example.com`,
      fields: { '12': n % 500, '13': `text ${n}` },
    }));
    await store.apply(docs.map((doc) => upsert(collection, doc)));
    await store.ensureIndex(collection, { name: 'by_status', paths: ['status'] });
    await store.ensureIndex(collection, { name: 'by_module_created', paths: ['moduleId', 'createdAt'] });
    await store.ensureIndex(collection, { name: 'by_created', paths: ['createdAt'] });
    await store.ensureIndex(collection, { name: 'by_field_12', paths: ['fields.12'] });
    await store.ensureIndex(collection, { name: 'by_email', paths: ['email'], unique: true });
  });

  async function plans(query: StoreQuery): Promise<{ items: string; count: string }> {
    const explained = await store.explainFind(collection, query);
    return { items: explained.items.join('\n'), count: explained.count.join('\n') };
  }

  test('equality on an indexed path searches the index; the count reads the index only', async () => {
    const plan = await plans({ filter: compare('status', 'eq', 'open'), limit: 10 });
    expect(plan.items).toMatch(/SEARCH docs_records USING INDEX docs_records__by_status \(<expr>=\?\)/);
    expect(plan.count).toMatch(
      /SEARCH docs_records USING COVERING INDEX docs_records__by_status \(<expr>=\?\)/,
    );
  });

  test('in on an indexed path searches the index', async () => {
    const plan = await plans({ filter: isIn('status', ['open', 'draft']) });
    expect(plan.items).toMatch(/USING INDEX docs_records__by_status \(<expr>=\?\)/);
  });

  test('a numeric range on a nested path searches the index, both bounds included', async () => {
    const plan = await plans({ filter: compare('fields.12', 'gt', 400) });
    expect(plan.items).toMatch(
      /SEARCH docs_records USING INDEX docs_records__by_field_12 \(<expr>>\? AND <expr><\?\)/,
    );
    expect(plan.count).toMatch(/USING COVERING INDEX docs_records__by_field_12/);
  });

  test('equality with 0 or 1 still searches the index (the boolean guard is a residual check)', async () => {
    const plan = await plans({ filter: compare('fields.12', 'eq', 1) });
    expect(plan.items).toMatch(/SEARCH docs_records USING INDEX docs_records__by_field_12 \(<expr>=\?\)/);
  });

  test('a filter and an order served by one compound index need no sorting', async () => {
    const plan = await plans({
      filter: compare('moduleId', 'eq', 3),
      sort: [{ path: 'createdAt', direction: 'asc' }],
      limit: 20,
    });
    expect(plan.items).toMatch(
      /SEARCH docs_records USING INDEX docs_records__by_module_created \(<expr>=\?\)/,
    );
    expect(plan.items).not.toMatch(/TEMP B-TREE/);
  });

  test('an order on an indexed path, with the id tie-breaker, walks the index without sorting', async () => {
    const plan = await plans({ sort: [{ path: 'createdAt', direction: 'asc' }], limit: 20 });
    expect(plan.items).toMatch(/SCAN docs_records USING INDEX docs_records__by_created/);
    expect(plan.items).not.toMatch(/TEMP B-TREE/);
  });

  test('a unique index serves equality too', async () => {
    const plan = await plans({ filter: compare('email', 'eq', 'user7@example.com') });
    expect(plan.items).toMatch(/USING INDEX docs_records__by_email \(<expr>=\?\)/);
  });

  test('a path without an index scans (the plans above are not a given)', async () => {
    const plan = await plans({ filter: compare('fields.13', 'eq', 'text 7') });
    expect(plan.items).not.toMatch(/USING INDEX docs_records__/);
    expect(plan.items).toMatch(/SCAN docs_records/);
  });

  test('the indexed queries answer correctly', async () => {
    const result = await store.find(collection, {
      filter: compare('moduleId', 'eq', 3),
      sort: [{ path: 'createdAt', direction: 'asc' }],
      limit: 3,
    });
    expect(result.items.map((doc) => doc.id)).toEqual(['test.3', 'test.43', 'test.83']);
    expect(result.total).toBe(50);
    await expect(store.count(collection, { filter: compare('fields.12', 'gt', 400) })).resolves.toBe(396);
  });
});

describe('a batch is one transaction', () => {
  test('a unique violation keeps nothing of the batch: not its writes, new collections or checkpoint', async () => {
    const collection = uniqueName('atomic');
    const created = uniqueName('atomic_created');
    await store.ensureIndex(collection, { name: 'by_email', paths: ['email'], unique: true });
    await store.apply(
      [
        upsert(collection, { id: 'a', email: 'a@example.com', n: 1 }),
        upsert(collection, { id: 'b', email: 'b@example.com' }),
      ],
      { name: 'projection', value: '1' },
    );
    const failing: ReadModelChange[] = [
      upsert(collection, { id: 'c', email: 'c@example.com' }, 2n),
      { op: 'patch', collection, id: 'a', inc: { n: 1 }, position: 2n },
      { op: 'delete', collection, id: 'b', position: 2n },
      upsert(created, { id: 'x' }, 2n),
      upsert(collection, { id: 'd', email: 'a@example.com' }, 2n),
    ];
    const failure = store.apply(failing, { name: 'projection', value: '2' });
    await expect(failure).rejects.toThrow(UniqueViolationError);
    await expect(failure).rejects.toMatchObject({ collection, index: 'by_email' });

    await expect(store.get(collection, 'c')).resolves.toBeNull();
    await expect(store.get(collection, 'a')).resolves.toEqual({ id: 'a', email: 'a@example.com', n: 1 });
    await expect(store.get(collection, 'b')).resolves.toEqual({ id: 'b', email: 'b@example.com' });
    await expect(store.getCheckpoint('projection')).resolves.toBe('1');
    await expect(store.listCollections()).resolves.not.toContain(created);
    await expect(store.get(created, 'x')).resolves.toBeNull();

    // The rolled-back collection is really gone, and can be created again.
    await store.apply([upsert(created, { id: 'y' })]);
    await expect(store.getMany(created, ['x', 'y'])).resolves.toEqual([{ id: 'y' }]);
  });

  test('any failure inside the batch rolls it back', async () => {
    const collection = uniqueName('atomic_error');
    await store.apply([upsert(collection, { id: 'a', label: 'text' })]);
    const failure = store.apply(
      [
        upsert(collection, { id: 'b' }, 2n),
        { op: 'patch', collection, id: 'a', inc: { label: 1 }, position: 2n },
      ],
      { name: 'atomic_error', value: '2' },
    );
    await expect(failure).rejects.toThrow(/non-numeric/);
    await expect(store.get(collection, 'b')).resolves.toBeNull();
    await expect(store.getCheckpoint('atomic_error')).resolves.toBeNull();
  });
});

describe('the database file', () => {
  test('documents, indexes and checkpoints survive close and reopen; the journal is WAL', async () => {
    await store.ensureIndex('kept', { name: 'by_code', paths: ['code'], unique: true });
    await store.apply([upsert('kept', { id: 'a', code: 'x' }, 7n)], { name: 'kept', value: '7' });
    await store.close();

    store = createSqliteReadStore({ path });
    await expect(store.get('kept', 'a')).resolves.toEqual({ id: 'a', code: 'x' });
    await expect(store.getCheckpoint('kept')).resolves.toBe('7');
    await expect(store.listCollections()).resolves.toEqual(['kept']);
    await expect(store.apply([upsert('kept', { id: 'b', code: 'x' }, 8n)])).rejects.toThrow(
      UniqueViolationError,
    );
    // The stored position survived too: an older upsert is still ignored.
    await store.apply([upsert('kept', { id: 'a', code: 'old' }, 6n)]);
    await expect(store.get('kept', 'a')).resolves.toEqual({ id: 'a', code: 'x' });

    const inspector = new Database(path, { readonly: true });
    try {
      expect(inspector.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      inspector.close();
    }
  });

  test('a collection dropped through another connection reads as empty, then as recreated', async () => {
    await store.apply([upsert('shared', { id: 'a' })]);
    await expect(store.get('shared', 'a')).resolves.toEqual({ id: 'a' });

    const other = createSqliteReadStore({ path });
    try {
      await other.dropCollection('shared');
      await expect(store.get('shared', 'a')).resolves.toBeNull();
      await expect(store.find('shared', {})).resolves.toEqual({ items: [], total: 0 });
      await other.apply([upsert('shared', { id: 'b' })]);
      await expect(store.getMany('shared', ['a', 'b'])).resolves.toEqual([{ id: 'b' }]);
    } finally {
      await other.close();
    }
  });
});
