import fc from 'fast-check';
import type { Scalar, StoreFilter, StoreQuery } from '../../languages/filter/store-query';
import { UniqueViolationError, type ReadStore } from '../../infra/read-store/port';
import { MAX_DOCUMENT_DEPTH } from '../../infra/read-store/validation';
import {
  MAX_INDEXES_PER_COLLECTION,
  type Document,
  type IndexSpec,
  type ReadModelChange,
} from '../../contracts/read-model-changes';

/**
 * The read-store contract: every adapter must pass all of it, unchanged. Tests share one store and use a
 * fresh collection (and checkpoint) name each, so the suite can run against a shared server.
 */
export interface ReadStoreUnderTest {
  readonly store: ReadStore;
  readonly cleanup: () => Promise<void>;
}

let nameSequence = 0;

/** A collection or checkpoint name no other test uses. */
export function uniqueName(label: string): string {
  nameSequence += 1;
  return `t${nameSequence}_${label}`;
}

export function upsert(collection: string, doc: Document, position = 1n): ReadModelChange {
  return { op: 'upsert', collection, doc, position };
}

export function copy(
  collection: string,
  id: string,
  from: { collection: string; id: string },
  position: bigint,
  set?: Record<string, unknown>,
): ReadModelChange {
  return { op: 'copy', collection, id, from, position, ...(set ? { set } : {}) };
}

export function compare(
  path: string,
  op: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte',
  value: Scalar,
): StoreFilter {
  return { kind: 'compare', path, op, value };
}

export function like(path: string, pattern: string): StoreFilter {
  return { kind: 'like', path, pattern, negate: false };
}

export function notLike(path: string, pattern: string): StoreFilter {
  return { kind: 'like', path, pattern, negate: true };
}

export function isIn(path: string, values: readonly Scalar[]): StoreFilter {
  return { kind: 'in', path, values };
}

export function and(...children: StoreFilter[]): StoreFilter {
  return { kind: 'and', children };
}

export function or(...children: StoreFilter[]): StoreFilter {
  return { kind: 'or', children };
}

/** An object nested `levels` objects deep below the one returned (`nested(0)` is `{}`). */
export function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 0; level < levels; level++) value = { inner: value };
  return value;
}

function idsOf(items: readonly Document[]): string[] {
  return items.map((item) => item.id);
}

/**
 * Five documents whose fields cover every case the semantics of store-query.ts distinguish: strings of
 * different case, '', null and missing values, numbers, booleans that could pass for 0 and 1, numbers
 * stored as strings, nested paths, non-ASCII letters, `%`/`_` and newlines.
 */
const PEOPLE: readonly Document[] = [
  {
    id: 'a',
    name: 'Alice',
    city: 'Paris',
    age: 30,
    score: 1.5,
    flag: 1,
    meta: { level: 2, code: 'X_1' },
    note: 'first\nsecond',
  },
  {
    id: 'b',
    name: 'bob',
    city: '',
    age: 25,
    score: 0,
    flag: true,
    meta: { level: 1, code: 'x%1' },
    note: 'x\n',
  },
  { id: 'c', name: 'Chloé', city: null, age: 1, flag: 0, meta: { level: 3 } },
  { id: 'd', name: 'ÉMILE', age: 0, flag: false, meta: {} },
  { id: 'e', name: 'alice', city: 'paris', age: '30', score: true, flag: '1' },
];

const FILTER_CASES: readonly (readonly [string, StoreFilter, readonly string[]])[] = [
  // eq / ne with null: missing, null and '' are all "empty"
  ['eq null matches missing, null and empty string', compare('city', 'eq', null), ['b', 'c', 'd']],
  ['ne null matches only non-empty values', compare('city', 'ne', null), ['a', 'e']],
  ['eq null on a nested path', compare('meta.level', 'eq', null), ['d', 'e']],
  ['eq string is case-sensitive', compare('city', 'eq', 'Paris'), ['a']],
  ['eq empty string matches only the empty string', compare('city', 'eq', ''), ['b']],
  ['ne string includes missing and null', compare('city', 'ne', 'Paris'), ['b', 'c', 'd', 'e']],
  // ordering comparisons never match missing or null
  ['gt null matches nothing', compare('city', 'gt', null), []],
  ['gte null matches nothing', compare('city', 'gte', null), []],
  ['lt null matches nothing', compare('city', 'lt', null), []],
  ['lte null matches nothing', compare('city', 'lte', null), []],
  ['gt string compares strings only', compare('city', 'gt', 'P'), ['a', 'e']],
  ['lt string includes the empty string, not missing or null', compare('city', 'lt', 'p'), ['a', 'b']],
  ['gte empty string matches every string', compare('city', 'gte', ''), ['a', 'b', 'e']],
  // numbers compare with numbers only (not with numeric strings or booleans)
  ['eq number', compare('age', 'eq', 30), ['a']],
  ['eq numeric string', compare('age', 'eq', '30'), ['e']],
  ['ne number includes other types and missing', compare('age', 'ne', 30), ['b', 'c', 'd', 'e']],
  ['gt number', compare('age', 'gt', 1), ['a', 'b']],
  ['gte number', compare('age', 'gte', 1), ['a', 'b', 'c']],
  ['lt number', compare('age', 'lt', 25), ['c', 'd']],
  ['lte number', compare('age', 'lte', 25), ['b', 'c', 'd']],
  ['gt fractional number', compare('age', 'gt', 24.5), ['a', 'b']],
  ['gte 0 skips missing and booleans', compare('score', 'gte', 0), ['a', 'b']],
  ['gt on a nested path', compare('meta.level', 'gte', 2), ['a', 'c']],
  // booleans are not 0 and 1
  ['eq 1 does not match true', compare('flag', 'eq', 1), ['a']],
  ['eq true does not match 1', compare('flag', 'eq', true), ['b']],
  ['eq 0 does not match false', compare('flag', 'eq', 0), ['c']],
  ['eq false does not match 0', compare('flag', 'eq', false), ['d']],
  ['eq "1" matches only the string', compare('flag', 'eq', '1'), ['e']],
  ['ne 1 includes true', compare('flag', 'ne', 1), ['b', 'c', 'd', 'e']],
  ['ne true includes 1', compare('flag', 'ne', true), ['a', 'c', 'd', 'e']],
  ['gt 0 skips true and "1"', compare('flag', 'gt', 0), ['a']],
  ['lte 1 skips booleans', compare('flag', 'lte', 1), ['a', 'c']],
  ['gt false matches true only', compare('flag', 'gt', false), ['b']],
  ['lt true matches false only', compare('flag', 'lt', true), ['d']],
  ['gt string skips numbers', compare('flag', 'gt', '0'), ['e']],
  ['lt string skips numbers', compare('flag', 'lt', '2'), ['e']],
  // in
  ['in strings', isIn('city', ['Paris', 'paris', 'London']), ['a', 'e']],
  ['in numbers', isIn('meta.level', [1, 3]), ['b', 'c']],
  [
    'in with null matches missing, null and empty string',
    isIn('city', ['Paris', null]),
    ['a', 'b', 'c', 'd'],
  ],
  ['in keeps types apart', isIn('flag', [1, true]), ['a', 'b']],
  ['in 0 and a numeric string', isIn('flag', [0, '1']), ['c', 'e']],
  ['in false', isIn('flag', [false]), ['d']],
  ['in an empty list matches nothing', isIn('city', []), []],
  // numeric: the field holds no booleans (`age`: numbers and one numeric string); results are unchanged
  ['numeric eq 1', { ...compare('age', 'eq', 1), numeric: true } as StoreFilter, ['c']],
  ['numeric eq 0', { ...compare('age', 'eq', 0), numeric: true } as StoreFilter, ['d']],
  [
    'numeric gte 0 skips the numeric string',
    { ...compare('age', 'gte', 0), numeric: true } as StoreFilter,
    ['a', 'b', 'c', 'd'],
  ],
  ['numeric lt 1', { ...compare('age', 'lt', 1), numeric: true } as StoreFilter, ['d']],
  ['numeric in 0, 1, 25', { ...isIn('age', [0, 1, 25]), numeric: true } as StoreFilter, ['b', 'c', 'd']],
  // like / notLike
  ['like is case-insensitive', like('city', 'PARIS'), ['a', 'e']],
  ['like % matches any run', like('name', 'ali%'), ['a', 'e']],
  ['like % on both sides', like('name', '%LI%'), ['a', 'e']],
  ['like tells accented letters apart', like('name', '%e'), ['a', 'd', 'e']],
  ['like folds case beyond ASCII', like('name', 'CHLOÉ'), ['c']],
  ['like folds case of a leading non-ASCII letter', like('name', 'émile'), ['d']],
  ['like _ is a literal', like('meta.code', 'x_1'), ['a']],
  ['like _ is not a wildcard', like('name', 'chlo_'), []],
  ['like % stays a wildcard next to literals', like('meta.code', 'x%1'), ['a', 'b']],
  ['like treats regex characters literally', like('name', 'a.ice'), []],
  ['like must match the whole value', like('city', 'par'), []],
  ['like % matches across newlines', like('note', 'first%'), ['a']],
  ['like % matches a leading run with a newline', like('note', '%second'), ['a']],
  ['like does not ignore a trailing newline', like('note', 'x'), []],
  ['like % matches a trailing newline', like('note', 'x%'), ['b']],
  ['like % matches every string, empty included', like('city', '%'), ['a', 'b', 'e']],
  ['like does not match numbers', like('age', '3%'), ['e']],
  ["like '' matches missing, null and empty string", like('city', ''), ['b', 'c', 'd']],
  ['notLike is the complement, missing and null included', notLike('city', 'paris'), ['b', 'c', 'd']],
  ['notLike _ literal', notLike('meta.code', 'x_1'), ['b', 'c', 'd', 'e']],
  ['notLike % excludes every string', notLike('city', '%'), ['c', 'd']],
  ['notLike matches numbers', notLike('age', '3%'), ['a', 'b', 'c', 'd']],
  ["notLike '' matches only non-empty values", notLike('city', ''), ['a', 'e']],
  // the id path
  ['eq id', compare('id', 'eq', 'c'), ['c']],
  ['in ids', isIn('id', ['a', 'e', 'zz']), ['a', 'e']],
  ['gt id', compare('id', 'gt', 'c'), ['d', 'e']],
  ['like id', like('id', 'A'), ['a']],
  // and / or
  ['and', and(compare('age', 'gte', 1), compare('city', 'ne', null)), ['a']],
  ['or', or(compare('age', 'eq', 0), compare('city', 'eq', 'paris')), ['d', 'e']],
  [
    'and containing or',
    and(compare('city', 'eq', null), or(compare('age', 'lt', 1), like('name', 'b%'))),
    ['b', 'd'],
  ],
  [
    'or containing and',
    or(and(compare('age', 'gte', 25), compare('flag', 'eq', 1)), like('meta.code', 'x%1')),
    ['a', 'b'],
  ],
  ['two conditions on one path', and(compare('age', 'gt', 0), compare('age', 'lt', 30)), ['b', 'c']],
  ['an empty and matches everything', and(), ['a', 'b', 'c', 'd', 'e']],
  ['an empty or matches nothing', or(), []],
  ['a single-child or', or(compare('id', 'eq', 'b')), ['b']],
];

/**
 * Values for `like` patterns with a literal prefix, which an adapter may narrow to a range of an index on a
 * case-folded copy of the value (`IndexKey`): letters whose case folds to ASCII (U+212A KELVIN SIGN to k,
 * U+017F LONG S to s), one that does not fold to two (ß is not "ss"), accented letters, `%` and `_` in
 * values, neighbours of `~` (the last printable ASCII character), a newline, numbers, a boolean, '', null
 * and missing. Groups `g` and `h`, to filter on another path too.
 */
const NAMES: readonly Document[] = [
  { id: 'n01', group: 'g', name: '\u212Aelvin' },
  { id: 'n02', group: 'h', name: 'kelvin' },
  { id: 'n03', group: 'g', name: 'KELVIN scale' },
  { id: 'n04', group: 'g', name: '\u017Ftraße' },
  { id: 'n05', group: 'h', name: 'Strasse' },
  { id: 'n06', group: 'g', name: 'STRASSE 5' },
  { id: 'n07', group: 'g', name: 'Émile' },
  { id: 'n08', group: 'g', name: 'emile' },
  { id: 'n09', group: 'g', name: 'x_1 a' },
  { id: 'n10', group: 'g', name: 'x%1 b' },
  { id: 'n11', group: 'g', name: 'xa1 c' },
  { id: 'n12', group: 'g', name: 1234 },
  { id: 'n13', group: 'g', name: true },
  { id: 'n14', group: 'g', name: null },
  { id: 'n15', group: 'g' },
  { id: 'n16', group: 'g', name: '' },
  { id: 'n17', group: 'g', name: 'ab~z' },
  { id: 'n18', group: 'g', name: 'ab\u007fz' },
  { id: 'n19', group: 'g', name: 'ab}' },
  { id: 'n20', group: 'g', name: 'Record 1234' },
  { id: 'n21', group: 'h', name: 'record 12345' },
  { id: 'n22', group: 'g', name: 'Record 1235' },
  { id: 'n23', group: 'g', name: 'Record 123' },
  { id: 'n24', group: 'g', name: 'line\nRecord 1234' },
];

const LIKE_PREFIX_CASES: readonly (readonly [string, string, readonly string[]])[] = [
  ['a prefix matches the Kelvin sign as k', 'kel%', ['n01', 'n02', 'n03']],
  ['a one-letter prefix', 'K%', ['n01', 'n02', 'n03']],
  ['a whole value matches the Kelvin sign as k', 'KELVIN', ['n01', 'n02']],
  ['a pattern starting with the Kelvin sign', '\u212Ael%', ['n01', 'n02', 'n03']],
  ['a prefix matches the long s as s', 'st%', ['n04', 'n05', 'n06']],
  ['a pattern starting with the long s', '\u017Ft%', ['n04', 'n05', 'n06']],
  ['ß is not ss', 'strasse%', ['n05', 'n06']],
  ['% in the middle after a prefix', 'stra%e', ['n04', 'n05']],
  ['a whole ASCII value', 'STRASSE', ['n05']],
  ['an accented first letter folds, but not to ASCII', 'émile', ['n07']],
  ['an ASCII letter does not match an accented one', 'e%', ['n08']],
  ['_ in a prefix is a literal', 'x_1%', ['n09']],
  ['_ at the end of a prefix is a literal', 'x_%', ['n09']],
  ['% right after the first letter', 'x%1%', ['n09', 'n10', 'n11']],
  ['an empty prefix', '%1234', ['n20', 'n24']],
  ['a digit prefix does not match numbers', '1%', []],
  ['a prefix with a space and digits', 'record 1234%', ['n20', 'n21']],
  ['a whole value that is a prefix of others', 'record 123', ['n23']],
  ['an upper-case prefix', 'RECORD 12%', ['n20', 'n21', 'n22', 'n23']],
  ['a prefix ending in ~', 'ab~%', ['n17']],
  ['a prefix its neighbours share', 'ab%', ['n17', 'n18', 'n19']],
  ['a whole value ending in }', 'ab}', ['n19']],
  ['a prefix after which nothing may follow but a run', 'line%', ['n24']],
];

export function readStoreContract(factory: () => Promise<ReadStoreUnderTest>): void {
  let subject: ReadStoreUnderTest | undefined;

  function store(): ReadStore {
    if (!subject) throw new Error('the store under test was not created');
    return subject.store;
  }

  beforeAll(async () => {
    subject = await factory();
  });

  afterAll(async () => {
    await subject?.cleanup();
  });

  async function seed(collection: string, docs: readonly Document[], position = 1n): Promise<void> {
    await store().apply(docs.map((doc) => upsert(collection, doc, position)));
  }

  async function findIds(collection: string, query: StoreQuery): Promise<string[]> {
    return idsOf((await store().find(collection, query)).items);
  }

  describe('documents', () => {
    test('a collection that was never written reads as empty', async () => {
      const collection = uniqueName('never_written');
      await expect(store().get(collection, 'x')).resolves.toBeNull();
      await expect(store().getMany(collection, ['x'])).resolves.toEqual([]);
      await expect(store().find(collection, {})).resolves.toEqual({ items: [], total: 0 });
      await expect(store().count(collection)).resolves.toBe(0);
    });

    test('upsert stores the document as given and get returns it', async () => {
      const collection = uniqueName('upsert');
      const doc: Document = {
        id: 'tenant.1',
        title: 'Grüße ✓',
        count: 3,
        ratio: 0.25,
        big: 2 ** 40,
        negative: -7,
        done: false,
        nothing: null,
        tags: ['x', 'y'],
        nested: { deeper: { value: 'v', list: [{ k: 1 }] } },
      };
      await store().apply([upsert(collection, doc)]);
      await expect(store().get(collection, 'tenant.1')).resolves.toEqual(doc);
      await expect(store().get(collection, 'other')).resolves.toBeNull();
    });

    test('a newer upsert replaces the whole document', async () => {
      const collection = uniqueName('replace');
      await store().apply([upsert(collection, { id: 'a', keep: 1, drop: 2 }, 1n)]);
      await store().apply([upsert(collection, { id: 'a', keep: 10 }, 2n)]);
      await expect(store().get(collection, 'a')).resolves.toEqual({ id: 'a', keep: 10 });
    });

    test('one apply of hundreds of upserts, patches and deletes of one collection writes them all', async () => {
      // FerretDB 1.x never answers an update command of 100 statements that match documents (mongodb.ts).
      const collection = uniqueName('many_changes');
      const ids = Array.from({ length: 300 }, (_, index) => `d${index}`);
      await seed(
        collection,
        ids.map((id, index) => ({ id, n: index })),
      );
      await store().apply([
        ...ids.map((id, index): ReadModelChange => ({
          op: 'patch',
          collection,
          id,
          set: { m: index },
          position: 2n,
        })),
        ...ids.slice(0, 150).map((id): ReadModelChange => ({ op: 'delete', collection, id, position: 3n })),
      ]);
      await expect(store().count(collection)).resolves.toBe(150);
      await expect(store().get(collection, 'd299')).resolves.toEqual({ id: 'd299', n: 299, m: 299 });
      await expect(store().get(collection, 'd149')).resolves.toBeNull();
    });

    test('getMany returns the found documents in the order asked, each once', async () => {
      const collection = uniqueName('get_many');
      await seed(collection, [{ id: 'a' }, { id: 'b' }, { id: 'c' }]);
      const found = await store().getMany(collection, ['c', 'missing', 'a', 'c']);
      expect(found).toEqual([{ id: 'c' }, { id: 'a' }]);
      await expect(store().getMany(collection, [])).resolves.toEqual([]);
    });

    test('delete removes the document; deleting a missing one is a no-op', async () => {
      const collection = uniqueName('delete');
      await seed(collection, [{ id: 'a' }, { id: 'b' }]);
      await store().apply([
        { op: 'delete', collection, id: 'a', position: 2n },
        { op: 'delete', collection, id: 'missing', position: 2n },
      ]);
      await expect(store().get(collection, 'a')).resolves.toBeNull();
      await expect(store().getMany(collection, ['a', 'b'])).resolves.toEqual([{ id: 'b' }]);
    });

    test('a delete remembers nothing: a later upsert, even at an older position, recreates', async () => {
      const collection = uniqueName('recreate');
      await store().apply([upsert(collection, { id: 'a', v: 1 }, 5n)]);
      await store().apply([{ op: 'delete', collection, id: 'a', position: 6n }]);
      await store().apply([upsert(collection, { id: 'a', v: 2 }, 3n)]);
      await expect(store().get(collection, 'a')).resolves.toEqual({ id: 'a', v: 2 });
    });

    test('changes of one batch apply in order, across collections', async () => {
      const first = uniqueName('batch_first');
      const second = uniqueName('batch_second');
      await store().apply([
        upsert(first, { id: 'a', v: 1 }, 1n),
        upsert(second, { id: 'x', v: 1 }, 2n),
        { op: 'patch', collection: first, id: 'a', set: { v: 2 }, position: 3n },
        { op: 'delete', collection: second, id: 'x', position: 4n },
        upsert(second, { id: 'x', v: 3 }, 5n),
        { op: 'patch', collection: first, id: 'a', inc: { v: 10 }, position: 6n },
      ]);
      await expect(store().get(first, 'a')).resolves.toEqual({ id: 'a', v: 12 });
      await expect(store().get(second, 'x')).resolves.toEqual({ id: 'x', v: 3 });
    });
  });

  describe('patch', () => {
    test('set replaces top-level fields and keeps the others', async () => {
      const collection = uniqueName('patch_set');
      await seed(collection, [{ id: 'a', name: 'old', other: 1 }]);
      await store().apply([
        {
          op: 'patch',
          collection,
          id: 'a',
          set: { name: 'new', added: [1, 2], cleared: null },
          position: 2n,
        },
      ]);
      await expect(store().get(collection, 'a')).resolves.toEqual({
        id: 'a',
        name: 'new',
        other: 1,
        added: [1, 2],
        cleared: null,
      });
    });

    test('set on dotted paths creates intermediate objects and keeps siblings', async () => {
      const collection = uniqueName('patch_dotted');
      await seed(collection, [{ id: 'a', fields: { '1': 'one' } }]);
      await store().apply([
        {
          op: 'patch',
          collection,
          id: 'a',
          set: { 'fields.12': 'twelve', 'profile.address.city': 'Oslo', 'fields.3': { nested: true } },
          position: 2n,
        },
      ]);
      await expect(store().get(collection, 'a')).resolves.toEqual({
        id: 'a',
        fields: { '1': 'one', '12': 'twelve', '3': { nested: true } },
        profile: { address: { city: 'Oslo' } },
      });
    });

    test('set ignores undefined values', async () => {
      const collection = uniqueName('patch_undefined');
      await seed(collection, [{ id: 'a', name: 'kept' }]);
      await store().apply([
        { op: 'patch', collection, id: 'a', set: { name: undefined, v: 1 }, position: 2n },
      ]);
      await expect(store().get(collection, 'a')).resolves.toEqual({ id: 'a', name: 'kept', v: 1 });
    });

    test('unset removes top-level and dotted paths; unsetting a missing path is a no-op', async () => {
      const collection = uniqueName('patch_unset');
      await seed(collection, [{ id: 'a', gone: 1, kept: 2, fields: { '7': 'x', '8': 'y' } }]);
      await store().apply([
        {
          op: 'patch',
          collection,
          id: 'a',
          unset: ['gone', 'fields.7', 'missing', 'absent.deep'],
          position: 2n,
        },
      ]);
      await expect(store().get(collection, 'a')).resolves.toEqual({ id: 'a', kept: 2, fields: { '8': 'y' } });
    });

    test('inc adds to numbers, counts a missing value as 0, and works on dotted paths', async () => {
      const collection = uniqueName('patch_inc');
      await seed(collection, [{ id: 'a', count: 5, stats: { views: 1 } }]);
      await store().apply([
        {
          op: 'patch',
          collection,
          id: 'a',
          inc: { count: -2, 'stats.views': 10, 'stats.likes': 1, fresh: 0.5 },
          position: 2n,
        },
      ]);
      await expect(store().get(collection, 'a')).resolves.toEqual({
        id: 'a',
        count: 3,
        stats: { views: 11, likes: 1 },
        fresh: 0.5,
      });
    });

    test('set, unset and inc together in one patch', async () => {
      const collection = uniqueName('patch_all');
      await seed(collection, [{ id: 'a', n: 1, old: true }]);
      await store().apply([
        {
          op: 'patch',
          collection,
          id: 'a',
          set: { 'm.x': 'y' },
          unset: ['old'],
          inc: { n: 1 },
          position: 2n,
        },
      ]);
      await expect(store().get(collection, 'a')).resolves.toEqual({ id: 'a', n: 2, m: { x: 'y' } });
    });

    test('a patch of a missing document is a no-op', async () => {
      const collection = uniqueName('patch_missing');
      await seed(collection, [{ id: 'a' }]);
      await store().apply([
        { op: 'patch', collection, id: 'missing', set: { v: 1 }, inc: { n: 1 }, position: 2n },
      ]);
      await expect(store().get(collection, 'missing')).resolves.toBeNull();
      await expect(store().count(collection)).resolves.toBe(1);
    });
  });

  describe('position guard', () => {
    test('an upsert at an equal or older position changes nothing', async () => {
      const collection = uniqueName('guard_upsert');
      await store().apply([upsert(collection, { id: 'a', v: 'five' }, 5n)]);
      await store().apply([upsert(collection, { id: 'a', v: 'equal' }, 5n)]);
      await store().apply([upsert(collection, { id: 'a', v: 'older' }, 4n)]);
      await expect(store().get(collection, 'a')).resolves.toEqual({ id: 'a', v: 'five' });
      await store().apply([upsert(collection, { id: 'a', v: 'newer' }, 6n)]);
      await expect(store().get(collection, 'a')).resolves.toEqual({ id: 'a', v: 'newer' });
    });

    test('a patch at an equal or older position changes nothing', async () => {
      const collection = uniqueName('guard_patch');
      await store().apply([upsert(collection, { id: 'a', n: 1 }, 5n)]);
      await store().apply([
        { op: 'patch', collection, id: 'a', inc: { n: 100 }, set: { s: 'x' }, position: 5n },
        { op: 'patch', collection, id: 'a', inc: { n: 100 }, unset: ['other'], position: 4n },
      ]);
      await expect(store().get(collection, 'a')).resolves.toEqual({ id: 'a', n: 1 });
      await store().apply([{ op: 'patch', collection, id: 'a', inc: { n: 1 }, position: 6n }]);
      await expect(store().get(collection, 'a')).resolves.toEqual({ id: 'a', n: 2 });
    });

    test('a patch moves the position: an upsert older than the patch is then ignored', async () => {
      const collection = uniqueName('guard_patch_moves');
      await store().apply([upsert(collection, { id: 'a', n: 1 }, 5n)]);
      await store().apply([{ op: 'patch', collection, id: 'a', set: { n: 2 }, position: 8n }]);
      await store().apply([upsert(collection, { id: 'a', n: 3 }, 7n)]);
      await expect(store().get(collection, 'a')).resolves.toEqual({ id: 'a', n: 2 });
    });

    test('a delete at an equal or older position changes nothing', async () => {
      const collection = uniqueName('guard_delete');
      await store().apply([upsert(collection, { id: 'a' }, 5n)]);
      await store().apply([
        { op: 'delete', collection, id: 'a', position: 5n },
        { op: 'delete', collection, id: 'a', position: 1n },
      ]);
      await expect(store().get(collection, 'a')).resolves.toEqual({ id: 'a' });
      await store().apply([{ op: 'delete', collection, id: 'a', position: 6n }]);
      await expect(store().get(collection, 'a')).resolves.toBeNull();
    });

    test('replaying a batch changes nothing', async () => {
      const collection = uniqueName('guard_replay');
      const batch: ReadModelChange[] = [
        upsert(collection, { id: 'a', n: 0 }, 1n),
        { op: 'patch', collection, id: 'a', inc: { n: 1 }, position: 2n },
        upsert(collection, { id: 'b', n: 0 }, 3n),
        { op: 'delete', collection, id: 'b', position: 4n },
        { op: 'patch', collection, id: 'a', inc: { n: 1 }, position: 5n },
      ];
      await store().apply(batch);
      await store().apply(batch);
      await expect(store().get(collection, 'a')).resolves.toEqual({ id: 'a', n: 2 });
      // The delete remembers nothing, so the replayed upsert of b recreates it and its delete removes it.
      await expect(store().get(collection, 'b')).resolves.toBeNull();
    });

    test('positions compare as 64-bit integers, beyond the precision of a double', async () => {
      const collection = uniqueName('guard_big');
      const base = 2n ** 60n;
      await store().apply([upsert(collection, { id: 'a', v: 'base+1' }, base + 1n)]);
      await store().apply([upsert(collection, { id: 'a', v: 'base' }, base)]);
      await expect(store().get(collection, 'a')).resolves.toEqual({ id: 'a', v: 'base+1' });
      await store().apply([upsert(collection, { id: 'a', v: 'base+2' }, base + 2n)]);
      await expect(store().get(collection, 'a')).resolves.toEqual({ id: 'a', v: 'base+2' });
      await store().apply([upsert(collection, { id: 'a', v: 'max' }, 2n ** 63n - 1n)]);
      await store().apply([upsert(collection, { id: 'a', v: 'ten' }, 10n)]);
      await expect(store().get(collection, 'a')).resolves.toEqual({ id: 'a', v: 'max' });
    });
  });

  describe('patchWhere', () => {
    test('patches exactly the documents whose values equal every key of where, each as a patch would', async () => {
      const versions = uniqueName('patch_where');
      await seed(versions, [
        { id: 'a@0', tenant: 't', recordId: 7, name: 'Ada', fields: { email: 'a@x', n: 1 } },
        { id: 'a@1', tenant: 't', recordId: 7, name: 'Ada L', fields: { n: 2 } },
        { id: 'b@0', tenant: 't', recordId: 8, name: 'Bob', fields: { email: 'b@x' } },
        { id: 'c@0', tenant: 'u', recordId: 7, name: 'Cy', fields: {} },
        { id: 'd@0', tenant: 't', recordId: '7', name: 'Dee', fields: {} },
      ]);
      await store().apply([
        {
          op: 'patchWhere',
          collection: versions,
          where: { tenant: 't', recordId: 7 },
          set: { name: '[erased]', 'fields.email': '[erased]' },
          position: 5n,
        },
      ]);
      const byId = new Map((await store().find(versions, {})).items.map((doc) => [doc.id, doc]));
      expect(byId.get('a@0')).toEqual({
        id: 'a@0',
        tenant: 't',
        recordId: 7,
        name: '[erased]',
        fields: { email: '[erased]', n: 1 },
      });
      expect(byId.get('a@1')).toEqual({
        id: 'a@1',
        tenant: 't',
        recordId: 7,
        name: '[erased]',
        fields: { n: 2, email: '[erased]' },
      });
      expect(byId.get('b@0')?.name).toBe('Bob');
      expect(byId.get('c@0')?.name).toBe('Cy');
      expect(byId.get('d@0')?.name).toBe('Dee');
    });

    test('documents newer than the change keep what they hold; those as old as it are patched too', async () => {
      const versions = uniqueName('patch_where_position');
      await store().apply([
        upsert(versions, { id: 'old', key: 1, name: 'old' }, 2n),
        upsert(versions, { id: 'new', key: 1, name: 'new' }, 9n),
        upsert(versions, { id: 'same', key: 1, name: 'same' }, 5n),
      ]);
      const scrub: ReadModelChange = {
        op: 'patchWhere',
        collection: versions,
        where: { key: 1 },
        set: { name: 'x' },
        position: 5n,
      };
      await store().apply([scrub]);
      await store().apply([scrub]);
      await expect(store().get(versions, 'old')).resolves.toEqual({ id: 'old', key: 1, name: 'x' });
      await expect(store().get(versions, 'new')).resolves.toEqual({ id: 'new', key: 1, name: 'new' });
      await store().apply([
        { op: 'patch', collection: versions, id: 'old', set: { name: 'y' }, position: 4n },
      ]);
      await expect(store().get(versions, 'old')).resolves.toEqual({ id: 'old', key: 1, name: 'x' });
    });

    test('a where with no key, or a key that is not a plain name, is refused', async () => {
      const versions = uniqueName('patch_where_refused');
      await expect(
        store().apply([{ op: 'patchWhere', collection: versions, where: {}, set: { a: 1 }, position: 1n }]),
      ).rejects.toThrow(/at least one key/);
      await expect(
        store().apply([
          {
            op: 'patchWhere',
            collection: versions,
            where: { "a') OR 1=1 --": 1 },
            set: { a: 1 },
            position: 1n,
          },
        ]),
      ).rejects.toThrow(/plain key/);
    });
  });

  describe('copy', () => {
    const recordDoc: Document = {
      id: 'r1',
      name: 'Record',
      count: 3,
      nothing: null,
      tags: ['x', 'y'],
      fields: { amount: 10, nested: { deeper: [{ k: 1 }] } },
    };

    test('a copy to another collection is its source under the copy id; the source is unchanged', async () => {
      const records = uniqueName('copy_source');
      const versions = uniqueName('copy_target');
      await store().apply([upsert(records, recordDoc, 1n)]);
      await store().apply([copy(versions, 'r1@1', { collection: records, id: 'r1' }, 2n)]);
      await expect(store().get(versions, 'r1@1')).resolves.toEqual({ ...recordDoc, id: 'r1@1' });
      await expect(store().get(records, 'r1')).resolves.toEqual(recordDoc);
      await expect(store().get(versions, 'r1')).resolves.toBeNull();
    });

    test("the copy's position is the change's, not its source's", async () => {
      const records = uniqueName('copy_position_source');
      const versions = uniqueName('copy_position_target');
      await store().apply([upsert(records, recordDoc, 1n)]);
      await store().apply([copy(versions, 'v', { collection: records, id: 'r1' }, 5n)]);
      await store().apply([upsert(versions, { id: 'v', older: true }, 3n)]);
      await expect(store().get(versions, 'v')).resolves.toEqual({ ...recordDoc, id: 'v' });
      await store().apply([{ op: 'patch', collection: versions, id: 'v', set: { count: 4 }, position: 6n }]);
      await expect(store().get(versions, 'v')).resolves.toEqual({ ...recordDoc, id: 'v', count: 4 });
    });

    test('a copy in the same collection applies set on top-level and dotted paths, keeping nested siblings', async () => {
      const collection = uniqueName('copy_same');
      await store().apply([upsert(collection, recordDoc, 1n)]);
      await store().apply([
        copy(collection, 'r1@2', { collection, id: 'r1' }, 2n, {
          validFrom: 1,
          'validity.to': 2,
          'fields.amount': 11,
          'fields.nested.added': { deep: true },
          name: { replaced: ['by', 'an', 'object'] },
          ignored: undefined,
        }),
      ]);
      await expect(store().get(collection, 'r1@2')).resolves.toEqual({
        id: 'r1@2',
        name: { replaced: ['by', 'an', 'object'] },
        count: 3,
        nothing: null,
        tags: ['x', 'y'],
        fields: { amount: 11, nested: { deeper: [{ k: 1 }], added: { deep: true } } },
        validFrom: 1,
        validity: { to: 2 },
      });
      await expect(store().get(collection, 'r1')).resolves.toEqual(recordDoc);
    });

    test('a later change of the source leaves the copy as it was', async () => {
      const records = uniqueName('copy_later_source');
      const versions = uniqueName('copy_later_target');
      await store().apply([upsert(records, recordDoc, 1n)]);
      await store().apply([copy(versions, 'r1@1', { collection: records, id: 'r1' }, 2n)]);
      await store().apply([
        {
          op: 'patch',
          collection: records,
          id: 'r1',
          set: { 'fields.amount': 99 },
          unset: ['tags'],
          position: 3n,
        },
      ]);
      await store().apply([{ op: 'delete', collection: records, id: 'r1', position: 4n }]);
      await expect(store().get(versions, 'r1@1')).resolves.toEqual({ ...recordDoc, id: 'r1@1' });
    });

    test('a copy of a missing source does nothing, whether its collection exists or not', async () => {
      const records = uniqueName('copy_missing_source');
      const versions = uniqueName('copy_missing_target');
      const never = uniqueName('copy_never_written');
      await store().apply([upsert(records, recordDoc, 1n), upsert(versions, { id: 'kept', v: 1 }, 1n)]);
      await store().apply([
        copy(versions, 'new', { collection: records, id: 'missing' }, 2n),
        copy(versions, 'kept', { collection: records, id: 'missing' }, 3n),
        copy(versions, 'other', { collection: never, id: 'r1' }, 4n),
        copy(versions, 'kept', { collection: never, id: 'r1' }, 5n, { v: 2 }),
      ]);
      await expect(store().get(versions, 'new')).resolves.toBeNull();
      await expect(store().get(versions, 'other')).resolves.toBeNull();
      await expect(store().get(versions, 'kept')).resolves.toEqual({ id: 'kept', v: 1 });
      await expect(store().count(versions)).resolves.toBe(1);
      await expect(store().get(never, 'r1')).resolves.toBeNull();
      // The position of the untouched target did not move: a change older than the copies still applies.
      await store().apply([{ op: 'patch', collection: versions, id: 'kept', set: { v: 3 }, position: 2n }]);
      await expect(store().get(versions, 'kept')).resolves.toEqual({ id: 'kept', v: 3 });
    });

    test('a copy at an equal or older position than its target changes nothing; a newer one replaces it whole', async () => {
      const records = uniqueName('copy_guard_source');
      const versions = uniqueName('copy_guard_target');
      await store().apply([upsert(records, recordDoc, 1n), upsert(versions, { id: 'v', old: 'five' }, 5n)]);
      await store().apply([
        copy(versions, 'v', { collection: records, id: 'r1' }, 5n),
        copy(versions, 'v', { collection: records, id: 'r1' }, 4n, { stale: true }),
      ]);
      await expect(store().get(versions, 'v')).resolves.toEqual({ id: 'v', old: 'five' });
      await store().apply([copy(versions, 'v', { collection: records, id: 'r1' }, 6n, { validTo: 6 })]);
      await expect(store().get(versions, 'v')).resolves.toEqual({ ...recordDoc, id: 'v', validTo: 6 });
      // Replayed: nothing changes.
      await store().apply([copy(versions, 'v', { collection: records, id: 'r1' }, 6n, { validTo: 'again' })]);
      await expect(store().get(versions, 'v')).resolves.toEqual({ ...recordDoc, id: 'v', validTo: 6 });
    });

    test('a copy sees the changes before it in its batch, across collections, and not those after it', async () => {
      const records = uniqueName('copy_batch_source');
      const versions = uniqueName('copy_batch_target');
      const archive = uniqueName('copy_batch_archive');
      await store().apply([
        upsert(records, { id: 'r', v: 1 }, 1n),
        upsert(versions, { id: 'other', v: 0 }, 2n),
        { op: 'patch', collection: records, id: 'r', set: { v: 2, 'm.n': 1 }, position: 3n },
        copy(versions, 'r@3', { collection: records, id: 'r' }, 4n, { validFrom: 3 }),
        { op: 'patch', collection: records, id: 'r', inc: { v: 1 }, position: 5n },
        copy(records, 'r@5', { collection: records, id: 'r' }, 6n),
        // A copy of a copy made earlier in the batch, then a change of that copy's source after both.
        copy(archive, 'r@3', { collection: versions, id: 'r@3' }, 7n, { archived: true }),
        { op: 'patch', collection: versions, id: 'r@3', set: { validTo: 5 }, position: 8n },
        { op: 'delete', collection: records, id: 'r', position: 9n },
        copy(versions, 'gone', { collection: records, id: 'r' }, 10n),
      ]);
      await expect(store().get(versions, 'r@3')).resolves.toEqual({
        id: 'r@3',
        v: 2,
        m: { n: 1 },
        validFrom: 3,
        validTo: 5,
      });
      await expect(store().get(records, 'r@5')).resolves.toEqual({ id: 'r@5', v: 3, m: { n: 1 } });
      await expect(store().get(archive, 'r@3')).resolves.toEqual({
        id: 'r@3',
        v: 2,
        m: { n: 1 },
        validFrom: 3,
        archived: true,
      });
      await expect(store().get(records, 'r')).resolves.toBeNull();
      await expect(store().get(versions, 'gone')).resolves.toBeNull();
    });

    test('find reaches copies by copied and set paths, with the indexes of the target', async () => {
      const records = uniqueName('copy_find_source');
      const versions = uniqueName('copy_find_target');
      await store().apply([
        {
          op: 'index',
          collection: versions,
          index: { name: 'by_record', paths: ['record', 'validFrom'] },
          position: 1n,
        },
        upsert(records, { id: 'a', tenant: 't', fields: { amount: 1 } }, 1n),
        upsert(records, { id: 'b', tenant: 't', fields: { amount: 7 } }, 2n),
        copy(versions, 'a@1', { collection: records, id: 'a' }, 3n, { record: 'a', validFrom: 1 }),
        copy(versions, 'b@2', { collection: records, id: 'b' }, 4n, { record: 'b', validFrom: 2 }),
        { op: 'patch', collection: records, id: 'a', set: { 'fields.amount': 5 }, position: 5n },
        copy(versions, 'a@5', { collection: records, id: 'a' }, 6n, { record: 'a', validFrom: 5 }),
      ]);
      await expect(
        findIds(versions, {
          filter: and(compare('record', 'eq', 'a'), compare('validFrom', 'lte', 5)),
          sort: [{ path: 'validFrom', direction: 'desc' }],
        }),
      ).resolves.toEqual(['a@5', 'a@1']);
      await expect(
        findIds(versions, {
          filter: and(compare('tenant', 'eq', 't'), compare('fields.amount', 'gte', 5)),
          sort: [{ path: 'fields.amount', direction: 'asc' }],
        }),
      ).resolves.toEqual(['a@5', 'b@2']);
      await expect(findIds(versions, { filter: like('id', 'a@%') })).resolves.toEqual(['a@1', 'a@5']);
    });

    test('a copy that duplicates a unique value of its target collection is refused', async () => {
      const records = uniqueName('copy_unique_source');
      const versions = uniqueName('copy_unique_target');
      await store().ensureIndex(versions, {
        name: 'by_version',
        paths: ['record', 'validFrom'],
        unique: true,
      });
      await store().apply([
        upsert(records, { id: 'a' }, 1n),
        copy(versions, 'a@1', { collection: records, id: 'a' }, 2n, { record: 'a', validFrom: 1 }),
      ]);
      const failure = store().apply([
        copy(versions, 'a@1bis', { collection: records, id: 'a' }, 3n, { record: 'a', validFrom: 1 }),
      ]);
      await expect(failure).rejects.toThrow(UniqueViolationError);
      await expect(failure).rejects.toMatchObject({ collection: versions, index: 'by_version' });
      await expect(store().get(versions, 'a@1bis')).resolves.toBeNull();
      await expect(store().count(versions)).resolves.toBe(1);
    });

    test('a copy whose set would create a path inside a non-object value is refused', async () => {
      const records = uniqueName('copy_scalar_source');
      const versions = uniqueName('copy_scalar_target');
      await store().apply([upsert(records, { id: 'a', name: 'n', list: [1] }, 1n)]);
      for (const path of ['name.first', 'list.0'])
        await expect(
          store().apply([copy(versions, 'a@2', { collection: records, id: 'a' }, 2n, { [path]: 1 })]),
        ).rejects.toThrow(/copy to a@2: cannot create/);
      await expect(store().get(versions, 'a@2')).resolves.toBeNull();
    });
  });

  describe('filters', () => {
    const collection = uniqueName('people');

    beforeAll(async () => {
      await seed(collection, PEOPLE);
    });

    test.each(FILTER_CASES)('%s', async (_description, filter, expected) => {
      const result = await store().find(collection, { filter });
      expect(idsOf(result.items)).toEqual(expected);
      expect(result.total).toBe(expected.length);
      await expect(store().count(collection, { filter })).resolves.toBe(expected.length);
    });

    test('a path outside [A-Za-z0-9_] segments is refused', async () => {
      await expect(
        store().find(collection, { filter: compare("name') OR 1=1 --", 'eq', 'x') }),
      ).rejects.toThrow(/invalid path/);
      await expect(store().find(collection, { sort: [{ path: 'a..b', direction: 'asc' }] })).rejects.toThrow(
        /invalid path/,
      );
    });

    test('values are data, never query syntax', async () => {
      await expect(findIds(collection, { filter: compare('name', 'eq', "x' OR '1'='1") })).resolves.toEqual(
        [],
      );
      await expect(findIds(collection, { filter: like('name', '.*') })).resolves.toEqual([]);
      await expect(findIds(collection, { filter: compare('name', 'eq', '$ne') })).resolves.toEqual([]);
    });
  });

  describe('like with a literal prefix', () => {
    const plain = uniqueName('names');
    const indexed = uniqueName('names_indexed');
    const allIds = NAMES.map((doc) => doc.id);
    const inGroupG = new Set(NAMES.filter((doc) => doc.group === 'g').map((doc) => doc.id));

    beforeAll(async () => {
      await seed(plain, NAMES);
      await seed(indexed, NAMES);
      await store().ensureIndex(indexed, {
        name: 'by_folded_name',
        paths: [{ path: 'name', caseFolded: true }],
      });
      await store().ensureIndex(indexed, {
        name: 'by_group_folded_name',
        paths: ['group', { path: 'name', caseFolded: true }],
      });
    });

    test.each(LIKE_PREFIX_CASES)('%s (%s)', async (_description, pattern, expected) => {
      const complement = allIds.filter((id) => !expected.includes(id));
      for (const collection of [plain, indexed]) {
        await expect(findIds(collection, { filter: like('name', pattern) })).resolves.toEqual(expected);
        await expect(store().count(collection, { filter: like('name', pattern) })).resolves.toBe(
          expected.length,
        );
        await expect(findIds(collection, { filter: notLike('name', pattern) })).resolves.toEqual(complement);
        await expect(
          findIds(collection, { filter: and(compare('group', 'eq', 'g'), like('name', pattern)) }),
        ).resolves.toEqual(expected.filter((id) => inGroupG.has(id)));
      }
    });

    test('a unique index cannot have a case-folded key', async () => {
      await expect(
        store().ensureIndex(uniqueName('unique_folded'), {
          name: 'by_name',
          paths: [{ path: 'name', caseFolded: true }],
          unique: true,
        }),
      ).rejects.toThrow(/case-folded/);
    });
  });

  describe('like over long values and hostile patterns', () => {
    const collection = uniqueName('long_values');
    /** Long values, where a backtracking matcher would take time to the power of the `%` runs. */
    const LONG: readonly Document[] = [
      { id: 'l01', name: 'a'.repeat(100_000) },
      { id: 'l02', name: `${'a'.repeat(50_000)}b` },
      { id: 'l03', name: `${'ab'.repeat(20_000)}\n${'ab'.repeat(20_000)}` },
      { id: 'l04', name: 'x_y' },
      { id: 'l05', name: 'xzy' },
      { id: 'l06', name: 'a.b*c(d)[e]{f}|g?h+i^j$k\\l/m' },
      { id: 'l07', name: 'ΣΟΦΌΣ ÉCOLE МОСКВА' },
      { id: 'l08', name: 'first line\nsecond line\n' },
      { id: 'l09', name: 12345 },
      { id: 'l10' },
    ];
    const allIds = LONG.map((doc) => doc.id);
    const manyPieces = (piece: string, count: number, last: string): string =>
      `${`%${piece}`.repeat(count)}%${last}`;

    beforeAll(async () => {
      await seed(collection, LONG);
    });

    test.each([
      ['60 % pieces, the last one in no value', manyPieces('a', 60, 'c'), []],
      ['60 % pieces ending at the last character', manyPieces('a', 60, 'b'), ['l02', 'l03']],
      ['60 % pieces, all present', manyPieces('a', 60, ''), ['l01', 'l02', 'l03']],
      ['overlapping pieces over a long run', manyPieces('aab', 20, ''), []],
      ['pieces on both sides of a newline', `${manyPieces('ab', 30, '\n')}${'%ab'.repeat(30)}`, ['l03']],
      ['a prefix and many pieces', `a${manyPieces('a', 40, 'a')}`, ['l01']],
      ['_ is a literal, not one character', 'x_y', ['l04']],
      ['_ with % around it', '%_%', ['l04']],
      ['regex syntax is literal', 'A.B*C(D)[E]{F}|G?H+I^J$K\\L/M', ['l06']],
      ['regex syntax in % pieces', '%.%*%(%)%[%]%{%}%|%?%+%^%$%\\%/%', ['l06']],
      ['.* is not a wildcard', '.*', []],
      ['case folds beyond ASCII, in every piece', 'σοφόσ%école%москва', ['l07']],
      ['% matches across newlines', 'first%second%', ['l08']],
      ['no % does not ignore a final newline', 'first line\nsecond line', []],
    ])('%s', async (_description, pattern, expected) => {
      await expect(findIds(collection, { filter: like('name', pattern) })).resolves.toEqual(expected);
      await expect(store().count(collection, { filter: like('name', pattern) })).resolves.toBe(
        expected.length,
      );
      await expect(findIds(collection, { filter: notLike('name', pattern) })).resolves.toEqual(
        allIds.filter((id) => !expected.includes(id)),
      );
    });
  });

  describe('sort and paging', () => {
    const collection = uniqueName('sorted');
    const docs: Document[] = [
      { id: 's1', rank: 2, label: 'b', group: 'g', meta: { weight: 20 } },
      { id: 's2', rank: 1, label: 'a', group: 'g', meta: { weight: 5 } },
      { id: 's3', rank: 2, label: 'a', group: 'g', meta: { weight: 100 } },
      { id: 's4', rank: 10, label: 'c', group: 'g', meta: { weight: 5 } },
      { id: 's5', rank: 1, label: 'b', group: 'g', meta: { weight: 9.5 } },
      { id: 's6', group: 'g' },
      { id: 's7', rank: null, label: null, group: 'g' },
    ];

    beforeAll(async () => {
      // Inserted out of id order, so that an insertion-order answer cannot pass for the id tie-breaker.
      await seed(collection, [...docs].reverse());
    });

    test('without a sort, documents come in id order', async () => {
      await expect(findIds(collection, {})).resolves.toEqual(['s1', 's2', 's3', 's4', 's5', 's6', 's7']);
    });

    test('numbers sort numerically; missing and null first; ties by id', async () => {
      await expect(findIds(collection, { sort: [{ path: 'rank', direction: 'asc' }] })).resolves.toEqual([
        's6',
        's7',
        's2',
        's5',
        's1',
        's3',
        's4',
      ]);
    });

    test('descending puts missing and null last; ties still by id ascending', async () => {
      await expect(findIds(collection, { sort: [{ path: 'rank', direction: 'desc' }] })).resolves.toEqual([
        's4',
        's1',
        's3',
        's2',
        's5',
        's6',
        's7',
      ]);
    });

    test('strings sort; several sort keys apply in order', async () => {
      await expect(
        findIds(collection, {
          sort: [
            { path: 'label', direction: 'asc' },
            { path: 'rank', direction: 'desc' },
          ],
        }),
      ).resolves.toEqual(['s6', 's7', 's3', 's2', 's1', 's5', 's4']);
      await expect(findIds(collection, { sort: [{ path: 'label', direction: 'desc' }] })).resolves.toEqual([
        's4',
        's1',
        's5',
        's2',
        's3',
        's6',
        's7',
      ]);
    });

    test('a nested path sorts, with a filter', async () => {
      await expect(
        findIds(collection, {
          filter: compare('meta.weight', 'gte', 5),
          sort: [{ path: 'meta.weight', direction: 'asc' }],
        }),
      ).resolves.toEqual(['s2', 's4', 's5', 's1', 's3']);
    });

    test('sorting by id descending', async () => {
      await expect(findIds(collection, { sort: [{ path: 'id', direction: 'desc' }] })).resolves.toEqual([
        's7',
        's6',
        's5',
        's4',
        's3',
        's2',
        's1',
      ]);
    });

    test('offset and limit page through the sorted matches; total counts all matches', async () => {
      const sort = [{ path: 'rank', direction: 'asc' as const }];
      await expect(store().find(collection, { sort, offset: 2, limit: 3 })).resolves.toEqual({
        items: [docs[1], docs[4], docs[0]],
        total: 7,
      });
      const filtered = await store().find(collection, {
        filter: compare('rank', 'ne', null),
        sort,
        offset: 1,
        limit: 2,
      });
      expect(idsOf(filtered.items)).toEqual(['s5', 's1']);
      expect(filtered.total).toBe(5);
    });

    test('pages of a large set of ties follow the id order without gaps or repeats', async () => {
      const pages: string[] = [];
      for (let offset = 0; offset < 7; offset += 2) {
        const page = await store().find(collection, {
          sort: [{ path: 'group', direction: 'asc' }],
          offset,
          limit: 2,
        });
        expect(page.total).toBe(7);
        pages.push(...idsOf(page.items));
      }
      expect(pages).toEqual(['s1', 's2', 's3', 's4', 's5', 's6', 's7']);
    });

    test('the last page, an offset past the end and a limit of 0 still report the total', async () => {
      await expect(findIds(collection, { offset: 5, limit: 10 })).resolves.toEqual(['s6', 's7']);
      await expect(store().find(collection, { offset: 5, limit: 10 })).resolves.toMatchObject({ total: 7 });
      await expect(store().find(collection, { offset: 50, limit: 10 })).resolves.toEqual({
        items: [],
        total: 7,
      });
      await expect(store().find(collection, { limit: 0 })).resolves.toEqual({ items: [], total: 7 });
      await expect(store().find(collection, { offset: 6 })).resolves.toEqual({ items: [docs[6]], total: 7 });
    });

    test('withTotal: false leaves the total undefined', async () => {
      const result = await store().find(collection, { limit: 2, withTotal: false });
      expect(idsOf(result.items)).toEqual(['s1', 's2']);
      expect(result.total).toBeUndefined();
    });

    test('countLimit stops counting there, on a full page, a short one and a filtered count', async () => {
      await expect(store().find(collection, { limit: 2, countLimit: 5 })).resolves.toMatchObject({
        total: 5,
      });
      await expect(store().find(collection, { limit: 2, countLimit: 7 })).resolves.toMatchObject({
        total: 7,
      });
      await expect(store().find(collection, { limit: 2, countLimit: 100 })).resolves.toMatchObject({
        total: 7,
      });
      // The last page knows its total without counting; it still says no more than the limit.
      await expect(store().find(collection, { offset: 5, limit: 10, countLimit: 3 })).resolves.toMatchObject({
        total: 3,
      });
      const filtered = await store().find(collection, {
        filter: compare('label', 'eq', 'b'),
        limit: 1,
        countLimit: 1,
      });
      expect(filtered).toMatchObject({ total: 1 });
      expect(filtered.items).toHaveLength(1);
      await expect(store().find(collection, { limit: 2, countLimit: 0 })).rejects.toThrow(/countLimit/);
    });

    test('count with and without a filter', async () => {
      await expect(store().count(collection)).resolves.toBe(7);
      await expect(store().count(collection, { filter: compare('label', 'eq', 'b') })).resolves.toBe(2);
    });

    test('a negative or fractional offset or limit is refused', async () => {
      await expect(store().find(collection, { offset: -1 })).rejects.toThrow(RangeError);
      await expect(store().find(collection, { limit: 1.5 })).rejects.toThrow(RangeError);
    });
  });

  describe('indexes', () => {
    test('queries answer the same with indexes; ensureIndex is idempotent', async () => {
      const collection = uniqueName('indexed');
      await seed(collection, PEOPLE);
      await store().ensureIndex(collection, { name: 'by_city', paths: ['city'] });
      await store().ensureIndex(collection, { name: 'by_level_age', paths: ['meta.level', 'age'] });
      await store().ensureIndex(collection, { name: 'by_city', paths: ['city'] });
      for (const [, filter, expected] of FILTER_CASES) {
        await expect(findIds(collection, { filter })).resolves.toEqual(expected);
      }
      await expect(
        findIds(collection, {
          filter: compare('meta.level', 'gte', 1),
          sort: [{ path: 'meta.level', direction: 'desc' }],
        }),
      ).resolves.toEqual(['c', 'a', 'b']);
    });

    test('an index of the same name with another definition is refused', async () => {
      const collection = uniqueName('index_conflict');
      await store().ensureIndex(collection, { name: 'by_x', paths: ['x'] });
      await expect(store().ensureIndex(collection, { name: 'by_x', paths: ['y'] })).rejects.toThrow(
        /different definition/,
      );
      await expect(
        store().ensureIndex(collection, { name: 'by_x', paths: ['x'], unique: true }),
      ).rejects.toThrow(/different definition/);
    });

    test('a unique index refuses a second document with the same value', async () => {
      const collection = uniqueName('unique_upsert');
      await store().ensureIndex(collection, { name: 'by_email', paths: ['email'], unique: true });
      await seed(collection, [
        { id: 'a', email: 'a@example.com' },
        { id: 'b', email: 'b@example.com' },
      ]);
      const failure = store().apply([upsert(collection, { id: 'c', email: 'a@example.com' }, 2n)]);
      await expect(failure).rejects.toThrow(UniqueViolationError);
      await expect(failure).rejects.toMatchObject({ collection, index: 'by_email' });
      await expect(store().get(collection, 'c')).resolves.toBeNull();
      await expect(store().get(collection, 'a')).resolves.toEqual({ id: 'a', email: 'a@example.com' });
    });

    test('a patch that duplicates a unique value is refused; a document may keep its own value', async () => {
      const collection = uniqueName('unique_patch');
      await store().ensureIndex(collection, {
        name: 'by_tenant_email',
        paths: ['tenant', 'email'],
        unique: true,
      });
      await seed(collection, [
        { id: 'a', tenant: 't1', email: 'x@example.com' },
        { id: 'b', tenant: 't2', email: 'x@example.com' },
      ]);
      await store().apply([upsert(collection, { id: 'a', tenant: 't1', email: 'x@example.com', v: 2 }, 2n)]);
      const failure = store().apply([
        { op: 'patch', collection, id: 'b', set: { tenant: 't1' }, position: 3n },
      ]);
      await expect(failure).rejects.toThrow(UniqueViolationError);
      await expect(failure).rejects.toMatchObject({ collection, index: 'by_tenant_email' });
      await expect(store().get(collection, 'b')).resolves.toEqual({
        id: 'b',
        tenant: 't2',
        email: 'x@example.com',
      });
    });

    test('the violated index is named when a collection has several unique indexes', async () => {
      const collection = uniqueName('unique_several');
      await store().ensureIndex(collection, { name: 'by_email', paths: ['email'], unique: true });
      await store().ensureIndex(collection, { name: 'by_login', paths: ['login'], unique: true });
      await seed(collection, [{ id: 'a', email: 'a@example.com', login: 'a' }]);
      const failure = store().apply([
        upsert(collection, { id: 'b', email: 'b@example.com', login: 'a' }, 2n),
      ]);
      await expect(failure).rejects.toMatchObject({ name: 'UniqueViolationError', index: 'by_login' });
    });

    test('documents missing a path of a unique index never collide on it', async () => {
      const collection = uniqueName('unique_missing');
      await store().ensureIndex(collection, { name: 'by_email', paths: ['email'], unique: true });
      await store().ensureIndex(collection, {
        name: 'by_tenant_login',
        paths: ['tenant', 'login'],
        unique: true,
      });
      await seed(collection, [
        { id: 'a', tenant: 't1' },
        { id: 'b', tenant: 't1' },
        { id: 'c', tenant: 't1', login: 'c', email: 'c@example.com' },
      ]);
      await expect(store().count(collection)).resolves.toBe(3);
      await expect(
        store().apply([upsert(collection, { id: 'd', tenant: 't1', login: 'c' }, 2n)]),
      ).rejects.toMatchObject({ name: 'UniqueViolationError', index: 'by_tenant_login' });
    });

    test('a unique index over existing duplicates is refused', async () => {
      const collection = uniqueName('unique_late');
      await seed(collection, [
        { id: 'a', code: 'same' },
        { id: 'b', code: 'same' },
      ]);
      await expect(
        store().ensureIndex(collection, { name: 'by_code', paths: ['code'], unique: true }),
      ).rejects.toThrow(UniqueViolationError);
    });
  });

  describe('index changes', () => {
    test('an index change creates the index inside a batch, idempotently, and queries answer the same', async () => {
      const collection = uniqueName('index_change');
      const index = { name: 'fields__amount', paths: ['tenant', 'fields.amount'] };
      await store().apply([
        { op: 'index', collection, index, position: 1n },
        upsert(collection, { id: 'a', tenant: 't', fields: { amount: 10 } }, 2n),
        upsert(collection, { id: 'b', tenant: 't', fields: { amount: 9 } }, 3n),
        upsert(collection, { id: 'c', tenant: 't', fields: {} }, 4n),
        { op: 'index', collection, index, position: 5n },
      ]);
      // Replayed: nothing changes, nothing fails.
      await store().apply([{ op: 'index', collection, index, position: 1n }]);
      await expect(store().ensureIndex(collection, index)).resolves.toBeUndefined();
      await expect(
        findIds(collection, {
          filter: and(compare('tenant', 'eq', 't'), {
            kind: 'compare',
            path: 'fields.amount',
            op: 'gt',
            value: 5,
            numeric: true,
          }),
          sort: [{ path: 'fields.amount', direction: 'asc' }],
        }),
      ).resolves.toEqual(['b', 'a']);
    });

    test(`index changes stop adding indexes at ${MAX_INDEXES_PER_COLLECTION} per collection, and queries still answer`, async () => {
      const collection = uniqueName('index_bound');
      const changes: ReadModelChange[] = Array.from({ length: MAX_INDEXES_PER_COLLECTION + 3 }, (_, i) => ({
        op: 'index',
        collection,
        index: { name: `by_f${i}`, paths: [`f${i}`] },
        position: BigInt(i + 1),
      }));
      await store().apply([...changes, upsert(collection, { id: 'a', f50: 'x' }, 100n)]);
      // The indexes past the bound do not exist: a later ensureIndex with another definition is no conflict.
      await expect(
        store().ensureIndex(collection, { name: `by_f${MAX_INDEXES_PER_COLLECTION + 2}`, paths: ['other'] }),
      ).resolves.toBeUndefined();
      await expect(store().ensureIndex(collection, { name: 'by_f0', paths: ['other'] })).rejects.toThrow(
        /different definition/,
      );
      await expect(findIds(collection, { filter: compare('f50', 'eq', 'x') })).resolves.toEqual(['a']);
    });
  });

  describe('intervals (during)', () => {
    const INTERVAL_INDEX: IndexSpec = {
      name: 'by_group_during',
      paths: ['group'],
      interval: { from: 'from', to: 'to', then: ['v'] },
    };

    /** A bound of every magnitude: small (fork nodes low in the tree), large, and up to 2^52. */
    const boundArbitrary = fc.oneof(
      fc.integer({ min: 0, max: 40 }),
      fc.integer({ min: 0, max: 1_000_000 }),
      fc.integer({ min: 0, max: 2 ** 52 }),
    );
    /** An interval's end: none (open), null, after its start, equal to it (empty), or before it (reversed). */
    const endArbitrary = (from: number) =>
      fc.oneof(
        fc.constant<number | null | undefined>(undefined),
        fc.constant(null),
        fc.integer({ min: 1, max: 2 ** 52 }).map((length) => from + length),
        fc.integer({ min: 1, max: 3 }).map((length) => from + length),
        fc.constant(from),
        fc.integer({ min: 0, max: from }),
      );
    const versionArbitrary = boundArbitrary.chain((from) =>
      fc.record({
        from: fc.constant(from),
        to: endArbitrary(from),
        group: fc.constantFrom('x', 'y'),
        v: fc.integer({ min: 0, max: 9 }),
      }),
    );
    const docsArbitrary = fc.array(versionArbitrary, { maxLength: 30 }).map((versions) =>
      versions.map(({ to, ...version }, index): Document => ({
        id: `d${String(index).padStart(2, '0')}`,
        ...version,
        ...(to !== undefined && { to }),
      })),
    );

    function holds(doc: Document, at: number): boolean {
      const { from, to } = doc as unknown as { from: number; to?: number | null };
      return from <= at && (to === undefined || to === null || to > at);
    }

    /** Points at and beside every bound, and anywhere. */
    function pointsOf(docs: readonly Document[], anywhere: readonly number[]): number[] {
      const bounds = docs.flatMap((doc) =>
        [doc.from, doc.to].filter((bound): bound is number => typeof bound === 'number'),
      );
      return [...bounds.flatMap((bound) => [bound - 1, bound, bound + 1]), ...anywhere].filter(
        (at) => Number.isSafeInteger(at) && at >= 0,
      );
    }

    test('during matches the documents whose interval holds the point, with and without an interval index, in lists and counts', async () => {
      await fc.assert(
        fc.asyncProperty(
          docsArbitrary,
          fc.array(boundArbitrary, { minLength: 1, maxLength: 3 }),
          fc.boolean(),
          fc.integer({ min: 0, max: 9 }),
          async (docs, anywhere, indexed, threshold) => {
            const collection = uniqueName('during');
            if (indexed) await store().ensureIndex(collection, INTERVAL_INDEX);
            await seed(collection, docs);
            const points = pointsOf(docs, anywhere);
            for (const at of points.slice(0, 6)) {
              const during: StoreFilter = { kind: 'during', from: 'from', to: 'to', at };
              const cases: readonly (readonly [StoreFilter, (doc: Document) => boolean])[] = [
                [during, () => true],
                [and(compare('group', 'eq', 'x'), during), (doc) => doc.group === 'x'],
                [
                  and(compare('group', 'eq', 'y'), during, compare('v', 'gte', threshold)),
                  (doc) => doc.group === 'y' && (doc.v as number) >= threshold,
                ],
                [
                  and(
                    during,
                    compare('group', 'eq', 'x'),
                    or(compare('v', 'eq', threshold), isIn('v', [1, 2])),
                  ),
                  (doc) => doc.group === 'x' && [threshold, 1, 2].includes(doc.v as number),
                ],
              ];
              for (const [filter, rest] of cases) {
                const expected = docs
                  .filter((doc) => holds(doc, at) && rest(doc))
                  .map((doc) => doc.id)
                  .sort();
                const found = await store().find(collection, { filter });
                expect({ at, filter, ids: idsOf(found.items) }).toEqual({ at, filter, ids: expected });
                expect(found.total).toBe(expected.length);
                await expect(store().count(collection, { filter })).resolves.toBe(expected.length);
                const capped = await store().find(collection, { filter, limit: 1, countLimit: 3 });
                expect(capped.total).toBe(Math.min(expected.length, 3));
              }
            }
          },
        ),
        { numRuns: 20 },
      );
    }, 120_000);

    test('every interval over 0 to 17 (open, empty and reversed ones too) at every point', async () => {
      const collection = uniqueName('during_small');
      await store().ensureIndex(collection, INTERVAL_INDEX);
      const docs: Document[] = [];
      for (let from = 0; from <= 17; from++)
        for (const to of [undefined, null, ...Array.from({ length: 19 }, (_, index) => index)])
          docs.push({
            id: `i${from}_${String(to)}`,
            group: 'x',
            from,
            v: 0,
            ...(to !== undefined && { to }),
          });
      await seed(collection, docs);
      for (let at = 0; at <= 18; at++) {
        const filter = and(compare('group', 'eq', 'x'), { kind: 'during', from: 'from', to: 'to', at });
        const expected = docs.filter((doc) => holds(doc, at)).map((doc) => doc.id);
        await expect(store().count(collection, { filter })).resolves.toBe(expected.length);
        const found = await store().find(collection, { filter, limit: 1000 });
        expect(idsOf(found.items).sort()).toEqual(expected.sort());
      }
    });

    test('an interval index is idempotent, conflicts by name, goes with its collection, and is never unique', async () => {
      const collection = uniqueName('during_index');
      await store().ensureIndex(collection, INTERVAL_INDEX);
      await store().ensureIndex(collection, INTERVAL_INDEX);
      await seed(collection, [{ id: 'a', group: 'x', from: 1, to: 5, v: 1 }]);
      await store().dropCollection(collection);
      await store().ensureIndex(collection, INTERVAL_INDEX);
      await seed(collection, [{ id: 'b', group: 'x', from: 3, v: 1 }]);
      const during: StoreFilter = { kind: 'during', from: 'from', to: 'to', at: 4 };
      await expect(
        store().count(collection, { filter: and(compare('group', 'eq', 'x'), during) }),
      ).resolves.toBe(1);
      await expect(store().ensureIndex(collection, { ...INTERVAL_INDEX, unique: true })).rejects.toThrow(
        /cannot be unique/,
      );
    });

    test('a point that is not a safe integer is refused', async () => {
      const collection = uniqueName('during_point');
      await seed(collection, [{ id: 'a', from: 1 }]);
      for (const at of [1.5, 2 ** 53, Number.NaN])
        await expect(
          store().find(collection, { filter: { kind: 'during', from: 'from', to: 'to', at } }),
        ).rejects.toThrow(/interval point/);
    });
  });

  describe('list values', () => {
    const collection = uniqueName('lists');
    const docs: Document[] = [
      { id: 'ab', tags: ['a', 'b'] },
      { id: 'c', tags: ['c'] },
      { id: 'empty', tags: [] },
      { id: 'missing' },
      { id: 'null', tags: null },
      { id: 'scalar', tags: 'a' },
      { id: 'numbers', tags: [1, 2] },
    ];
    const listCompare = (op: 'eq' | 'ne', value: Scalar): StoreFilter => ({
      kind: 'compare',
      path: 'tags',
      op,
      value,
      list: true,
    });
    const listIn = (values: Scalar[]): StoreFilter => ({ kind: 'in', path: 'tags', values, list: true });

    beforeAll(async () => {
      await seed(collection, docs);
    });

    test.each<[string, StoreFilter, string[]]>([
      ['eq holds the value', listCompare('eq', 'a'), ['ab', 'scalar']],
      ['eq a number', listCompare('eq', 2), ['numbers']],
      ['eq a value none holds', listCompare('eq', 'z'), []],
      [
        'ne does not hold it (missing and null too)',
        listCompare('ne', 'a'),
        ['c', 'empty', 'missing', 'null', 'numbers'],
      ],
      ['eq null: missing, null or empty', listCompare('eq', null), ['empty', 'missing', 'null']],
      ['ne null: holds something', listCompare('ne', null), ['ab', 'c', 'numbers', 'scalar']],
      ['in holds any', listIn(['b', 'c']), ['ab', 'c']],
      ['in with null', listIn(['c', null]), ['c', 'empty', 'missing', 'null']],
      ['in a number', listIn([1]), ['numbers']],
      ['and of two holds', and(listCompare('eq', 'a'), listCompare('eq', 'b')), ['ab']],
    ])('%s', async (_description, filter, expected) => {
      const result = await store().find(collection, { filter });
      expect(idsOf(result.items)).toEqual(expected);
      expect(result.total).toBe(expected.length);
      await expect(store().count(collection, { filter })).resolves.toBe(expected.length);
    });
  });

  describe('checkpoints', () => {
    test('an unknown checkpoint reads as null', async () => {
      await expect(store().getCheckpoint(uniqueName('checkpoint_unknown'))).resolves.toBeNull();
    });

    test('apply stores the checkpoint with the changes, and overwrites it later', async () => {
      const collection = uniqueName('checkpointed');
      const name = `projection:${uniqueName('checkpoint')}:v1`;
      await store().apply([upsert(collection, { id: 'a' }, 10n)], { name, value: '10' });
      await expect(store().getCheckpoint(name)).resolves.toBe('10');
      await expect(store().get(collection, 'a')).resolves.toEqual({ id: 'a' });
      await store().apply([], { name, value: '18446744073709551615' });
      await expect(store().getCheckpoint(name)).resolves.toBe('18446744073709551615');
    });

    test('checkpoints are independent of each other and can be deleted', async () => {
      const first = uniqueName('checkpoint_first');
      const second = uniqueName('checkpoint_second');
      await store().apply([], { name: first, value: '1' });
      await store().apply([], { name: second, value: '2' });
      await store().deleteCheckpoint(first);
      await expect(store().getCheckpoint(first)).resolves.toBeNull();
      await expect(store().getCheckpoint(second)).resolves.toBe('2');
      await store().deleteCheckpoint(uniqueName('checkpoint_never_set'));
    });
  });

  describe('collections', () => {
    test('listCollections names the written collections, sorted, and nothing internal', async () => {
      const written = uniqueName('listed');
      const indexed = uniqueName('listed_by_index');
      const unused = uniqueName('listed_never');
      await store().apply([upsert(written, { id: 'a' })], {
        name: uniqueName('listed_checkpoint'),
        value: '1',
      });
      await store().ensureIndex(indexed, { name: 'by_x', paths: ['x'] });
      const names = await store().listCollections();
      expect(names).toEqual(expect.arrayContaining([written, indexed]));
      expect(names).not.toContain(unused);
      expect([...names].sort()).toEqual(names);
      for (const name of names) expect(name).toMatch(/^[a-z][a-z0-9_]*$/);
    });

    test('dropCollection removes the documents, the indexes and the listing; dropping again is a no-op', async () => {
      const collection = uniqueName('dropped');
      await store().ensureIndex(collection, { name: 'by_code', paths: ['code'], unique: true });
      await seed(collection, [{ id: 'a', code: 'x' }]);
      await store().dropCollection(collection);
      await expect(store().get(collection, 'a')).resolves.toBeNull();
      await expect(store().find(collection, {})).resolves.toEqual({ items: [], total: 0 });
      await expect(store().listCollections()).resolves.not.toContain(collection);
      await store().dropCollection(collection);
      await store().dropCollection(uniqueName('never_created'));
      // Recreated from scratch: the unique index went with the collection.
      await seed(collection, [
        { id: 'b', code: 'x' },
        { id: 'c', code: 'x' },
      ]);
      await expect(store().count(collection)).resolves.toBe(2);
      await expect(store().listCollections()).resolves.toContain(collection);
    });
  });

  describe('any JSON document', () => {
    /** Keys the stores once refused or could mistake for syntax, then any string at all. */
    const hostileKey = fc.oneof(
      fc.constantFrom(
        '',
        '.',
        'a.b',
        '.a.',
        '$',
        '$where',
        '$set',
        'a$',
        '__proto__',
        'constructor',
        'prototype',
        'toString',
        'hasOwnProperty',
        '_bsontype',
        '\u0001',
        '\0',
        'a\0b',
        '\uE000',
        '\uE000a.b',
        '%',
        '%2E',
        '%25',
        '\uE000%2E',
        '_id',
        '_pos',
        'id',
        'Grüße ✓ 𝄞',
      ),
      fc.string({ unit: 'binary', maxLength: 12 }),
    );
    const jsonNumber = fc.oneof(
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? 0 : n)),
      fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 1e308, 5e-324),
    );
    /** Objects are built with own data properties, so a `__proto__` key is a key, as JSON.parse makes it. */
    const objectOf = (value: fc.Arbitrary<unknown>) =>
      fc
        .uniqueArray(fc.tuple(hostileKey, value), { maxLength: 5, selector: ([key]) => key })
        .map((entries) => Object.fromEntries(entries));
    const { json } = fc.letrec<{ json: unknown }>((tie) => ({
      json: fc.oneof(
        { depthSize: 'small', maxDepth: 5 },
        fc.constant(null),
        fc.boolean(),
        jsonNumber,
        fc.string({ unit: 'binary', maxLength: 20 }),
        fc.array(tie('json'), { maxLength: 5 }),
        objectOf(tie('json')),
      ),
    }));
    /** A document: any top-level keys but the reserved ones, and any value under them. */
    const documentArbitrary = objectOf(json).map(
      (fields): Document =>
        Object.fromEntries([
          ...Object.entries(fields).filter(([key]) => !['id', '_id', '_pos'].includes(key)),
          ['id', 'doc'],
        ]) as Document,
    );

    test('round-trips exactly through upsert, get, getMany and find', async () => {
      await fc.assert(
        fc.asyncProperty(documentArbitrary, async (doc) => {
          const collection = uniqueName('any_json');
          await store().apply([upsert(collection, doc)]);
          // Equal, and equal as JSON too: the same keys in the same order, nothing undefined left out.
          const exactly = (stored: unknown): void => {
            expect(stored).toEqual(doc);
            expect(JSON.stringify(stored)).toBe(JSON.stringify(doc));
          };
          exactly(await store().get(collection, 'doc'));
          exactly((await store().getMany(collection, ['doc']))[0]);
          exactly((await store().find(collection, { filter: compare('id', 'eq', 'doc') })).items[0]);
        }),
        { numRuns: 60 },
      );
      expect(Object.prototype).not.toHaveProperty('polluted');
    });

    test('round-trips through a patch set, at the top and on a dotted path, and survives other patches', async () => {
      await fc.assert(
        fc.asyncProperty(json, documentArbitrary, async (value, doc) => {
          const collection = uniqueName('any_json_patch');
          await store().apply([
            upsert(collection, doc),
            {
              op: 'patch',
              collection,
              id: 'doc',
              set: { payload: value, 'wrap.inner': value },
              position: 2n,
            },
            { op: 'patch', collection, id: 'doc', inc: { 'counts.seen': 1 }, position: 3n },
          ]);
          const expected = Object.fromEntries([
            ...Object.entries(doc).filter(([key]) => !['payload', 'wrap', 'counts'].includes(key)),
            ['payload', value],
            ['wrap', { inner: value }],
            ['counts', { seen: 1 }],
          ]);
          const stored = await store().get(collection, 'doc');
          expect(stored).toEqual(expected);
          expect(JSON.stringify(stored?.payload)).toBe(JSON.stringify(value));
        }),
        { numRuns: 60 },
      );
    });

    test('a key __proto__ stays a key and never changes a prototype', async () => {
      const collection = uniqueName('proto_key');
      const doc = JSON.parse(
        '{"id":"p","__proto__":{"polluted":1},"data":{"__proto__":{"polluted":2},"constructor":{"prototype":{"polluted":3}}}}',
      ) as Document;
      await store().apply([
        upsert(collection, doc),
        { op: 'patch', collection, id: 'p', set: { 'data.other': 1 }, position: 2n },
      ]);
      const stored = await store().get(collection, 'p');
      expect(Object.getPrototypeOf(stored)).toBe(Object.prototype);
      expect(Object.hasOwn(stored!, '__proto__')).toBe(true);
      expect(JSON.stringify(stored)).toBe(
        '{"id":"p","__proto__":{"polluted":1},"data":{"__proto__":{"polluted":2},"constructor":{"prototype":{"polluted":3}},"other":1}}',
      );
      expect(Object.prototype).not.toHaveProperty('polluted');
      expect({}).not.toHaveProperty('polluted');
    });

    test('round-trips exactly through a copy, with a set beside the copied keys', async () => {
      await fc.assert(
        fc.asyncProperty(json, documentArbitrary, async (value, doc) => {
          const records = uniqueName('any_json_copy_source');
          const versions = uniqueName('any_json_copy_target');
          const source = Object.fromEntries(
            Object.entries(doc).filter(([key]) => key !== 'version'),
          ) as Document;
          await store().apply([
            upsert(records, source),
            copy(versions, 'doc@2', { collection: records, id: 'doc' }, 2n, { 'version.value': value }),
            copy(records, 'doc@3', { collection: records, id: 'doc' }, 3n),
          ]);
          // The copied keys in their order, the id in its place, then what the copy set.
          const expected = Object.fromEntries([
            ...Object.entries(source).map(([key, inner]) => (key === 'id' ? [key, 'doc@2'] : [key, inner])),
            ['version', { value }],
          ]);
          const copied = await store().get(versions, 'doc@2');
          expect(copied).toEqual(expected);
          expect(JSON.stringify(copied)).toBe(JSON.stringify(expected));
          const sameCollection = await store().get(records, 'doc@3');
          expect(JSON.stringify(sameCollection)).toBe(JSON.stringify({ ...source, id: 'doc@3' }));
        }),
        { numRuns: 40 },
      );
      expect(Object.prototype).not.toHaveProperty('polluted');
    });

    test('a copy keeps keys __proto__ and constructor as keys and never changes a prototype', async () => {
      const records = uniqueName('proto_copy_source');
      const versions = uniqueName('proto_copy_target');
      const doc = JSON.parse(
        '{"id":"p","__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":2}},"data":{"__proto__":{"polluted":3},"toString":"s","Grüße ✓ 𝄞":{"$where":"x","a.b":[{"_id":1}]}}}',
      ) as Document;
      await store().apply([
        upsert(records, doc),
        copy(versions, 'p@2', { collection: records, id: 'p' }, 2n, { 'data.hasOwnProperty': 1 }),
      ]);
      const stored = await store().get(versions, 'p@2');
      expect(Object.getPrototypeOf(stored)).toBe(Object.prototype);
      expect(Object.hasOwn(stored!, '__proto__')).toBe(true);
      expect(JSON.stringify(stored)).toBe(
        '{"id":"p@2","__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":2}},"data":{"__proto__":{"polluted":3},"toString":"s","Grüße ✓ 𝄞":{"$where":"x","a.b":[{"_id":1}]},"hasOwnProperty":1}}',
      );
      expect(Object.prototype).not.toHaveProperty('polluted');
      expect({}).not.toHaveProperty('polluted');
    });

    test(`documents nest up to ${MAX_DOCUMENT_DEPTH} levels; deeper ones are refused, the store goes on`, async () => {
      const collection = uniqueName('deep');
      const deepest = { id: 'deep', value: nested(MAX_DOCUMENT_DEPTH - 2) };
      await store().apply([upsert(collection, deepest)]);
      await expect(store().get(collection, 'deep')).resolves.toEqual(deepest);
      await expect(
        store().apply([upsert(collection, { id: 'deeper', value: nested(MAX_DOCUMENT_DEPTH - 1) })]),
      ).rejects.toThrow(/nests deeper than/);
      await store().apply([upsert(collection, { id: 'after' })]);
      await expect(store().get(collection, 'after')).resolves.toEqual({ id: 'after' });
    });

    test('a large array round-trips', async () => {
      const collection = uniqueName('large_array');
      const doc = { id: 'big', items: Array.from({ length: 50_000 }, (_, i) => ({ 'k.$': i })) };
      await store().apply([upsert(collection, doc)]);
      await expect(store().get(collection, 'big')).resolves.toEqual(doc);
    });
  });

  describe('validation', () => {
    test('invalid collection names are refused', async () => {
      await expect(store().get('Bad-Name', 'a')).rejects.toThrow(/invalid collection name/);
      await expect(store().apply([upsert('1starts_with_digit', { id: 'a' })])).rejects.toThrow(
        /invalid collection name/,
      );
      await expect(store().ensureIndex('has space', { name: 'i', paths: ['x'] })).rejects.toThrow(
        /invalid collection name/,
      );
    });

    test('a batch with an invalid change writes nothing', async () => {
      const collection = uniqueName('invalid_batch');
      const checkpoint = uniqueName('invalid_batch_checkpoint');
      const invalid: ReadModelChange[][] = [
        [upsert(collection, { id: 'ok' }), upsert(collection, { id: 'bad', deep: nested(100) })],
        [
          upsert(collection, { id: 'ok' }),
          { op: 'patch', collection, id: 'ok', set: { 'a.b': nested(98) }, position: 2n },
        ],
        [
          upsert(collection, { id: 'ok' }),
          { op: 'patch', collection, id: 'ok', set: { '__proto__.polluted': 1 }, position: 2n },
        ],
        [upsert(collection, { id: 'ok' }), upsert(collection, { id: '' })],
        [upsert(collection, { id: 'ok' }), upsert(collection, { id: 'bad', _id: 'x' })],
        [
          upsert(collection, { id: 'ok' }),
          { op: 'patch', collection, id: 'ok', set: { id: 'other' }, position: 2n },
        ],
        [
          upsert(collection, { id: 'ok' }),
          { op: 'patch', collection, id: 'ok', unset: ['$x'], position: 2n },
        ],
        [
          upsert(collection, { id: 'ok' }),
          { op: 'patch', collection, id: 'ok', set: { a: 1 }, unset: ['a'], position: 2n },
        ],
        [
          upsert(collection, { id: 'ok' }),
          { op: 'patch', collection, id: 'ok', set: { 'a.b': 1 }, inc: { a: 1 }, position: 2n },
        ],
        [upsert(collection, { id: 'ok' }), upsert(collection, { id: 'bad' }, -1n)],
        [upsert(collection, { id: 'ok' }), copy(collection, '', { collection, id: 'ok' }, 2n)],
        [upsert(collection, { id: 'ok' }), copy(collection, 'c', { collection, id: '' }, 2n)],
        [upsert(collection, { id: 'ok' }), copy(collection, 'c', { collection: 'Bad-Name', id: 'ok' }, 2n)],
        [upsert(collection, { id: 'ok' }), copy('Bad-Name', 'c', { collection, id: 'ok' }, 2n)],
        [upsert(collection, { id: 'ok' }), copy(collection, 'c', { collection, id: 'ok' }, -1n)],
        [upsert(collection, { id: 'ok' }), copy(collection, 'c', { collection, id: 'ok' }, 2n, { id: 'x' })],
        [upsert(collection, { id: 'ok' }), copy(collection, 'c', { collection, id: 'ok' }, 2n, { _pos: 1 })],
        [upsert(collection, { id: 'ok' }), copy(collection, 'c', { collection, id: 'ok' }, 2n, { $x: 1 })],
        [
          upsert(collection, { id: 'ok' }),
          copy(collection, 'c', { collection, id: 'ok' }, 2n, { '__proto__.polluted': 1 }),
        ],
        [
          upsert(collection, { id: 'ok' }),
          copy(collection, 'c', { collection, id: 'ok' }, 2n, { a: 1, 'a.b': 2 }),
        ],
        [
          upsert(collection, { id: 'ok' }),
          copy(collection, 'c', { collection, id: 'ok' }, 2n, { 'a.b': nested(98) }),
        ],
      ];
      for (const batch of invalid) {
        await expect(store().apply(batch, { name: checkpoint, value: '1' })).rejects.toThrow();
      }
      await expect(store().get(collection, 'ok')).resolves.toBeNull();
      await expect(store().getCheckpoint(checkpoint)).resolves.toBeNull();
    });
  });
}
