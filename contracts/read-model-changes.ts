/**
 * The shapes projections write and read stores keep: documents, the changes a projection makes, and the
 * indexes it asks for. Pure data, shared by the pure projections and the read-store port.
 */

/**
 * A read-model document: a JSON object with a string `id`. Any key is data and kept exactly (`.`, `$` and
 * `__proto__` included: infra/read-store/validation.ts); only `_id` and `_pos` are reserved at the top level.
 */
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
   * Copies a document, as it is when the change is applied (after the changes before it in the batch), from
   * the same collection or another: when the source exists, the target becomes the source with its `id`
   * replaced by the target's and `set` applied, exactly as an `upsert` of that document at `position` would
   * (a change not newer than the target's position does nothing; the copy's position is `position`, not the
   * source's); when the source does not exist, nothing happens. A projection cannot read a document, so this
   * is how it keeps a document's earlier versions.
   */
  | {
      readonly op: 'copy';
      /** Where the copy goes. */
      readonly collection: string;
      readonly id: string;
      /** The document copied. */
      readonly from: { readonly collection: string; readonly id: string };
      /** Top-level or dotted paths set on the copy, after copying (as a patch's); `undefined` values are ignored. */
      readonly set?: Readonly<Record<string, unknown>>;
      readonly position: bigint;
    }
  /**
   * Patches every document of the collection whose top-level values equal `where`'s and whose position is not
   * newer than the change's (those the same event wrote included: `set` is absolute, so applying it again
   * changes nothing); they take the change's position. For the rare change that reaches documents a projection
   * cannot name one by one (an erasure scrubbing a record's every version); give it an indexed `where`.
   */
  | {
      readonly op: 'patchWhere';
      readonly collection: string;
      /** Top-level keys (letters, digits, `_`) and the string or number each must equal; at least one. */
      readonly where: Readonly<Record<string, string | number>>;
      readonly set: Readonly<Record<string, unknown>>;
      readonly position: bigint;
    }
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
  /** Makes this an interval index (below); not with `unique`. */
  readonly interval?: IntervalKeys;
}

/**
 * An interval index serves counting the documents whose interval [`from`, `to`) holds a point (a store
 * filter `during`, with equality on `paths` and conditions on `then`): it keys each document by the node of
 * its interval in a relational interval tree (Kriegel, Pötke and Seidl, VLDB 2000), so a count visits only
 * documents whose interval holds the point, where an index on one bound visits every one begun before it.
 * The interval's bounds are integers; a missing or null `to` is an interval still open. SQLite keeps it as
 * two indexes (`paths`, the node, one bound, `then`); MongoDB, which has no expression indexes, keeps none
 * and counts with its other indexes.
 */
export interface IntervalKeys {
  readonly from: string;
  readonly to: string;
  /** Paths after the node and the bound, so that conditions on them are checked from the index alone. */
  readonly then: readonly string[];
}

/** The path an index key indexes. */
export function pathOfKey(key: IndexKey): string {
  return typeof key === 'string' ? key : key.path;
}
