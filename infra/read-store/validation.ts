import { type Checkpoint } from './port';
import {
  pathOfKey,
  type Document,
  type IndexSpec,
  type ReadModelChange,
} from '../../contracts/read-model-changes';

/**
 * Input checks shared by every read-store adapter, so that each one rejects the same inputs with the same
 * message (MongoDB would otherwise reject some of them itself, SQLite silently accept them).
 */

const COLLECTION_NAME = /^[a-z][a-z0-9_]*$/;
const INDEX_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;
/** Query paths are embedded in SQL (as JSON paths) and in index definitions: the strict form only. */
const QUERY_PATH = /^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/;
/** Top-level keys the MongoDB adapter keeps for itself; rejected everywhere so documents stay portable. */
const RESERVED_KEYS = new Set(['_id', '_pos']);
const MAX_POSITION = 2n ** 63n - 1n;

export function isCollectionName(name: string): boolean {
  return COLLECTION_NAME.test(name);
}

export function assertCollectionName(collection: string): void {
  if (!isCollectionName(collection)) {
    throw new TypeError(`invalid collection name ${JSON.stringify(collection)}: expected [a-z][a-z0-9_]*`);
  }
}

export function assertQueryPath(path: string): void {
  // `__proto__` is stored escaped on MongoDB (mongodb-keys.ts): no query may address it.
  if (!QUERY_PATH.test(path) || path.split('.').includes('__proto__')) {
    throw new TypeError(
      `invalid path ${JSON.stringify(path)}: expected dot-separated [A-Za-z0-9_]+ segments`,
    );
  }
}

export function assertIndexSpec(index: IndexSpec): void {
  if (!INDEX_NAME.test(index.name)) {
    throw new TypeError(`invalid index name ${JSON.stringify(index.name)}: expected [A-Za-z][A-Za-z0-9_]*`);
  }
  if (index.paths.length === 0) throw new TypeError(`index ${index.name} has no paths`);
  index.paths.map(pathOfKey).forEach(assertQueryPath);
  if (index.unique && index.paths.some((key) => typeof key !== 'string'))
    throw new TypeError(`index ${index.name}: a unique index cannot have a case-folded key`);
  if (index.interval) {
    const { from, to, then } = index.interval;
    [from, to, ...then].forEach(assertQueryPath);
    if (index.unique) throw new TypeError(`index ${index.name}: an interval index cannot be unique`);
    if (index.paths.some((key) => typeof key !== 'string'))
      throw new TypeError(`index ${index.name}: an interval index cannot have a case-folded key`);
  }
}

/** The point a `during` filter asks about: an integer both stores compare exactly. */
export function assertIntervalPoint(at: number): void {
  if (!Number.isSafeInteger(at)) throw new TypeError(`invalid interval point ${at}: expected a safe integer`);
}

/**
 * Keys inside a document's values are data (a webhook's query keys, a JSON body's keys): any string is one,
 * `.`, `$`, empty, NUL and `__proto__` included; each adapter stores them exactly (MongoDB escapes them).
 * What a store cannot hold is nesting: MongoDB refuses documents nested more than 100 levels, so both
 * adapters refuse them at the same depth, counting the document itself and each path segment of a patch.
 */
export const MAX_DOCUMENT_DEPTH = 100;

/** Patch paths (like query paths) are written by projections, never taken from data: the strict key rule. */
function isValidPathSegment(key: string): boolean {
  return key.length > 0 && !key.includes('.') && !key.startsWith('$') && key !== '__proto__';
}

/** Whether `value` nests deeper than `levels` objects or arrays (stops looking at the first that does). */
function nestsDeeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (levels <= 0) return true;
  for (const inner of Array.isArray(value) ? value : Object.values(value))
    if (nestsDeeperThan(inner, levels - 1)) return true;
  return false;
}

function assertDepth(value: unknown, levels: number, where: string): void {
  if (nestsDeeperThan(value, levels))
    throw new RangeError(`${where} nests deeper than ${MAX_DOCUMENT_DEPTH} levels`);
}

export function assertDocument(doc: Document): void {
  if (typeof doc.id !== 'string' || doc.id.length === 0)
    throw new TypeError('a document needs a non-empty string id');
  for (const key of Object.keys(doc)) {
    if (RESERVED_KEYS.has(key)) throw new TypeError(`document ${doc.id}: the key ${key} is reserved`);
  }
  assertDepth(doc, MAX_DOCUMENT_DEPTH, `document ${doc.id}`);
}

/**
 * Patch paths address stored keys, so they follow the key rule (not the stricter query-path rule). `change`
 * names the change in errors.
 */
function assertPatchPath(path: string, change: string): void {
  const segments = path.split('.');
  if (!segments.every(isValidPathSegment))
    throw new TypeError(`${change}: invalid path ${JSON.stringify(path)}`);
  if (segments[0] === 'id' || RESERVED_KEYS.has(segments[0])) {
    throw new TypeError(`${change}: the path ${path} cannot be changed`);
  }
}

/** The paths of a set with their values: each a valid patch path, and not too deep for the document. */
function assertSet(set: Readonly<Record<string, unknown>> | undefined, change: string): void {
  for (const [path, value] of Object.entries(set ?? {})) {
    assertPatchPath(path, change);
    // The document, then one level per segment above the value's own.
    assertDepth(value, MAX_DOCUMENT_DEPTH - path.split('.').length, `${change} at ${path}`);
  }
}

/** MongoDB refuses an update that touches a path twice, or a path and a path inside it; so do we. */
function assertNoOverlap(
  change: Pick<Extract<ReadModelChange, { op: 'patch' }>, 'set' | 'unset' | 'inc'>,
  named: string,
): void {
  const paths = [
    ...Object.entries(change.set ?? {})
      .filter(([, value]) => value !== undefined)
      .map(([path]) => path),
    ...(change.unset ?? []),
    ...Object.keys(change.inc ?? {}),
  ];
  paths.forEach((path, i) => {
    for (const other of paths.slice(i + 1)) {
      if (path === other || other.startsWith(`${path}.`) || path.startsWith(`${other}.`)) {
        throw new TypeError(`${named}: the paths ${path} and ${other} overlap`);
      }
    }
  });
}

export function assertPosition(position: bigint): void {
  if (typeof position !== 'bigint' || position < 0n || position > MAX_POSITION) {
    throw new RangeError(`a position must be a bigint in [0, 2^63 - 1], got ${String(position)}`);
  }
}

/** Checks a whole batch before anything is written: MongoDB cannot roll back a half-applied batch. */
export function assertChange(change: ReadModelChange): void {
  assertCollectionName(change.collection);
  assertPosition(change.position);
  switch (change.op) {
    case 'upsert':
      assertDocument(change.doc);
      return;
    case 'delete':
      if (typeof change.id !== 'string' || change.id.length === 0) throw new TypeError('delete needs an id');
      return;
    case 'index':
      assertIndexSpec(change.index);
      return;
    case 'patch': {
      if (typeof change.id !== 'string' || change.id.length === 0) throw new TypeError('patch needs an id');
      const named = `patch of ${change.id}`;
      assertSet(change.set, named);
      for (const path of change.unset ?? []) assertPatchPath(path, named);
      for (const [path, amount] of Object.entries(change.inc ?? {})) {
        assertPatchPath(path, named);
        if (typeof amount !== 'number' || !Number.isFinite(amount)) {
          throw new TypeError(`${named}: inc of ${path} must be a finite number`);
        }
      }
      assertNoOverlap(change, named);
      return;
    }
    case 'copy': {
      if (typeof change.id !== 'string' || change.id.length === 0) throw new TypeError('copy needs an id');
      assertCollectionName(change.from.collection);
      if (typeof change.from.id !== 'string' || change.from.id.length === 0)
        throw new TypeError(`copy to ${change.id} needs the id of its source`);
      const named = `copy to ${change.id}`;
      assertSet(change.set, named);
      assertNoOverlap(change, named);
      return;
    }
    case 'patchWhere': {
      const entries = Object.entries(change.where);
      if (entries.length === 0) throw new TypeError('patchWhere needs at least one key in where');
      for (const [key, value] of entries) {
        if (!WHERE_KEY.test(key))
          throw new TypeError(`patchWhere: ${JSON.stringify(key)} is not a plain key`);
        if (typeof value !== 'string' && !(typeof value === 'number' && Number.isFinite(value)))
          throw new TypeError(`patchWhere: ${key} must equal a string or a finite number`);
      }
      const named = 'patchWhere';
      assertSet(change.set, named);
      assertNoOverlap(change, named);
      return;
    }
  }
}

/** The keys a `patchWhere` matches on: plain top-level names (so they are written into a query as they are). */
const WHERE_KEY = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

export function assertCheckpoint(checkpoint: Checkpoint): void {
  if (typeof checkpoint.name !== 'string' || checkpoint.name.length === 0) {
    throw new TypeError('a checkpoint needs a non-empty name');
  }
  if (typeof checkpoint.value !== 'string')
    throw new TypeError(`checkpoint ${checkpoint.name}: value must be a string`);
}

export interface Page {
  readonly offset: number;
  /** Undefined: no limit. */
  readonly limit: number | undefined;
  /** Where counting stops (`StoreQuery.countLimit`); undefined: it counts every match. */
  readonly countLimit: number | undefined;
}

export function readPage(offset: number | undefined, limit: number | undefined, countLimit?: number): Page {
  const page = { offset: offset ?? 0, limit, countLimit };
  if (!Number.isSafeInteger(page.offset) || page.offset < 0) {
    throw new RangeError(`offset must be a non-negative integer, got ${String(offset)}`);
  }
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0)) {
    throw new RangeError(`limit must be a non-negative integer, got ${String(limit)}`);
  }
  if (countLimit !== undefined && (!Number.isSafeInteger(countLimit) || countLimit < 1)) {
    throw new RangeError(`countLimit must be a positive integer, got ${String(countLimit)}`);
  }
  return page;
}

/**
 * The total is known without counting when the page is the last one: it came back short of the limit and
 * either holds items or started at the beginning.
 */
export function totalFromShortPage(page: Page, itemCount: number): number | undefined {
  const isShort = page.limit === undefined || itemCount < page.limit;
  return isShort && (itemCount > 0 || page.offset === 0)
    ? Math.min(page.offset + itemCount, page.countLimit ?? Infinity)
    : undefined;
}

/** `getMany` answers in the order of the ids asked for, each document once, missing ones left out. */
export function orderByIds(ids: readonly string[], docs: readonly Document[]): Document[] {
  const byId = new Map(docs.map((doc) => [doc.id, doc]));
  const ordered: Document[] = [];
  for (const id of new Set(ids)) {
    const doc = byId.get(id);
    if (doc) ordered.push(doc);
  }
  return ordered;
}
