import type { Scalar, StoreFilter, StoreSort } from '../../languages/filter/store-query';
import type { IndexKey } from '../../contracts/read-model-changes';
import { assertIntervalPoint, assertQueryPath } from './validation';

/**
 * Compiles store queries to SQL over a table `(id TEXT PRIMARY KEY, doc TEXT, pos INTEGER)`.
 *
 * A path's value is `json_extract(doc, '$."a"."b"')` — the exact expression `ensureIndex` indexes, so the
 * planner can use those indexes. Paths are validated ([A-Za-z0-9_] segments) before they are embedded;
 * values are always bound parameters.
 *
 * MongoDB compares only values of the same type (numbers with numbers, strings with strings); SQLite
 * orders every number below every string and reads JSON booleans as the integers 1 and 0. The guards
 * below make SQLite answer like MongoDB, using bounds the index can serve where possible and a
 * `json_type` check only where a boolean could otherwise pass for 0 or 1.
 */

export type SqlValue = string | number | null;

export interface SqlFragment {
  readonly sql: string;
  readonly params: readonly SqlValue[];
}

/** The registered function behind `like`: see sqlite.ts. */
export const LIKE_FUNCTION = 'read_store_like';

const MATCH_ALL: SqlFragment = { sql: '1', params: [] };
const MATCH_NOTHING: SqlFragment = { sql: '0', params: [] };

function jsonPath(path: string): string {
  assertQueryPath(path);
  return `'$.${path
    .split('.')
    .map((segment) => `"${segment}"`)
    .join('.')}'`;
}

/** The SQL expression of a path's value; `id` is the primary-key column. */
export function valueExpression(path: string): string {
  return path === 'id' ? 'id' : `json_extract(doc, ${jsonPath(path)})`;
}

function typeExpression(path: string): string {
  return path === 'id' ? `'text'` : `json_type(doc, ${jsonPath(path)})`;
}

type ComparisonOp = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte';
type RangeOp = Exclude<ComparisonOp, 'eq' | 'ne'>;

const SQL_OPERATOR: Record<RangeOp, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

function isNumber(value: unknown): value is number {
  return typeof value === 'number';
}

function rangeAdmits(op: RangeOp, bound: number, candidate: number): boolean {
  switch (op) {
    case 'gt':
      return candidate > bound;
    case 'gte':
      return candidate >= bound;
    case 'lt':
      return candidate < bound;
    case 'lte':
      return candidate <= bound;
  }
}

const NUMBER_TYPES = `IN ('integer', 'real')`;
const BOOLEAN_TYPES = `IN ('true', 'false')`;

function matchesEmpty(path: string): SqlFragment {
  const value = valueExpression(path);
  return { sql: `(${value} IS NULL OR ${value} = '')`, params: [] };
}

function not(fragment: SqlFragment): SqlFragment {
  return { sql: `NOT (${fragment.sql})`, params: fragment.params };
}

/** Equality with a non-null scalar; NULL (not a match) for a missing or null value. */
function equals(path: string, value: string | number | boolean, numeric: boolean): SqlFragment {
  const expression = valueExpression(path);
  if (typeof value === 'string') return { sql: `${expression} = ?`, params: [value] };
  if (typeof value === 'boolean') {
    return {
      sql: `(${expression} = ? AND ${typeExpression(path)} ${BOOLEAN_TYPES})`,
      params: [value ? 1 : 0],
    };
  }
  // Only 0 and 1 can be confused with a boolean, on a field that may hold booleans.
  return (value === 0 || value === 1) && !numeric
    ? { sql: `(${expression} = ? AND ${typeExpression(path)} ${NUMBER_TYPES})`, params: [value] }
    : { sql: `${expression} = ?`, params: [value] };
}

function range(path: string, op: RangeOp, value: string | number | boolean, numeric: boolean): SqlFragment {
  const expression = valueExpression(path);
  const operator = SQL_OPERATOR[op];
  if (typeof value === 'string') {
    // Numbers sort below every string: bound from below by '' so that `<` does not reach them.
    return op === 'gt' || op === 'gte'
      ? { sql: `${expression} ${operator} ?`, params: [value] }
      : { sql: `(${expression} ${operator} ? AND ${expression} >= '')`, params: [value] };
  }
  if (typeof value === 'boolean') {
    return {
      sql: `(${expression} ${operator} ? AND ${typeExpression(path)} ${BOOLEAN_TYPES})`,
      params: [value ? 1 : 0],
    };
  }
  // Strings sort above every number: bound from above by ''.
  const belowStrings = `${expression} ${operator} ? AND ${expression} < ''`;
  const admitsBoolean = !numeric && (rangeAdmits(op, value, 0) || rangeAdmits(op, value, 1));
  return admitsBoolean
    ? { sql: `(${belowStrings} AND ${typeExpression(path)} ${NUMBER_TYPES})`, params: [value] }
    : { sql: `(${belowStrings})`, params: [value] };
}

function compare(path: string, op: ComparisonOp, value: Scalar, numeric: boolean): SqlFragment {
  if (value === null) {
    if (op === 'eq') return matchesEmpty(path);
    if (op === 'ne') return not(matchesEmpty(path));
    return MATCH_NOTHING;
  }
  if (op === 'eq') return equals(path, value, numeric);
  if (op === 'ne') {
    // A missing or null value is "not equal" too (store-query.ts).
    const equality = equals(path, value, numeric);
    return { sql: `(${valueExpression(path)} IS NULL OR NOT (${equality.sql}))`, params: equality.params };
  }
  return range(path, op, value, numeric);
}

function placeholders(count: number): string {
  return new Array<string>(count).fill('?').join(', ');
}

function isIn(path: string, values: readonly Scalar[], numeric: boolean): SqlFragment {
  const expression = valueExpression(path);
  const strings = values.filter((value) => typeof value === 'string');
  const numbers = values.filter(isNumber);
  const ambiguous = (value: number): boolean => !numeric && (value === 0 || value === 1);
  const ambiguousNumbers = numbers.filter(ambiguous);
  const plainNumbers = numbers.filter((value) => !ambiguous(value));
  const booleans = values.filter((value) => typeof value === 'boolean').map((value) => (value ? 1 : 0));

  const alternatives: SqlFragment[] = [];
  const plain = [...strings, ...plainNumbers];
  if (plain.length > 0)
    alternatives.push({ sql: `${expression} IN (${placeholders(plain.length)})`, params: plain });
  if (ambiguousNumbers.length > 0) {
    alternatives.push({
      sql: `(${expression} IN (${placeholders(ambiguousNumbers.length)}) AND ${typeExpression(path)} ${NUMBER_TYPES})`,
      params: ambiguousNumbers,
    });
  }
  if (booleans.length > 0) {
    alternatives.push({
      sql: `(${expression} IN (${placeholders(booleans.length)}) AND ${typeExpression(path)} ${BOOLEAN_TYPES})`,
      params: booleans,
    });
  }
  if (values.includes(null)) alternatives.push(matchesEmpty(path));
  return join('OR', alternatives, MATCH_NOTHING);
}

/**
 * A case-folded copy of a value, for index ranges of `like` (see `likeRange`). `like` folds case as
 * JavaScript's `iu` RegExp does (Unicode simple case folding); the only characters that fold to a printable
 * ASCII character are that character's own upper or lower case, U+212A KELVIN SIGN (k) and U+017F LONG S
 * (s) (test/unit/read-store-sqlite.test.ts checks every code point). SQLite's built-in `lower()` (ASCII
 * only) plus those two replacements folds exactly these as `like` does; other characters are left unchanged, so only a printable-ASCII prefix of a pattern can become a
 * range. Built-in functions only: every connection can maintain an index on it, none needs a registered
 * function (and nothing depends on the Unicode tables of the running Node).
 */
export function caseFolded(expression: string): string {
  return `replace(replace(lower(${expression}), char(8490), 'k'), char(383), 's')`;
}

/** Printable ASCII only: no NUL, which SQLite's text functions need not carry through. */
const PRINTABLE_ASCII_START = /^[\x20-\x7e]*/;

/**
 * The case-folded literal start of a `like` pattern that `caseFolded` folds as `like` does: up to its first
 * `%` and first character outside printable ASCII ('' when there is none).
 */
export function foldedLiteralPrefix(pattern: string): string {
  const literal = pattern.split('%', 1)[0] ?? '';
  return (PRINTABLE_ASCII_START.exec(literal)?.[0] ?? '').toLowerCase();
}

/**
 * Every value a pattern with this folded prefix can match has a case-folded copy in [prefix, bound): the
 * bound is the prefix with its last character raised by one (still ASCII or U+007F, so it sorts right in
 * SQLite's byte order). A superset only: the exact check still runs on each candidate.
 */
function likeRange(path: string, prefix: string): SqlFragment {
  const folded = caseFolded(valueExpression(path));
  const bound = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  return { sql: `${folded} >= ? AND ${folded} < ?`, params: [prefix, bound] };
}

/**
 * `like` runs a registered JavaScript function (see sqlite.ts) on each candidate. A pattern with a literal
 * prefix first narrows the candidates to a range of the case-folded value, which an index with that path as
 * a case-folded key (`IndexKey`) serves, and which is cheaper than the function even without one.
 */
function like(path: string, pattern: string, negate: boolean): SqlFragment {
  if (pattern === '') return negate ? not(matchesEmpty(path)) : matchesEmpty(path);
  const matches: SqlFragment = { sql: `${LIKE_FUNCTION}(${valueExpression(path)}, ?)`, params: [pattern] };
  if (negate) return not(matches);
  const prefix = foldedLiteralPrefix(pattern);
  if (prefix === '') return matches;
  const range = likeRange(path, prefix);
  return { sql: `(${range.sql} AND ${matches.sql})`, params: [...range.params, ...matches.params] };
}

function join(
  connective: 'AND' | 'OR',
  fragments: readonly SqlFragment[],
  whenEmpty: SqlFragment,
): SqlFragment {
  if (fragments.length === 0) return whenEmpty;
  if (fragments.length === 1) return fragments[0];
  return {
    sql: `(${fragments.map((fragment) => fragment.sql).join(` ${connective} `)})`,
    params: fragments.flatMap((fragment) => fragment.params),
  };
}

/** A list value with no element (`[]`): what `eq null` on a list matches beside missing and null. */
function emptyList(path: string): string {
  return `(${typeExpression(path)} = 'array' AND json_array_length(doc, ${jsonPath(path)}) = 0)`;
}

/** Whether the list at `path` holds one of `values` (a scalar counts as a list of itself). */
function listHolds(path: string, values: readonly Scalar[]): SqlFragment {
  const listed = values
    .filter((value) => value !== null)
    .map((value) => (value === true ? 1 : value === false ? 0 : value));
  const holds: SqlFragment = {
    sql: `EXISTS (SELECT 1 FROM json_each(doc, ${jsonPath(path)}) WHERE value IN (${placeholders(listed.length)}))`,
    params: listed,
  };
  const alternatives = listed.length > 0 ? [holds] : [];
  if (values.includes(null))
    alternatives.push({ sql: `(${matchesEmpty(path).sql} OR ${emptyList(path)})`, params: [] });
  return join('OR', alternatives, MATCH_NOTHING);
}

/** `compare` and `in` on a list (store-query.ts): membership, not equality of the whole value. */
function compileListFilter(filter: Extract<StoreFilter, { kind: 'compare' | 'in' }>): SqlFragment {
  if (filter.kind === 'in') return listHolds(filter.path, filter.values);
  if (filter.op !== 'eq' && filter.op !== 'ne')
    throw new Error(`store filter: ${filter.op} does not apply to a list`);
  const holds = listHolds(filter.path, [filter.value]);
  return filter.op === 'eq' ? holds : not(holds);
}

export function compileFilter(filter: StoreFilter | undefined): SqlFragment {
  if (!filter) return MATCH_ALL;
  switch (filter.kind) {
    case 'and':
      return join('AND', filter.children.map(compileFilter), MATCH_ALL);
    case 'or':
      return join('OR', filter.children.map(compileFilter), MATCH_NOTHING);
    case 'compare':
      if (filter.list === true) return compileListFilter(filter);
      return compare(filter.path, filter.op, filter.value, filter.numeric === true);
    case 'in':
      if (filter.list === true) return compileListFilter(filter);
      return isIn(filter.path, filter.values, filter.numeric === true);
    case 'like':
      return like(filter.path, filter.pattern, filter.negate);
    case 'during':
      return during(filter.from, filter.to, filter.at);
  }
}

/**
 * `during` as its two bounds, as an index that has both (after the keys a list seeks and orders on) checks
 * them; counts take an interval index where one serves (sqlite-intervals.ts).
 */
function during(from: string, to: string, at: number): SqlFragment {
  assertIntervalPoint(at);
  const end = valueExpression(to);
  return { sql: `(${valueExpression(from)} <= ? AND (${end} > ? OR ${end} IS NULL))`, params: [at, at] };
}

/** The requested order, then `id` ascending as the tie-breaker (unless the order already reached `id`). */
export function compileOrderBy(sort: readonly StoreSort[] | undefined): string {
  const terms: string[] = [];
  for (const { path, direction } of sort ?? []) {
    terms.push(`${valueExpression(path)} ${direction === 'asc' ? 'ASC' : 'DESC'}`);
    if (path === 'id') return terms.join(', ');
  }
  terms.push('id ASC');
  return terms.join(', ');
}

/**
 * The column list of an index over `keys`: the path's value, or its case-folded copy. A non-unique index
 * ends with `id` so that it also serves the `id` tie-breaker of the order; a unique one cannot (it would
 * make every entry unique).
 */
export function indexColumns(keys: readonly IndexKey[], unique: boolean): string {
  const columns = keys.map((key) =>
    typeof key === 'string' ? valueExpression(key) : caseFolded(valueExpression(key.path)),
  );
  if (!unique && !keys.includes('id')) columns.push('id');
  return columns.join(', ');
}
