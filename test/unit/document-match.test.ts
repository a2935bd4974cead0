import fc from 'fast-check';
import { matchesFilter } from '../../languages/filter/document-match';
import type { Scalar, StoreFilter } from '../../languages/filter/store-query';
import type { Document, ReadModelChange } from '../../contracts/read-model-changes';
import { createSqliteReadStore, type SqliteReadStore } from '../../infra/read-store/sqlite';
import { and, compare, isIn, like, notLike, or, uniqueName } from '../contracts/read-store';

/** One document per kind of value under `v` (none for `missing`): what each filter tells apart. */
const VALUES: Readonly<Record<string, unknown>> = {
  missing: undefined,
  null: null,
  empty: '',
  Paris: 'Paris',
  paris: 'paris',
  zero: 0,
  one: 1,
  half: 0.5,
  true: true,
  false: false,
  text1: '1',
  list: ['a', 'b'],
  emptyList: [],
  object: { k: 'v' },
};

const DOCS: readonly Document[] = Object.entries(VALUES).map(([id, v]) =>
  v === undefined ? { id } : { id, v },
);

/** The ids of DOCS that match, sorted (as a store's `find` orders them). */
function matching(filter: StoreFilter | undefined, docs: readonly Document[] = DOCS): string[] {
  return docs
    .filter((doc) => matchesFilter(doc, filter))
    .map((doc) => doc.id)
    .sort();
}

function sorted(...ids: string[]): string[] {
  return [...ids].sort();
}

const ALL = DOCS.map((doc) => doc.id).sort();

function except(...ids: string[]): string[] {
  return ALL.filter((id) => !ids.includes(id));
}

function numeric(filter: StoreFilter): StoreFilter {
  return { ...filter, numeric: true } as StoreFilter;
}

function listCompare(path: string, op: 'eq' | 'ne', value: Scalar): StoreFilter {
  return { kind: 'compare', path, op, value, list: true };
}

function listIn(path: string, values: Scalar[]): StoreFilter {
  return { kind: 'in', path, values, list: true };
}

describe('matchesFilter: each operator on each kind of value', () => {
  test.each<[string, StoreFilter | undefined, string[]]>([
    ['given no filter, when matched, then every document matches', undefined, ALL],
    ['given an empty and, when matched, then every document matches', and(), ALL],
    ['given an empty or, when matched, then no document matches', or(), []],

    // eq / ne
    [
      'given eq null, when matched, then missing, null and the empty string match',
      compare('v', 'eq', null),
      sorted('missing', 'null', 'empty'),
    ],
    [
      'given ne null, when matched, then every other value matches',
      compare('v', 'ne', null),
      except('missing', 'null', 'empty'),
    ],
    [
      'given eq a string, when matched, then only that string matches (case-sensitive)',
      compare('v', 'eq', 'Paris'),
      ['Paris'],
    ],
    [
      'given eq the empty string, when matched, then only the empty string matches',
      compare('v', 'eq', ''),
      ['empty'],
    ],
    [
      'given ne a string, when matched, then missing and null match too',
      compare('v', 'ne', 'Paris'),
      except('Paris'),
    ],
    ['given eq 1, when matched, then neither true nor "1" matches', compare('v', 'eq', 1), ['one']],
    ['given eq 0, when matched, then false does not match', compare('v', 'eq', 0), ['zero']],
    ['given eq true, when matched, then 1 does not match', compare('v', 'eq', true), ['true']],
    ['given eq false, when matched, then 0 does not match', compare('v', 'eq', false), ['false']],
    ['given eq "1", when matched, then only the string matches', compare('v', 'eq', '1'), ['text1']],
    ['given ne 1, when matched, then true matches', compare('v', 'ne', 1), except('one')],
    ['given ne true, when matched, then 1 matches', compare('v', 'ne', true), except('true')],

    // ordering
    ...(['gt', 'gte', 'lt', 'lte'] as const).map((op): [string, StoreFilter, string[]] => [
      `given ${op} null, when matched, then nothing matches`,
      compare('v', op, null),
      [],
    ]),
    [
      'given gt a string, when matched, then greater strings match (arrays and objects as their JSON text)',
      compare('v', 'gt', 'P'),
      sorted('Paris', 'paris', 'list', 'emptyList', 'object'),
    ],
    [
      'given lt a string, when matched, then the empty string and lesser strings match, not numbers',
      compare('v', 'lt', 'Q'),
      sorted('empty', 'Paris', 'text1'),
    ],
    [
      'given gte the empty string, when matched, then every string matches (arrays and objects as their JSON text)',
      compare('v', 'gte', ''),
      sorted('empty', 'Paris', 'paris', 'text1', 'list', 'emptyList', 'object'),
    ],
    [
      'given gt 0, when matched, then numbers only match, not true',
      compare('v', 'gt', 0),
      sorted('one', 'half'),
    ],
    [
      'given gte 0, when matched, then false does not match',
      compare('v', 'gte', 0),
      sorted('zero', 'one', 'half'),
    ],
    ['given lt 1, when matched, then false does not match', compare('v', 'lt', 1), sorted('zero', 'half')],
    ['given lte 0.5, when matched, then fractions compare', compare('v', 'lte', 0.5), sorted('zero', 'half')],
    ['given gt false, when matched, then only true matches', compare('v', 'gt', false), ['true']],
    [
      'given lte true, when matched, then only booleans match',
      compare('v', 'lte', true),
      sorted('true', 'false'),
    ],
    ['given lt false, when matched, then nothing matches', compare('v', 'lt', false), []],

    // numeric: the promise that the field holds no booleans lets 0 and 1 stand for them, as in SQLite
    [
      'given a numeric eq 1, when matched, then true reads as 1',
      numeric(compare('v', 'eq', 1)),
      sorted('one', 'true'),
    ],
    ['given a numeric eq 2, when matched, then no boolean matches', numeric(compare('v', 'eq', 2)), []],
    [
      'given a numeric gte 0, when matched, then booleans read as 1 and 0',
      numeric(compare('v', 'gte', 0)),
      sorted('zero', 'one', 'half', 'true', 'false'),
    ],

    // in
    [
      'given in strings, when matched, then each listed string matches',
      isIn('v', ['Paris', 'paris', 'x']),
      sorted('Paris', 'paris'),
    ],
    [
      'given in with null, when matched, then the empty values match too',
      isIn('v', ['Paris', null]),
      sorted('Paris', 'missing', 'null', 'empty'),
    ],
    ['given in 1 and true, when matched, then types stay apart', isIn('v', [1, true]), sorted('one', 'true')],
    ['given in 0 and "1", when matched, then types stay apart', isIn('v', [0, '1']), sorted('zero', 'text1')],
    [
      'given a numeric in 0, when matched, then false reads as 0',
      numeric(isIn('v', [0])),
      sorted('zero', 'false'),
    ],
    ['given in nothing, when matched, then nothing matches', isIn('v', []), []],

    // like / notLike
    [
      'given like a pattern in another case, when matched, then it matches',
      like('v', 'PARIS'),
      sorted('Paris', 'paris'),
    ],
    [
      'given like %, when matched, then every string matches',
      like('v', '%'),
      sorted('empty', 'Paris', 'paris', 'text1', 'list', 'emptyList', 'object'),
    ],
    ['given like a digit, when matched, then numbers and booleans do not match', like('v', '1'), ['text1']],
    [
      "given like '', when matched, then missing, null and the empty string match",
      like('v', ''),
      sorted('missing', 'null', 'empty'),
    ],
    [
      'given notLike, when matched, then it is the exact complement of like',
      notLike('v', 'par%'),
      except('Paris', 'paris'),
    ],
    [
      "given notLike '', when matched, then the non-empty values match",
      notLike('v', ''),
      except('missing', 'null', 'empty'),
    ],
    [
      'given notLike %, when matched, then missing, null, numbers and booleans match',
      notLike('v', '%'),
      sorted('missing', 'null', 'zero', 'one', 'half', 'true', 'false'),
    ],
    [
      'given like on a list without list, when matched, then its JSON text is matched',
      like('v', '["a"%'),
      ['list'],
    ],

    // lists
    [
      'given a list eq, when matched, then a list holding the value matches',
      listCompare('v', 'eq', 'a'),
      ['list'],
    ],
    [
      'given a list ne, when matched, then lists without the value, missing and null match',
      listCompare('v', 'ne', 'a'),
      except('list'),
    ],
    [
      'given a list in, when matched, then a list holding any value matches',
      listIn('v', ['x', 'b']),
      ['list'],
    ],
    [
      'given a list eq null, when matched, then missing, null, the empty string and the empty list match',
      listCompare('v', 'eq', null),
      sorted('missing', 'null', 'empty', 'emptyList'),
    ],
    [
      'given a list ne null, when matched, then non-empty lists and other values match',
      listCompare('v', 'ne', null),
      except('missing', 'null', 'empty', 'emptyList'),
    ],
    [
      'given a list eq, when matched, then a scalar is a list of itself',
      listCompare('v', 'eq', 'Paris'),
      ['Paris'],
    ],
    [
      'given a list eq, when matched, then an object is the list of its values',
      listCompare('v', 'eq', 'v'),
      ['object'],
    ],
    [
      'given a list eq 1, when matched, then true reads as 1 (as SQLite)',
      listCompare('v', 'eq', 1),
      sorted('one', 'true'),
    ],
    [
      'given eq a string on a list without list, when matched, then its JSON text is compared',
      compare('v', 'eq', '["a","b"]'),
      ['list'],
    ],

    // and / or
    [
      'given an and of two conditions, when matched, then both must hold',
      and(compare('v', 'gte', 0), compare('v', 'lt', 1)),
      sorted('zero', 'half'),
    ],
    [
      'given an or containing an and, when matched, then either must hold',
      or(compare('v', 'eq', true), and(like('v', 'p%'), compare('v', 'ne', 'Paris'))),
      sorted('true', 'paris'),
    ],
  ])('%s', (_description, filter, expected) => {
    expect(matching(filter)).toEqual(expected);
  });

  test('given a list filter with an ordering operator, when matched, then it is refused as the adapters refuse it', () => {
    const filter: StoreFilter = { kind: 'compare', path: 'v', op: 'gt', value: 'a', list: true };
    expect(() => matchesFilter({ id: 'x', v: ['b'] }, filter)).toThrow('gt does not apply to a list');
  });
});

describe('matchesFilter: paths', () => {
  const doc: Document = {
    id: 'r1',
    status: 'live',
    moduleId: 7,
    fields: { title: 'Open', tags: ['x'], nested: { deep: 3 } },
    labels: { '12': true },
  };

  test('given a record, when filtered on dotted paths, then each segment is followed', () => {
    expect(matchesFilter(doc, and(compare('moduleId', 'eq', 7), compare('status', 'eq', 'live')))).toBe(true);
    expect(matchesFilter(doc, compare('fields.nested.deep', 'gt', 2))).toBe(true);
    expect(matchesFilter(doc, compare('labels.12', 'eq', true))).toBe(true);
    expect(matchesFilter(doc, compare('labels.13', 'eq', true))).toBe(false);
    expect(matchesFilter(doc, compare('id', 'eq', 'r1'))).toBe(true);
  });

  test('given a missing intermediate object, a scalar or an array on the way, when filtered, then the value is missing', () => {
    for (const path of ['absent.title', 'fields.title.length', 'fields.tags.0', 'status.length']) {
      expect(matchesFilter(doc, compare(path, 'eq', null))).toBe(true);
      expect(matchesFilter(doc, like(path, '%'))).toBe(false);
    }
  });

  test("given keys of Object's prototype, when filtered, then only own keys are read", () => {
    for (const path of ['constructor', 'toString', 'fields.hasOwnProperty', 'fields.constructor.name']) {
      expect(matchesFilter(doc, compare(path, 'eq', null))).toBe(true);
      expect(matchesFilter(doc, notLike(path, '%'))).toBe(true);
    }
    const own = JSON.parse('{"id":"o","constructor":"c","__proto__":{"polluted":"yes"}}') as Document;
    expect(matchesFilter(own, compare('constructor', 'eq', 'c'))).toBe(true);
    expect(matchesFilter(own, compare('__proto__.polluted', 'eq', 'yes'))).toBe(true);
    expect(matchesFilter({ id: 'p' }, compare('__proto__.polluted', 'eq', null))).toBe(true);
  });

  test('given a number JSON cannot hold, when filtered, then it reads as null, as the store keeps it', () => {
    expect(matchesFilter({ id: 'n', v: Number.NaN }, compare('v', 'eq', null))).toBe(true);
    expect(matchesFilter({ id: 'n', v: Number.POSITIVE_INFINITY }, compare('v', 'gt', 0))).toBe(false);
  });
});

describe('matchesFilter: text', () => {
  test('given strings with astral and high BMP characters, when ordered, then code point order decides (as SQLite bytes)', () => {
    // UTF-16 puts U+FF21 above U+10400 (its surrogates start at U+D801); code points put it below.
    const astral: Document = { id: 'a', v: '\u{10400}' };
    const fullwidth: Document = { id: 'f', v: '\uFF21' };
    expect(matching(compare('v', 'gt', '\uFF21'), [astral, fullwidth])).toEqual(['a']);
    expect(matching(compare('v', 'lt', '\u{10400}'), [astral, fullwidth])).toEqual(['f']);
    expect(matching(compare('v', 'lt', 'a\u{10400}'), [{ id: 'x', v: 'a\uFFFF' }])).toEqual(['x']);
    expect(
      matching(compare('v', 'gt', 'ab'), [
        { id: 'x', v: 'abc' },
        { id: 'y', v: 'a' },
      ]),
    ).toEqual(['x']);
  });

  test('given letters with case pairs beyond ASCII, when matched with like, then case folds as in the stores', () => {
    const docs: Document[] = [
      { id: 'kelvin', v: '\u212Aelvin' },
      { id: 'sigma', v: 'ΟΔΟΣ' },
      { id: 'final', v: 'οδος' },
      { id: 'deseret', v: '\u{10400}x' },
      { id: 'eszett', v: 'straße' },
    ];
    expect(matching(like('v', 'kel%'), docs)).toEqual(['kelvin']);
    expect(matching(like('v', 'οδοσ'), docs)).toEqual(['final', 'sigma']);
    expect(matching(like('v', '\u{10428}%'), docs)).toEqual(['deseret']);
    expect(matching(like('v', 'strasse'), docs)).toEqual([]);
  });

  test('given % and _ in patterns, when matched, then % is any run (newlines too) and _ a literal', () => {
    const docs: Document[] = [
      { id: 'underscore', v: 'x_1' },
      { id: 'letter', v: 'xa1' },
      { id: 'lines', v: 'first\nsecond' },
    ];
    expect(matching(like('v', 'x_1'), docs)).toEqual(['underscore']);
    expect(matching(like('v', 'x%1'), docs)).toEqual(['letter', 'underscore']);
    expect(matching(like('v', 'first%'), docs)).toEqual(['lines']);
    expect(matching(like('v', 'first'), docs)).toEqual([]);
    expect(matching(notLike('v', 'x_%'), docs)).toEqual(['letter', 'lines']);
  });
});

/**
 * The evaluator against a real SQLite read store: random record-like documents, random filters, and
 * `matchesFilter` must pick exactly the documents `find` returns.
 */
describe('matchesFilter agrees with the SQLite read store', () => {
  let store: SqliteReadStore;

  beforeAll(() => {
    store = createSqliteReadStore({ path: ':memory:' });
  });

  afterAll(async () => {
    await store.close();
  });

  /**
   * Letters with case pairs beyond ASCII (the Kelvin sign and long s fold to ASCII, final sigma to sigma,
   * Deseret is astral), U+FF21 (after the astral planes in UTF-16, before them in code points), the
   * pattern characters, and characters JSON escapes. No lone surrogates (see document-match.ts).
   */
  const character = fc.constantFrom(
    ...['a', 'A', 'k', 'K', '\u212A', 's', 'S', '\u017F', 'ß', 'é', 'É', 'σ', 'Σ', 'ς', 'ǅ', 'ǆ', 'Ǆ'],
    ...['\u{10400}', '\u{10428}', '\uFF21', '\uFF41', '%', '_', ' ', '\n', '"', '\\', '\0', '1', '~'],
  );
  const text = fc.oneof(
    { arbitrary: fc.constantFrom('', 'a', 'A', 'k', '\u212A', '1', 'd1'), weight: 1 },
    { arbitrary: fc.constantFrom('\uFF21', '\uFFFF', '\u{10400}', 'a\uFF21', 'a\u{10400}'), weight: 1 },
    { arbitrary: fc.string({ unit: character, maxLength: 3 }), weight: 1 },
  );
  const pattern = fc.oneof(
    fc.constantFrom('', '%', 'a%', '%a', '%a%', 'K%', '_%'),
    fc.string({ unit: fc.oneof(character, fc.constant('%')), maxLength: 4 }),
  );
  /**
   * Integers beyond 2^53 are left out: SQLite reads their JSON digits as a 64-bit integer, which can differ
   * from the double (see document-match.ts).
   */
  const number = fc.oneof(
    // 0 and 1 often: what a boolean could pass for.
    { arbitrary: fc.constantFrom(0, 1), weight: 2 },
    { arbitrary: fc.constantFrom(-1, 2, 0.5, -0, 1e300, -1e-300), weight: 2 },
    {
      arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true, min: -(2 ** 53), max: 2 ** 53 }),
      weight: 1,
    },
  );
  const scalar: fc.Arbitrary<Scalar> = fc.oneof(
    { arbitrary: text, weight: 3 },
    { arbitrary: number, weight: 2 },
    { arbitrary: fc.boolean(), weight: 2 },
    { arbitrary: fc.constant(null), weight: 1 },
  );
  const fieldValue = fc.oneof(
    { arbitrary: scalar, weight: 4 },
    { arbitrary: fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY), weight: 1 },
    { arbitrary: fc.array(text, { maxLength: 3 }), weight: 2 },
    { arbitrary: fc.array(scalar, { maxLength: 3 }), weight: 1 },
    { arbitrary: fc.record({ x: scalar }, { requiredKeys: [] }), weight: 1 },
  );
  const labels = fc.subarray(['1', '2', '3']).map((ids) => Object.fromEntries(ids.map((id) => [id, true])));
  const record = fc.record(
    {
      tenant: fc.constant('t1'),
      status: fc.constantFrom('live', 'deleted'),
      recordId: fc.integer({ min: 1, max: 9 }),
      moduleId: fc.integer({ min: 1, max: 3 }),
      name: fieldValue,
      constructor: scalar,
      fields: fc.record({ a: fieldValue, b: fieldValue, constructor: fieldValue }, { requiredKeys: [] }),
      labels,
    },
    { requiredKeys: ['tenant', 'status', 'recordId', 'moduleId'] },
  );

  /**
   * Paths the store accepts (no `__proto__`), most often those with the most varied values: then record
   * columns, labels, names on Object's prototype, paths through a scalar, an array or nothing.
   */
  const otherPaths = [
    ...['id', 'status', 'recordId', 'moduleId', 'constructor', 'toString', 'fields', 'fields.constructor'],
    ...[
      'fields.toString',
      'labels',
      'labels.1',
      'labels.2',
      'fields.a.x',
      'fields.a.0',
      'name.x',
      'absent.x',
    ],
  ];
  const path = fc.oneof(
    { arbitrary: fc.constantFrom('name', 'fields.a', 'fields.b'), weight: 4 },
    { arbitrary: fc.constantFrom(...otherPaths), weight: 1 },
  );
  const flag = fc.option(fc.boolean(), { nil: undefined });
  // Comparisons weigh most: they have the most operators, and the types they keep apart.
  const leaf: fc.Arbitrary<StoreFilter> = fc.oneof(
    {
      arbitrary: fc.record({
        kind: fc.constant('compare'),
        path,
        op: fc.constantFrom('eq', 'ne', 'gt', 'gte', 'lt', 'lte'),
        value: scalar,
        numeric: flag,
      }),
      weight: 3,
    },
    fc.record({ kind: fc.constant('in'), path, values: fc.array(scalar, { maxLength: 3 }), numeric: flag }),
    fc.record({ kind: fc.constant('like'), path, pattern, negate: fc.boolean() }),
    fc.record({
      kind: fc.constant('compare'),
      path,
      op: fc.constantFrom('eq', 'ne'),
      value: scalar,
      list: fc.constant(true),
    }),
    fc.record({
      kind: fc.constant('in'),
      path,
      values: fc.array(scalar, { maxLength: 3 }),
      list: fc.constant(true),
    }),
  );
  const { filter } = fc.letrec<{ filter: StoreFilter }>((tie) => ({
    filter: fc.oneof(
      { depthSize: 'small', maxDepth: 3 },
      { arbitrary: leaf, weight: 4 },
      {
        arbitrary: fc.record({
          kind: fc.constant('and'),
          children: fc.array(tie('filter'), { maxLength: 3 }),
        }),
        weight: 1,
      },
      {
        arbitrary: fc.record({
          kind: fc.constant('or'),
          children: fc.array(tie('filter'), { maxLength: 3 }),
        }),
        weight: 1,
      },
    ),
  }));

  test('given random records and filters, when found in the store and matched in memory, then the same ids come back', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(record, { minLength: 1, maxLength: 8 }),
        fc.array(filter, { minLength: 1, maxLength: 10 }),
        async (records, filters) => {
          const collection = uniqueName('match');
          const docs: Document[] = records.map((fields, index) => ({ id: `d${index}`, ...fields }));
          const changes: ReadModelChange[] = [
            // An index on the case-folded name, as records have: `like` may then read through it.
            {
              op: 'index',
              collection,
              index: { name: 'name', paths: [{ path: 'name', caseFolded: true }] },
              position: 1n,
            },
            ...docs.map((doc): ReadModelChange => ({ op: 'upsert', collection, doc, position: 1n })),
          ];
          await store.apply(changes);
          try {
            for (const storeFilter of filters) {
              const found = (await store.find(collection, { filter: storeFilter })).items.map(
                (doc) => doc.id,
              );
              expect(matching(storeFilter, docs)).toEqual(found);
            }
          } finally {
            await store.dropCollection(collection);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
