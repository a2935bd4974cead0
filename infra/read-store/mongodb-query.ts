import type { Document as BsonDocument, SortDirection } from 'mongodb';
import type { Scalar, StoreFilter, StoreSort } from '../../languages/filter/store-query';
import { LIKE_REGEX_OPTIONS, likePatternToMongoRegex, type RegexEngine } from './mongodb-like';
import { pathOfKey, type IndexKey } from '../../contracts/read-model-changes';
import { escapePath } from './mongodb-keys';
import { assertIntervalPoint, assertQueryPath } from './validation';

/**
 * Compiles store queries to MongoDB query documents, using only what FerretDB 1.x supports. MongoDB
 * already compares values of one type only (numbers with numbers, strings with strings); what needs
 * care is null and missing, which `store-query.ts` defines differently from MongoDB's defaults.
 */

/** Every document has an `_id`, so this matches none. */
const MATCH_NOTHING: BsonDocument = { _id: { $exists: false } };
const MATCH_ALL: BsonDocument = {};
/** eq null matches missing, null and ''; MongoDB's `null` in `$in`/`$nin` also stands for missing. */
const EMPTY_VALUES: readonly Scalar[] = [null, ''];

/** The stored field of a path (escaped as keys are, mongodb-keys.ts); a document's `id` is its `_id`. */
export function fieldOf(path: string): string {
  assertQueryPath(path);
  return path === 'id' ? '_id' : escapePath(path);
}

function compare(path: string, op: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte', value: Scalar): BsonDocument {
  const field = fieldOf(path);
  if (value === null) {
    if (op === 'eq') return { [field]: { $in: EMPTY_VALUES } };
    if (op === 'ne') return { [field]: { $nin: EMPTY_VALUES } };
    // MongoDB's `{$gte: null}` would match missing and null values; the contract says never.
    return MATCH_NOTHING;
  }
  return { [field]: { [`$${op}`]: value } };
}

function isIn(path: string, values: readonly Scalar[]): BsonDocument {
  if (values.length === 0) return MATCH_NOTHING;
  const listed = values.includes(null) ? [...values, ''] : values;
  return { [fieldOf(path)]: { $in: listed } };
}

function like(path: string, pattern: string, negate: boolean, engine: RegexEngine): BsonDocument {
  const field = fieldOf(path);
  if (pattern === '') return { [field]: { [negate ? '$nin' : '$in']: EMPTY_VALUES } };
  const regex = { $regex: likePatternToMongoRegex(pattern, engine), $options: LIKE_REGEX_OPTIONS };
  return { [field]: negate ? { $not: regex } : regex };
}

/**
 * `compare` and `in` on a list (store-query.ts): MongoDB already matches an array that holds the value; only
 * "empty" needs the empty list too.
 */
function compileListFilter(filter: Extract<StoreFilter, { kind: 'compare' | 'in' }>): BsonDocument {
  const field = fieldOf(filter.path);
  const values = filter.kind === 'in' ? filter.values : [filter.value];
  const op = filter.kind === 'in' ? 'eq' : filter.op;
  if (op !== 'eq' && op !== 'ne') throw new Error(`store filter: ${op} does not apply to a list`);
  const listed = values.filter((value) => value !== null);
  const alternatives: BsonDocument[] = listed.length > 0 ? [{ [field]: { $in: listed } }] : [];
  if (values.includes(null)) alternatives.push({ [field]: { $in: EMPTY_VALUES } }, { [field]: { $size: 0 } });
  if (alternatives.length === 0) return op === 'eq' ? MATCH_NOTHING : MATCH_ALL;
  if (op === 'eq') return alternatives.length === 1 ? alternatives[0]! : { $or: alternatives };
  return { $nor: alternatives };
}

/**
 * Whether the server is FerretDB 1.x, from its `buildInfo`: it reports `ferretdbVersion` (the build used in
 * CI reports "unknown", taken as 1.x).
 */
export function isFerretDbV1(buildInfo: BsonDocument): boolean {
  const version: unknown = buildInfo.ferretdbVersion;
  if (typeof version !== 'string') return false;
  const major = /^v?(\d+)\./.exec(version)?.[1];
  return major === undefined || Number(major) <= 1;
}

/**
 * How a server runs `$regex`: FerretDB 1.x uses Go's RE2. Anything else is taken to backtrack, as MongoDB's
 * PCRE does: the form for a backtracking engine is linear on any engine that accepts it, and one that
 * does not (no lookaheads) refuses the query rather than running it long.
 */
export function regexEngineOf(buildInfo: BsonDocument): RegexEngine {
  return isFerretDbV1(buildInfo) ? 'automaton' : 'backtracking';
}

export function compileFilter(filter: StoreFilter | undefined, engine: RegexEngine): BsonDocument {
  if (!filter) return MATCH_ALL;
  switch (filter.kind) {
    case 'and': {
      // MongoDB refuses an empty `$and`/`$or`.
      if (filter.children.length === 0) return MATCH_ALL;
      const children = filter.children.map((child) => compileFilter(child, engine));
      return children.length === 1 ? children[0] : { $and: children };
    }
    case 'or': {
      if (filter.children.length === 0) return MATCH_NOTHING;
      const children = filter.children.map((child) => compileFilter(child, engine));
      return children.length === 1 ? children[0] : { $or: children };
    }
    case 'compare':
      if (filter.list === true) return compileListFilter(filter);
      return compare(filter.path, filter.op, filter.value);
    case 'in':
      if (filter.list === true) return compileListFilter(filter);
      return isIn(filter.path, filter.values);
    case 'like':
      return like(filter.path, filter.pattern, filter.negate, engine);
    case 'during': {
      assertIntervalPoint(filter.at);
      const to = fieldOf(filter.to);
      return {
        $and: [
          { [fieldOf(filter.from)]: { $lte: filter.at } },
          { $or: [{ [to]: { $gt: filter.at } }, { [to]: { $in: [null] } }] },
        ],
      };
    }
  }
}

/**
 * The requested order, then `_id` ascending as the tie-breaker. A list of pairs, not an object: an object
 * would move integer-like keys to the front.
 */
export function compileSort(sort: readonly StoreSort[] | undefined): [string, SortDirection][] {
  const terms: [string, SortDirection][] = [];
  for (const { path, direction } of sort ?? []) {
    const field = fieldOf(path);
    terms.push([field, direction === 'asc' ? 1 : -1]);
    if (field === '_id') return terms;
  }
  terms.push(['_id', 1]);
  return terms;
}

/**
 * Index keys; a non-unique index ends with `_id` so that it also serves the tie-breaker. A case-folded key
 * is the plain field (see `IndexKey`).
 */
export function indexKeys(keys: readonly IndexKey[], unique: boolean): [string, 1][] {
  const fields = keys.map((key) => fieldOf(pathOfKey(key)));
  if (!unique && !fields.includes('_id')) fields.push('_id');
  return fields.map((field) => [field, 1]);
}
