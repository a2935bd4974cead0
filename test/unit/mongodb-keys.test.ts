import fc from 'fast-check';
import {
  escapeKey,
  escapeKeys,
  escapePath,
  unescapeKey,
  unescapeKeys,
} from '../../infra/read-store/mongodb-keys';

/** What FerretDB 1.x and BSON accept as a key. */
function storable(key: string): boolean {
  return key.length > 0 && !key.includes('.') && !key.startsWith('$') && !key.includes('\0');
}

const anyKey = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.stringMatching(/^[\uE000%.$\0a]{0,8}$/),
  fc.constantFrom(
    '',
    '__proto__',
    'constructor',
    'toString',
    '_bsontype',
    '\uE000',
    '\uE000[]',
    '[]',
    '%2E',
    '\uE000%2E',
    '$where',
    'a.b',
  ),
);

describe('MongoDB key escaping', () => {
  test('any key escapes to a storable key and back to itself', () => {
    fc.assert(
      fc.property(anyKey, (key) => {
        const stored = escapeKey(key);
        expect(storable(stored)).toBe(true);
        // Nothing the driver reads specially (a prototype's property, a BSON type marker).
        expect(Object.hasOwn(Object.prototype, stored) || stored === '_bsontype').toBe(false);
        expect(unescapeKey(stored)).toBe(key);
      }),
      { numRuns: 2000 },
    );
  });

  test('distinct keys stay distinct', () => {
    fc.assert(
      fc.property(anyKey, anyKey, (a, b) => {
        fc.pre(a !== b);
        expect(escapeKey(a)).not.toBe(escapeKey(b));
      }),
      { numRuns: 2000 },
    );
  });

  test("query, index and patch paths (strict segments) are stored as they are, bar the driver's hazards", () => {
    // `constructor`, `toString`… and `_bsontype` are escaped in paths as in documents (so they still meet).
    const hazard = (segment: string) => Object.hasOwn(Object.prototype, segment) || segment === '_bsontype';
    const strictPath = fc
      .stringMatching(/^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/)
      .filter((path) => !path.split('.').some(hazard));
    fc.assert(
      fc.property(strictPath, (path) => {
        expect(escapePath(path)).toBe(path);
        for (const segment of path.split('.')) expect(escapeKey(segment)).toBe(segment);
      }),
    );
    expect(escapePath('fields.constructor')).toBe(`fields.${escapeKey('constructor')}`);
    expect(escapeKeys({ fields: { constructor: 1 } })).toEqual({ fields: { [escapeKey('constructor')]: 1 } });
  });

  test('keys at every depth round-trip; __proto__ stays an own key', () => {
    const value = JSON.parse(
      '{"a.b":[{"$x":{"__proto__":{"":1}}}],"ok":{"\\u0000":null},"nested":[[[1]],[],[[]]],"\\ue000[]":[[2]]}',
    ) as unknown;
    const stored = escapeKeys(value);
    expect(JSON.stringify(stored)).not.toMatch(/"(\$|__proto__"|[^"]*\.)|\[\[/);
    const back = unescapeKeys(stored);
    expect(JSON.stringify(back)).toBe(JSON.stringify(value));
    expect(Object.prototype).not.toHaveProperty('');
  });
});
