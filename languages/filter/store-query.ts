/**
 * A list query after its field names have been checked and mapped to document paths and its values
 * converted to the field's type. Read-store adapters compile this (SQL for SQLite, a query document for
 * MongoDB); they never see the raw filter string.
 *
 * Semantics every adapter must honour (the read-store contract suite checks each):
 * - `eq` with value `null` matches a missing field, `null`, and (for string fields) `''`.
 * - `ne` matches documents whose value is missing or null too (they are "not equal").
 * - `gt/gte/lt/lte` never match a missing or null value.
 * - `like` is case-insensitive; `%` matches any run of characters, `_` is a literal. A pattern of `''`
 *   matches missing, null and `''`. `notLike` is its exact complement (missing/null included unless
 *   the pattern is `''`).
 * - `in` matches when the value equals any listed value.
 * - `numeric` (on `compare` and `in`) promises that the field holds numbers only, never booleans, so an
 *   adapter that stores booleans as 0 and 1 need not tell them apart (and can answer from an index alone).
 *   Results are the same with or without it on such a field.
 * - `list` (on `compare` eq/ne and `in`) says the field holds a list (a multi-select's options): `eq`
 *   matches a list that contains the value, `ne` one that does not (missing and null included), `in` one
 *   that contains any listed value; `eq null` also matches an empty list and `ne null` a non-empty one.
 *   Only these operators take `list`.
 * - `during` matches a document whose integer interval [from, to) holds the point, `to` missing or null
 *   meaning open.
 * - Paths are dot-separated (`fields.12`); segments are `[A-Za-z0-9_]+`.
 */
export type Scalar = string | number | boolean | null;

export type StoreFilter =
  | { readonly kind: 'and'; readonly children: readonly StoreFilter[] }
  | { readonly kind: 'or'; readonly children: readonly StoreFilter[] }
  | {
      readonly kind: 'compare';
      readonly path: string;
      readonly op: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte';
      readonly value: Scalar;
      readonly numeric?: boolean;
      readonly list?: boolean;
    }
  | {
      readonly kind: 'in';
      readonly path: string;
      readonly values: readonly Scalar[];
      readonly numeric?: boolean;
      readonly list?: boolean;
    }
  | { readonly kind: 'like'; readonly path: string; readonly pattern: string; readonly negate: boolean }
  /**
   * Documents whose interval [`from`, `to`) holds `at`: `from` at or before it and `to` after it, or missing
   * or null (an interval still open). The bounds hold integers (positions), as `numeric` promises numbers.
   */
  | { readonly kind: 'during'; readonly from: string; readonly to: string; readonly at: number };

export interface StoreSort {
  readonly path: string;
  readonly direction: 'asc' | 'desc';
}

export interface StoreQuery {
  readonly filter?: StoreFilter;
  /** Applied in order; adapters add the document id ascending as the final tie-breaker. */
  readonly sort?: readonly StoreSort[];
  readonly offset?: number;
  readonly limit?: number;
  /** When false the adapter may skip counting; `total` is then undefined. Default true. */
  readonly withTotal?: boolean;
  /**
   * Counting stops at this many matches: `total` is then the smaller of the matches and it (a count that
   * would visit too much to stay within a read's budget says "at least" instead).
   */
  readonly countLimit?: number;
}

/** `path = value`: the filter routes scope their lists with; a number there is an id (never a boolean). */
export function equals(path: string, value: Scalar): StoreFilter {
  return { kind: 'compare', path, op: 'eq', value, ...(typeof value === 'number' && { numeric: true }) };
}
