import type { StoreQuery } from '../../contracts/query/store-query';

/** A read-model document: a JSON object with a string `id`. Keys must not contain `.` or start with `$`. */
export type Document = { readonly id: string } & Record<string, unknown>;

/**
 * One change a projection makes. Every change carries the global position of the event that caused it;
 * adapters keep that position per document and ignore a change whose position is not newer than the
 * document's (so a replayed event changes nothing, on every adapter).
 */
export type ReadModelChange =
  | { readonly op: 'upsert'; readonly collection: string; readonly doc: Document; readonly position: bigint }
  | {
      readonly op: 'patch';
      readonly collection: string;
      readonly id: string;
      /** Top-level or dotted paths to set; `undefined` values are ignored. */
      readonly set?: Readonly<Record<string, unknown>>;
      readonly unset?: readonly string[];
      /** Numeric increments on dotted paths (missing counts as 0). */
      readonly inc?: Readonly<Record<string, number>>;
      readonly position: bigint;
    }
  | { readonly op: 'delete'; readonly collection: string; readonly id: string; readonly position: bigint }
  /**
   * Ensures a secondary index a projection asks for as its data comes to need it (a record field's values),
   * as `ensureIndex` does; skipped once the collection has `MAX_INDEXES_PER_COLLECTION` indexes, so the
   * indexes (and the work of every write) stay bounded. Idempotent; the position is not checked.
   */
  | {
      readonly op: 'index';
      readonly collection: string;
      readonly index: IndexSpec;
      readonly position: bigint;
    };

/**
 * The most secondary indexes an `index` change lets a collection reach (MongoDB allows 64 with `_id`'s):
 * beyond it queries still answer, from fewer indexes.
 */
export const MAX_INDEXES_PER_COLLECTION = 48;

/**
 * A key of an index: a dotted path (ascending), or a path indexed for `like` patterns with a literal prefix
 * (`name~Rec%`, case-insensitive). Such a key serves those patterns (after equality on the keys before it),
 * not equality or order on the path. SQLite indexes a case-folded copy of the value; MongoDB, which has no
 * expression indexes, the value itself, whose keys a `^`-anchored case-insensitive `$regex` checks without
 * reading documents: so an index must not repeat another's keys with only the folding different.
 */
export type IndexKey = string | { readonly path: string; readonly caseFolded: true };

export interface IndexSpec {
  readonly name: string;
  readonly paths: readonly IndexKey[];
  /** Not with a case-folded key: the adapters would not agree on which values are equal. */
  readonly unique?: boolean;
}

/** The path an index key indexes. */
export function pathOfKey(key: IndexKey): string {
  return typeof key === 'string' ? key : key.path;
}

export interface FindResult {
  readonly items: Document[];
  /** Count of all matches ignoring offset/limit; undefined when `withTotal` was false. */
  readonly total?: number;
}

export interface Checkpoint {
  readonly name: string;
  /** Opaque to the store; projections store a global position as a decimal string. */
  readonly value: string;
}

/**
 * Whose query it is. A store that shares a bounded capacity (the SQLite read pool) serves the lanes in turn,
 * so that one tenant's many heavy queries cannot keep another's waiting; other stores ignore it.
 */
export interface QueryOptions {
  readonly lane?: string;
}

export interface ReadStore {
  ensureIndex(collection: string, index: IndexSpec): Promise<void>;
  /**
   * Applies the changes in order, then stores the checkpoint. SQLite does it in one transaction; MongoDB
   * writes the changes (position-guarded), then the checkpoint after they are acknowledged.
   * A unique-index violation throws `UniqueViolationError` and (SQLite) nothing of the batch is kept.
   */
  apply(changes: readonly ReadModelChange[], checkpoint?: Checkpoint): Promise<void>;
  get(collection: string, id: string): Promise<Document | null>;
  getMany(collection: string, ids: readonly string[]): Promise<Document[]>;
  find(collection: string, query: StoreQuery, options?: QueryOptions): Promise<FindResult>;
  count(collection: string, query?: Pick<StoreQuery, 'filter'>, options?: QueryOptions): Promise<number>;
  getCheckpoint(name: string): Promise<string | null>;
  deleteCheckpoint(name: string): Promise<void>;
  dropCollection(collection: string): Promise<void>;
  listCollections(): Promise<string[]>;
  close(): Promise<void>;
}

export class UniqueViolationError extends Error {
  constructor(
    readonly collection: string,
    readonly index: string,
  ) {
    super(`unique index ${index} of ${collection} violated`);
    this.name = 'UniqueViolationError';
  }
}
