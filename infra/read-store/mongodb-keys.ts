/**
 * Reversible escaping of document keys for MongoDB. FerretDB 1.x (and MongoDB in places) refuses keys that
 * contain `.` or start with `$`, BSON cannot hold a NUL in a key, and a key `__proto__` is a hazard wherever
 * a driver builds objects by assignment; yet such keys are ordinary data (a webhook's query keys). A key
 * that needs it is stored as MARK followed by the key with `%`, `.`, `$` and NUL percent-encoded; every
 * other key is stored as is, so query, sort, index and patch paths (strict `[A-Za-z0-9_]` segments) address
 * stored keys unchanged. A key that starts with MARK is escaped too, so decoding is never ambiguous.
 * MARK is a private-use character: no key written before this escaping existed is likely to start with it.
 */
const MARK = '\uE000';
const ENCODED: Readonly<Record<string, string>> = { '%': '%25', '.': '%2E', $: '%24', '\0': '%00' };
const DECODED: Readonly<Record<string, string>> = { '%25': '%', '%2E': '.', '%24': '$', '%00': '\0' };

function needsEscape(key: string): boolean {
  return (
    key === '' ||
    key === '__proto__' ||
    key.startsWith('$') ||
    key.startsWith(MARK) ||
    key.includes('.') ||
    key.includes('\0')
  );
}

export function escapeKey(key: string): string {
  return needsEscape(key) ? MARK + key.replace(/[%.$\0]/g, (char) => ENCODED[char]!) : key;
}

export function unescapeKey(stored: string): string {
  return stored.startsWith(MARK)
    ? stored.slice(MARK.length).replace(/%(?:25|2E|24|00)/g, (code) => DECODED[code]!)
    : stored;
}

/** A dotted patch path whose segments (strict, but possibly starting with MARK) are escaped one by one. */
export function escapePath(path: string): string {
  return path.split('.').map(escapeKey).join('.');
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * `value` with every key (at every depth) mapped by `mapKey`. Objects are rebuilt with own data properties
 * (`Object.fromEntries`), so a key `__proto__` stays a key. Values that are neither plain objects nor
 * arrays (BSON types such as Long) are kept as they are.
 */
function mapKeys(value: unknown, mapKey: (key: string) => string): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => mapKeys(item, mapKey));
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [mapKey(key), mapKeys(inner, mapKey)]),
  );
}

export function escapeKeys<T>(value: T): T {
  return mapKeys(value, escapeKey) as T;
}

export function unescapeKeys<T>(value: T): T {
  return mapKeys(value, unescapeKey) as T;
}
