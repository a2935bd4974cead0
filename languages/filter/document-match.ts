import type { Document } from '../../contracts/read-model-changes';
import { compileLikeMatcher } from './like-pattern';
import type { Scalar, StoreFilter } from './store-query';

/**
 * Whether one document matches a store filter, decided in memory: the answer `find` of a read store would
 * give for that document (store-query.ts), without asking one. For a record as it is after an event (an
 * outgoing subscription's filter), where a query per event and subscription would cost a round trip.
 *
 * Documents are JSON data, as projections write them. Each value is read as the SQLite adapter reads the
 * stored JSON (sqlite-query.ts), so this agrees with it on every document, which
 * test/unit/document-match.test.ts checks against a real store:
 * - a missing key, `null` and `undefined` are all SQL NULL; a non-finite number is NULL too (JSON writes it
 *   as `null`);
 * - numbers compare with numbers, strings with strings, booleans with booleans, and strings in code point
 *   order (SQLite compares their UTF-8 bytes), never JavaScript's UTF-16 code unit order;
 * - an array or object at the path is its JSON text.
 *
 * Where store-query.ts leaves the answer open, this follows SQLite, and MongoDB answers differently: a
 * `numeric` filter on a field that holds booleans after all reads them as 1 and 0; a `list` filter reads
 * `true` and `false` in a list as 1 and 0 and an object as the list of its values; a filter without `list`
 * on an array or object compares its JSON text (MongoDB looks at each element). The list language makes
 * none of these: its numbers are never booleans and list fields always get `list`.
 *
 * Two differences with SQLite remain, on values records never hold: an integer beyond 2^53 whose shortest
 * JSON form is not its exact value (SQLite reads those digits as a 64-bit integer, which then equals no
 * double; record integers are safe integers), and `like` on a string with a lone surrogate (SQLite hands
 * the matcher U+FFFD for each of its three bytes; equality and order agree).
 */
export function matchesFilter(doc: Document, filter: StoreFilter | undefined): boolean {
  if (!filter) return true;
  switch (filter.kind) {
    case 'and':
      return filter.children.every((child) => matchesFilter(doc, child));
    case 'or':
      return filter.children.some((child) => matchesFilter(doc, child));
    case 'compare': {
      const value = valueAt(doc, filter.path);
      if (filter.list === true) {
        if (filter.op !== 'eq' && filter.op !== 'ne')
          throw new Error(`store filter: ${filter.op} does not apply to a list`);
        return listHolds(value, [filter.value]) === (filter.op === 'eq');
      }
      return compares(value, filter.op, filter.value, filter.numeric === true);
    }
    case 'in': {
      const value = valueAt(doc, filter.path);
      if (filter.list === true) return listHolds(value, filter.values);
      const numeric = filter.numeric === true;
      return filter.values.some((listed) =>
        listed === null ? isEmpty(value) : equals(value, listed, numeric),
      );
    }
    case 'like':
      return likes(valueAt(doc, filter.path), filter.pattern) !== filter.negate;
    case 'during': {
      const to = valueAt(doc, filter.to);
      return (
        compares(valueAt(doc, filter.from), 'lte', filter.at, true) &&
        (sqlValueOf(to) === null || compares(to, 'gt', filter.at, true))
      );
    }
  }
}

/**
 * The value at a dotted path, undefined when missing. Own keys of objects only: `constructor` or
 * `__proto__` must not reach Object's prototype, and a key does not index an array (nor does it in SQLite's
 * JSON paths).
 */
function valueAt(doc: Document, path: string): unknown {
  let value: unknown = doc;
  for (const key of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, key))
      return undefined;
    value = (value as Readonly<Record<string, unknown>>)[key];
  }
  return value;
}

/** A value as SQLite's `json_extract` reads it from the stored JSON; null is SQL NULL. */
type SqlValue = string | number | null;

function sqlValueOf(value: unknown): SqlValue {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'boolean':
      return value ? 1 : 0;
    case 'object':
      return value === null ? null : JSON.stringify(value);
    default:
      return null;
  }
}

/** What `eq null` matches: missing, null and ''. */
function isEmpty(value: unknown): boolean {
  const sql = sqlValueOf(value);
  return sql === null || sql === '';
}

/**
 * Equality with a non-null value: of one type only, but a number reads a boolean as 1 or 0 where the
 * filter promises the field holds no booleans (`numeric`): the SQLite adapter then skips the type check
 * so that an index alone can answer.
 */
function equals(value: unknown, target: Exclude<Scalar, null>, numeric: boolean): boolean {
  if (typeof target === 'boolean') return value === target;
  if (typeof value === 'boolean' && !numeric) return false;
  return sqlValueOf(value) === target;
}

type CompareOp = Extract<StoreFilter, { kind: 'compare' }>['op'];

function compares(value: unknown, op: CompareOp, target: Scalar, numeric: boolean): boolean {
  if (target === null) {
    if (op === 'eq') return isEmpty(value);
    if (op === 'ne') return !isEmpty(value);
    return false;
  }
  if (op === 'eq') return equals(value, target, numeric);
  // A missing or null value is "not equal" too.
  if (op === 'ne') return !equals(value, target, numeric);
  const order = orderOf(value, target, numeric);
  if (order === undefined) return false;
  switch (op) {
    case 'gt':
      return order > 0;
    case 'gte':
      return order >= 0;
    case 'lt':
      return order < 0;
    case 'lte':
      return order <= 0;
  }
}

/** How the value orders against a non-null target of its own type (as `equals` pairs them); else undefined. */
function orderOf(value: unknown, target: Exclude<Scalar, null>, numeric: boolean): number | undefined {
  if (typeof target === 'boolean')
    return typeof value === 'boolean' ? Number(value) - Number(target) : undefined;
  if (typeof value === 'boolean' && !numeric) return undefined;
  const sql = sqlValueOf(value);
  if (typeof target === 'string') return typeof sql === 'string' ? compareCodePoints(sql, target) : undefined;
  if (typeof sql !== 'number') return undefined;
  return sql < target ? -1 : sql > target ? 1 : 0;
}

/**
 * Code point order, as SQLite's byte order of UTF-8 text: JavaScript's `<` compares UTF-16 code units,
 * which puts U+E000..U+FFFF after every astral character. A lone surrogate orders as its own value, as
 * SQLite stores its three bytes.
 */
function compareCodePoints(left: string, right: string): number {
  for (let index = 0; index < left.length && index < right.length;) {
    const leftPoint = left.codePointAt(index)!;
    const rightPoint = right.codePointAt(index)!;
    if (leftPoint !== rightPoint) return leftPoint - rightPoint;
    index += leftPoint > 0xffff ? 2 : 1;
  }
  return left.length - right.length;
}

/** `like` on strings only; `''` is the pattern of the empty values (store-query.ts). */
function likes(value: unknown, pattern: string): boolean {
  if (pattern === '') return isEmpty(value);
  const sql = sqlValueOf(value);
  return typeof sql === 'string' && compileLikeMatcher(pattern)(sql);
}

/**
 * Whether a list holds one of `values` (SQLite's `json_each`: an array's elements, an object's values, a
 * scalar as a list of itself); `null` stands for an empty value or an empty list.
 */
function listHolds(value: unknown, values: readonly Scalar[]): boolean {
  const elements = elementsOf(value).map(sqlValueOf);
  return values.some((listed) =>
    listed === null
      ? isEmpty(value) || (Array.isArray(value) && value.length === 0)
      : elements.includes(sqlValueOf(listed)),
  );
}

function elementsOf(value: unknown): readonly unknown[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value;
  if (typeof value === 'object' && value !== null) return Object.values(value);
  return [value];
}
