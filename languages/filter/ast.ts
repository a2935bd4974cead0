/**
 * The list-query language of the spec, as an AST. The parser (`parse.ts`) turns the `filter` and `order`
 * query strings into these nodes; `resolve.ts` checks them against a catalogue of the fields a list route
 * allows and produces a `StoreQuery` that every read-store adapter compiles.
 */

/** Operators as written: `=` `!=` `>` `>=` `<` `<=` `~` (LIKE) `!~` (NOT LIKE) `...` (IN). */
export type FilterOperator = '=' | '!=' | '>' | '>=' | '<' | '<=' | '~' | '!~' | '...';

export type FilterNode = FilterAnd | FilterOr | FilterCondition;

export interface FilterAnd {
  readonly kind: 'and';
  readonly children: readonly FilterNode[];
}

export interface FilterOr {
  readonly kind: 'or';
  readonly children: readonly FilterNode[];
}

/**
 * One `field operator value`. `values` has one entry, except for `...` (the comma-separated set).
 * `field=(a|b)` is parsed into an `or` of two `=` conditions. `position` is the 0-based offset of the
 * field name in the filter string, for error messages.
 */
export interface FilterCondition {
  readonly kind: 'condition';
  readonly field: string;
  readonly operator: FilterOperator;
  readonly values: readonly string[];
  readonly position: number;
}

export type SortDirection = 'ASC' | 'DESC';

export interface OrderTerm {
  readonly field: string;
  readonly direction: SortDirection;
  /** 0-based offset of the field name in the order string, for error messages; absent when built in code. */
  readonly position?: number;
}
