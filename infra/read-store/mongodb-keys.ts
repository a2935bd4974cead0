/**
 * Reversible escaping of documents for MongoDB. FerretDB 1.x (and MongoDB in places) refuses keys that
 * contain `.` or start with `$` and arrays directly inside arrays, BSON cannot hold a NUL in a key, the
 * driver takes an object with a `_bsontype` key for one of its types, and it decodes an array under a key
 * named like a property of `Object.prototype` (`constructor`, `toString`…) as raw bytes (bson's
 * `fieldsAsRaw[name]` finds the inherited property); yet all of these are ordinary data (a webhook's query
 * keys, a JSON body); FerretDB also moves a nested `_id` first and cannot read back a key holding a control
 * character. A key that needs it is stored as MARK followed by the key with `%`, `.`, `$` and control
 * characters percent-encoded; every other key is stored as is, so documents written before read the same. A key that
 * starts with MARK is escaped too, so decoding is never ambiguous. MARK is a private-use character: no key
 * written before this escaping existed is likely to start with it. An array inside an array is stored
 * wrapped in an object whose one key is NESTED_ARRAY, a key no escaping produces.
 * Paths (query, sort, index, patch) are escaped segment by segment the same way (`escapePath`).
 */
const MARK = '\uE000';
const NESTED_ARRAY = `${MARK}[]`;
/**
 * Encoded in an escaped key: the escape itself, what FerretDB refuses, and control characters (NUL, and the
 * others, which FerretDB 1.x on SQLite writes unescaped into its JSON and then cannot read back).
 */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const ENCODED_CHARACTERS = /[%.$\u0000-\u001f\u007f]/g;
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const NEEDS_ENCODING = /[.\u0000-\u001f\u007f]/;
const ENCODED_CHARACTER = /%([0-9A-F]{2})/g;

function needsEscape(key: string): boolean {
  return (
    key === '' ||
    Object.hasOwn(Object.prototype, key) ||
    key === '_bsontype' ||
    key === '_id' ||
    key.startsWith('$') ||
    key.startsWith(MARK) ||
    NEEDS_ENCODING.test(key)
  );
}

export function escapeKey(key: string): string {
  if (!needsEscape(key)) return key;
  const encoded = key.replace(
    ENCODED_CHARACTERS,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
  return MARK + encoded;
}

export function unescapeKey(stored: string): string {
  return stored.startsWith(MARK)
    ? stored
        .slice(MARK.length)
        .replace(ENCODED_CHARACTER, (_code, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    : stored;
}

/** A dotted path (query, sort, index, patch: strict segments) as stored: each segment escaped. */
export function escapePath(path: string): string {
  return path.split('.').map(escapeKey).join('.');
}

export function unescapePath(path: string): string {
  return path.split('.').map(unescapeKey).join('.');
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * `value` with every key (at every depth) escaped, arrays inside arrays wrapped. Objects are rebuilt with own
 * data properties (`Object.fromEntries`), so a key `__proto__` stays a key. Values that are neither plain
 * objects nor arrays (BSON types such as Long) are kept as they are.
 */
export function escapeKeys<T>(value: T): T {
  return escapeValue(value, false) as T;
}

function escapeValue(value: unknown, inArray: boolean): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const items = value.map((item) => escapeValue(item, true));
    return inArray ? { [NESTED_ARRAY]: items } : items;
  }
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [escapeKey(key), escapeValue(inner, false)]),
  );
}

export function unescapeKeys<T>(value: T): T {
  return unescapeValue(value) as T;
}

function unescapeValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(unescapeValue);
  if (!isPlainObject(value)) return value;
  const entries = Object.entries(value);
  if (entries.length === 1 && entries[0]![0] === NESTED_ARRAY && Array.isArray(entries[0]![1]))
    return unescapeValue(entries[0]![1]);
  return Object.fromEntries(entries.map(([key, inner]) => [unescapeKey(key), unescapeValue(inner)]));
}
