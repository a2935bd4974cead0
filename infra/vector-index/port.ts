/**
 * The vector index port: each record's vectors (one per chunk of its text) in its system and space, and
 * searches within one space. Every write carries the event position it was computed at; a write older than
 * what the index holds for a record changes nothing, so replays and redeliveries are harmless.
 */
export interface RecordVectors {
  readonly tenant: string;
  readonly recordId: number;
  readonly spaceId: number;
  readonly moduleId: number;
  readonly position: bigint;
  /** Unit vectors, one per chunk; none: the record has no text and is not searchable. */
  readonly vectors: readonly Float32Array[];
  /**
   * A digest of the texts the vectors were made from: a change that leaves them as they are needs none anew.
   * Absent: not known (never taken as unchanged).
   */
  readonly textHash?: string;
}

/** What the index holds of a record: where it is and from what text its vectors were made. */
export interface HeldRecord {
  readonly spaceId: number;
  readonly moduleId: number;
  /** Null for a removed record. */
  readonly textHash: string | null;
}

export interface VectorQuery {
  readonly tenant: string;
  readonly spaceId: number;
  /** A unit vector of the index's dimension. */
  readonly vector: Float32Array;
  readonly limit: number;
  /** Most alike first (`nearest`), or least alike first (`farthest`, for outliers). */
  readonly order: 'nearest' | 'farthest';
  /** Only these records (a filter or a segment applied before ranking); null: all of the space. */
  readonly records: ReadonlySet<number> | null;
  /** Only records of these modules (those the caller may read); null: every module. */
  readonly modules: ReadonlySet<number> | null;
  /** `nearest`: records less similar than this are dropped. */
  readonly minSimilarity?: number;
  /** `farthest`: records closer than this cosine distance (1 − similarity) are dropped. */
  readonly minDistance?: number;
}

/** A record found, with the cosine similarity of its best chunk to the query. */
export interface VectorHit {
  readonly recordId: number;
  readonly similarity: number;
}

export interface VectorIndex {
  /** The dimension of its vectors. */
  readonly dimension: number;
  /** What the vectors were made with (the model and the text recipe); null: nothing yet. */
  identity(): Promise<string | null>;
  /** Empties the index for vectors made another way (a rebuild follows); its checkpoint goes back to 0. */
  reset(identity: string): Promise<void>;
  /** The event position the vector projection has finished (0n: none). */
  checkpoint(): Promise<bigint>;
  saveCheckpoint(position: bigint): Promise<void>;
  /** Sets each record's vectors (and space and module), unless the index holds a later position for it. */
  upsert(records: readonly RecordVectors[]): Promise<void>;
  /** What the index holds of these records (absent: nothing). */
  held(tenant: string, recordIds: readonly number[]): Promise<Map<number, HeldRecord>>;
  /** Removes records (deleted ones), unless the index holds a later position for them. */
  remove(tenant: string, recordIds: readonly number[], position: bigint): Promise<void>;
  search(query: VectorQuery): Promise<VectorHit[]>;
  /** Searchable records of a space. */
  count(tenant: string, spaceId: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * The index's server is away (unreachable, timed out or answering that it cannot serve now): a search answers
 * 503, and the vector projection tries its batch again later, keeping its checkpoint.
 */
export class VectorIndexUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'VectorIndexUnavailableError';
  }
}

/** How many records a search ranks by estimate before the exact re-rank: twice the limit, at least 64 more. */
export function candidatesFor(limit: number): number {
  return Math.max(limit * 2, limit + 64);
}

/** Refuses records with a vector of another dimension than the index's, before anything is written. */
export function checkDimensions(records: readonly RecordVectors[], dimension: number): void {
  for (const record of records)
    for (const vector of record.vectors)
      if (vector.length !== dimension)
        throw new RangeError(
          `record ${record.recordId}: a vector of ${vector.length} dimensions in an index of ${dimension}`,
        );
}

/** Refuses a query vector of another dimension than the index's. */
export function checkQueryDimension(query: VectorQuery, dimension: number): void {
  if (query.vector.length !== dimension)
    throw new RangeError(`a query of ${query.vector.length} dimensions in an index of ${dimension}`);
}
