/**
 * The shapes projections write and read stores keep: documents, the changes a projection makes, and the
 * indexes it asks for. Pure data, shared by the pure projections and the read-store port.
 */

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
