import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { StoreQuery } from '../../languages/filter/store-query';
import { UniqueViolationError } from '../../infra/read-store/port';
import { type Document, type ReadModelChange } from '../../contracts/read-model-changes';
import { likeReferenceRegExp, seededRandom } from '../support/like-reference';
import { createSqliteReadStore, type SqliteReadStore } from '../../infra/read-store/sqlite';
import { prepareChanges } from '../../infra/read-store/prepared';
import { caseFolded, foldedLiteralPrefix } from '../../infra/read-store/sqlite-query';
import { and, compare, isIn, like, uniqueName, upsert } from '../contracts/read-store';
import { VALIDITY } from '../../contracts/read-models';
import { equals } from '../../languages/filter/store-query';
import { validAt } from '../../query-api/records/past';
import {
  recordVersionsProjection,
  validityIndex,
  validityIntervalIndex,
} from '../../projections/read-models/record-versions';
import { fieldValueIndex } from '../../projections/read-models/records';

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
    await store.ensureIndex(collection, {
      name: 'by_module_folded_email',
      paths: ['moduleId', { path: 'email', caseFolded: true }],
    });
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

  test('like with a literal prefix seeks a range of the case-folded key, then checks each candidate', async () => {
    const filter = and(compare('moduleId', 'eq', 7), like('email', 'USER12%'));
    const plan = await plans({ filter, sort: [{ path: 'createdAt', direction: 'desc' }], limit: 20 });
    expect(plan.items).toMatch(
      /SEARCH docs_records USING INDEX docs_records__by_module_folded_email \(<expr>=\? AND <expr>>\? AND <expr><\?\)/,
    );
    const result = await store.find(collection, { filter, sort: [{ path: 'createdAt', direction: 'desc' }] });
    expect(result.items.map((doc) => doc.id)).toEqual(['test.1287', 'test.1247', 'test.1207', 'test.127']);
  });

  test('like without a literal prefix cannot seek the case-folded key', async () => {
    const plan = await plans({ filter: and(compare('moduleId', 'eq', 7), like('email', '%12%')) });
    expect(plan.items).not.toMatch(/<expr>>\?/);
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

describe('a list as of a moment (the versions’ indexes)', () => {
  const collection = 'record_versions';
  const STAGES = ['lead', 'won', 'lost'];

  /** 300 records of 4 versions each: version v of record n valid from position 1000v + n to the next one. */
  beforeEach(async () => {
    const docs: Document[] = [];
    for (let n = 1; n <= 300; n++)
      for (let version = 0; version < 4; version++)
        docs.push({
          id: `test.${n}@${version}`,
          tenant: 'test',
          status: 'live',
          moduleId: 1,
          recordId: n,
          fields: { amount: (n * 37 + version * 101) % 1000, stage: STAGES[(n + version) % STAGES.length] },
          [VALIDITY.fromPosition]: 1000 * version + n,
          ...(version < 3 && { [VALIDITY.toPosition]: 1000 * (version + 1) + n }),
        });
    await store.apply(docs.map((doc) => upsert(collection, doc)));
    for (const index of recordVersionsProjection.collections[collection] ?? [])
      await store.ensureIndex(collection, index);
    for (const field of [
      { key: 'amount', type: 'number' },
      { key: 'stage', type: 'select' },
    ] as const) {
      await store.ensureIndex(collection, validityIndex(fieldValueIndex(field)!));
      await store.ensureIndex(collection, validityIntervalIndex(fieldValueIndex(field)!));
    }
  });

  const scope = (position: number) =>
    and(equals('tenant', 'test'), equals('status', 'live'), equals('moduleId', 1), validAt(BigInt(position)));

  test('the field’s index serves the order and tells the valid versions; the count reads its interval index only', async () => {
    const query: StoreQuery = {
      filter: and(scope(1500), compare('fields.stage', 'eq', 'won')),
      sort: [{ path: 'fields.amount', direction: 'desc' }],
      limit: 20,
    };
    const explained = await store.explainFind(collection, query);
    expect(explained.items.join('\n')).toMatch(/USING INDEX docs_record_versions__fields__amount__valid/);
    expect(explained.items.join('\n')).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
    // One search by each bound, each reading only the versions valid at the moment.
    const count = explained.count.join('\n');
    expect(count).toMatch(/USING COVERING INDEX docs_record_versions__fields__stage__during__from/);
    expect(count).toMatch(/USING COVERING INDEX docs_record_versions__fields__stage__during__to/);
    // At 1500 every record is in its version 1 (valid from 1000 + n to 2000 + n); no two amounts are equal.
    const { items, total } = await store.find(collection, query);
    const expected = Array.from({ length: 300 }, (_, index) => index + 1)
      .filter((n) => STAGES[(n + 1) % STAGES.length] === 'won')
      .map((n) => ({ n, amount: (n * 37 + 101) % 1000 }))
      .sort((a, b) => b.amount - a.amount);
    expect(total).toBe(expected.length);
    expect(items.map((doc) => doc.id)).toEqual(expected.slice(0, 20).map(({ n }) => `test.${n}@1`));
  });

  test('the module’s index serves the list in record order', async () => {
    const explained = await store.explainFind(collection, {
      filter: scope(2100),
      sort: [{ path: 'recordId', direction: 'asc' }],
      limit: 20,
    });
    expect(explained.items.join('\n')).toMatch(
      /USING INDEX docs_record_versions__tenant_status_module_record__valid/,
    );
    expect(explained.items.join('\n')).not.toMatch(/TEMP B-TREE/);
    expect(explained.count.join('\n')).toMatch(
      /USING COVERING INDEX docs_record_versions__fields__\w+__during__from/,
    );
    await expect(store.count(collection, { filter: scope(2100) })).resolves.toBe(300);
  });

  test('a count that reads a path no interval index holds counts with the other indexes, to the same total', async () => {
    const filter = and(scope(1500), compare('recordId', 'lte', 100));
    const explained = await store.explainFind(collection, { filter, limit: 1 });
    expect(explained.count.join('\n')).not.toMatch(/__during__/);
    await expect(store.count(collection, { filter })).resolves.toBe(100);
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

describe('a store that yields for the write lock (the main thread’s)', () => {
  /** Another connection holding the write lock, as the projections thread's transaction does. */
  function holdWriteLock(): Database.Database {
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    return other;
  }

  /** How late a 5 ms timer fires while `waiting` is pending: how long the thread was kept from its other work. */
  async function timerLatenessWhile(waiting: Promise<unknown>): Promise<number> {
    let worst = 0;
    let settled = false;
    void waiting.finally(() => (settled = true)).catch(() => undefined);
    while (!settled) {
      const started = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 5));
      worst = Math.max(worst, performance.now() - started - 5);
    }
    return worst;
  }

  test.each([true, false])(
    'with group commit %s, applies wait for the lock without stopping the thread, then commit in order',
    async (groupCommit) => {
      const yielding = createSqliteReadStore({ path, groupCommit, yieldForWriteLockMs: 5000 });
      const collection = uniqueName('yielding');
      await yielding.apply([upsert(collection, { id: 'a', n: 0 })]);
      const other = holdWriteLock();
      const applies = [1, 2, 3].map((n) =>
        yielding.apply([{ op: 'patch', collection, id: 'a', set: { n }, position: BigInt(n + 1) }]),
      );
      const released = new Promise((resolve) => setTimeout(resolve, 150)).then(() => other.exec('COMMIT'));
      const lateness = await timerLatenessWhile(Promise.all(applies));
      await released;
      other.close();
      // A sleeping wait would keep the thread for the whole 150 ms.
      expect(lateness).toBeLessThan(100);
      await expect(yielding.get(collection, 'a')).resolves.toEqual({ id: 'a', n: 3 });
      await yielding.close();
    },
  );

  test('an apply that waits past its limit fails as busy, and the next one commits', async () => {
    const yielding = createSqliteReadStore({ path, groupCommit: true, yieldForWriteLockMs: 100 });
    const collection = uniqueName('yield_limit');
    const other = holdWriteLock();
    const started = performance.now();
    await expect(yielding.apply([upsert(collection, { id: 'a' })])).rejects.toMatchObject({
      code: expect.stringMatching(/^SQLITE_BUSY/),
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(100);
    other.exec('COMMIT');
    other.close();
    await yielding.apply([upsert(collection, { id: 'b' })]);
    await expect(yielding.getMany(collection, ['a', 'b'])).resolves.toEqual([{ id: 'b' }]);
    await yielding.close();
  });

  test('closing while an apply waits for the lock commits it once the lock is free', async () => {
    const yielding = createSqliteReadStore({ path, groupCommit: true, yieldForWriteLockMs: 5000 });
    const collection = uniqueName('yield_close');
    const other = holdWriteLock();
    const waiting = yielding.apply([upsert(collection, { id: 'a' })]);
    await new Promise((resolve) => setTimeout(resolve, 30));
    other.exec('COMMIT');
    other.close();
    await yielding.close();
    await waiting;
    await expect(store.get(collection, 'a')).resolves.toEqual({ id: 'a' });
  });
});

describe('changes prepared on another thread (applyPrepared)', () => {
  const changes: ReadModelChange[] = [
    upsert('things', { id: 'a', n: 1, nested: { '$key.with': ['x'] } }, 3n),
    upsert('things', { id: 'b', n: 2 }, 4n),
    { op: 'patch', collection: 'things', id: 'a', set: { n: 5 }, position: 5n },
    { op: 'delete', collection: 'things', id: 'b', position: 6n },
    upsert('things', { id: 'c', n: 3 }, 7n),
  ];

  test('write what the same changes applied as they are write, checkpoint included', async () => {
    const reference = createSqliteReadStore({ path: join(directory, 'reference.db') });
    try {
      await reference.apply(changes, { name: 'cp', value: '7' });
      await store.applyPrepared(prepareChanges(changes), { name: 'cp', value: '7' });
      const all = { sort: [{ path: 'id', direction: 'asc' as const }] };
      expect(await store.find('things', all)).toEqual(await reference.find('things', all));
      expect(await store.getCheckpoint('cp')).toBe('7');
      // Positions still guard: an older prepared upsert changes nothing.
      await store.applyPrepared(prepareChanges([upsert('things', { id: 'a', n: 0 }, 4n)]));
      expect(await store.get('things', 'a')).toEqual(await reference.get('things', 'a'));
    } finally {
      await reference.close();
    }
  });

  test('are checked where they are prepared, as apply checks them', async () => {
    expect(() => prepareChanges([upsert('things', { id: 'a', _id: 1 }, 1n)])).toThrow('reserved');
    await expect(
      store.applyPrepared([
        { op: 'upsertJson', collection: 'Bad-Name', id: 'a', json: '{"id":"a"}', position: 1n },
      ]),
    ).rejects.toThrow('invalid collection name');
    await expect(
      store.applyPrepared([{ op: 'upsertJson', collection: 'things', id: '', json: '{}', position: 1n }]),
    ).rejects.toThrow('needs an id');
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

describe('like narrowed to a range of the case-folded value', () => {
  const PRINTABLE_ASCII = Array.from({ length: 0x7f - 0x20 }, (_, offset) =>
    String.fromCharCode(0x20 + offset),
  );

  test('every character that like folds to a printable ASCII character, the SQL fold folds to it too', () => {
    const db = new Database(':memory:');
    try {
      const fold = db.prepare<[string], string>(`SELECT ${caseFolded('?')}`).pluck();
      const foldsToAscii = /^[\x20-\x7e]$/iu;
      const sameCharacter = PRINTABLE_ASCII.map(
        (ascii) => [ascii, new RegExp(`^\\u{${ascii.charCodeAt(0).toString(16)}}$`, 'iu')] as const,
      );
      const matches: string[] = [];
      for (let codePoint = 0; codePoint <= 0x10ffff; codePoint++) {
        if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue;
        const character = String.fromCodePoint(codePoint);
        if (!foldsToAscii.test(character)) continue;
        matches.push(character);
        for (const [ascii, same] of sameCharacter) {
          if (same.test(character))
            expect([character, fold.get(character)]).toEqual([character, ascii.toLowerCase()]);
        }
      }
      // The printable ASCII characters themselves, the Kelvin sign and the long s: nothing else.
      expect(matches.filter((character) => character > '\x7f')).toEqual(['\u017f', '\u212a']);
    } finally {
      db.close();
    }
  });

  test("a connection without the store's registered functions can still write to an indexed collection", async () => {
    await store.ensureIndex('plain', { name: 'by_folded_name', paths: [{ path: 'name', caseFolded: true }] });
    await store.apply([upsert('plain', { id: 'a', name: 'Alpha' })]);
    const other = new Database(path);
    try {
      other
        .prepare(`INSERT INTO docs_plain (id, doc, pos) VALUES (?, jsonb(?), 2)`)
        .run('b', JSON.stringify({ id: 'b', name: '\u212Aappa' }));
    } finally {
      other.close();
    }
    await expect(store.find('plain', { filter: like('name', 'k%') })).resolves.toMatchObject({
      items: [{ id: 'b' }],
    });
  });

  test("plain, indexed and compound-indexed collections answer exactly as the pattern's RegExp", async () => {
    const random = seededRandom(20261122);
    // Letters folding to ASCII and not, `%`, `_`, neighbours of `~`, a newline and NUL.
    const alphabet = [
      ...['a', 'A', 'k', 'K', '\u212A', 's', 'S', '\u017F', 'ß', '\u1E9E', 'i', 'I', '\u0130', '\u0131'],
      ...['é', 'É', '\u03A3', '\u03C3', '\u03C2', '%', '_', ' ', '~', '\u007f', '}', '1', '\n', '\u0000'],
    ];
    const pick = (length: number): string =>
      Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    const values: unknown[] = [1, 0, true, false, null, ''];
    const docs: Document[] = Array.from({ length: 400 }, (_, index) => {
      const value = index < values.length ? values[index] : pick(Math.floor(random() * 6));
      return index === values.length
        ? { id: `d${String(index).padStart(3, '0')}`, group: 'g' }
        : { id: `d${String(index).padStart(3, '0')}`, group: index % 3 === 0 ? 'h' : 'g', name: value };
    });
    const plain = uniqueName('random_plain');
    const indexed = uniqueName('random_indexed');
    await store.apply(docs.flatMap((doc) => [upsert(plain, doc), upsert(indexed, doc)]));
    await store.ensureIndex(indexed, { name: 'by_folded_name', paths: [{ path: 'name', caseFolded: true }] });
    await store.ensureIndex(indexed, {
      name: 'by_group_folded_name',
      paths: ['group', { path: 'name', caseFolded: true }],
    });

    let narrowed = 0;
    let matching = 0;
    for (let round = 0; round < 300; round++) {
      // Mostly a letter start, so most patterns have a literal prefix; sometimes a `%` in it or at its end.
      const pattern =
        pick(1 + Math.floor(random() * 3)) + (random() < 0.6 ? '%' : '') + pick(Math.floor(random() * 2));
      const expression = likeReferenceRegExp(pattern);
      const expected = docs.filter((doc) => typeof doc.name === 'string' && expression.test(doc.name));
      const expectedIds = pattern === '' ? [] : expected.map((doc) => doc.id);
      const inGroup = expectedIds.filter((id) => docs.find((doc) => doc.id === id)?.group === 'g');
      if (foldedLiteralPrefix(pattern) !== '') narrowed++;
      if (expectedIds.length > 0) matching++;
      for (const collection of [plain, indexed]) {
        const found = await store.find(collection, { filter: like('name', pattern) });
        expect([pattern, found.items.map((doc) => doc.id)]).toEqual([pattern, expectedIds]);
        const grouped = await store.find(collection, {
          filter: and(compare('group', 'eq', 'g'), like('name', pattern)),
        });
        expect([pattern, grouped.items.map((doc) => doc.id)]).toEqual([pattern, inGroup]);
      }
    }
    // The comparison is not vacuous: many patterns had a range, many matched something.
    expect(narrowed).toBeGreaterThan(100);
    expect(matching).toBeGreaterThan(50);
  });
});
