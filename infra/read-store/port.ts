import type { StoreQuery } from '../../languages/filter/store-query';
import type { Document, IndexSpec, ReadModelChange } from '../../contracts/read-model-changes';
import type { PreparedChange } from './prepared';

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
  /**
   * As `apply`, for changes another thread checked and prepared (`prepareChanges`): a rebuild's decoder
   * threads prepare them for the stores that keep documents as JSON (SQLite). Absent: changes go to `apply`.
   */
  applyPrepared?(changes: readonly PreparedChange[], checkpoint?: Checkpoint): Promise<void>;
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
