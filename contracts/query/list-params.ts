/**
 * The common list parameters of the spec (`filter`, `offset`, `limit`, `order`): validated from the raw
 * URL query and turned into one `StoreQuery`. An empty parameter (`?filter=&limit=`) counts as omitted,
 * because clients that build URLs from forms send them.
 */
import { z } from 'zod';
import { canonicalDecimal, echoed } from '../entity-id';
import { PlatformError } from '../errors';
import { parseFilter, parseOrder } from '../../languages/filter/parse';
import {
  resolveFilter,
  resolveOrder,
  type FieldCatalogue,
  type ValidationIssue,
} from '../../languages/filter/resolve';
import type { StoreFilter, StoreQuery, StoreSort } from '../../languages/filter/store-query';
import type { FilterNode, OrderTerm } from '../../languages/filter/ast';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;
/** Deep offsets make every store scan and skip; beyond this a client should narrow its filter. */
export const MAX_OFFSET = 10_000_000;

/** One query-string value; a repeated parameter arrives as an array and is refused rather than guessed. */
export function queryText(name: string) {
  return z
    .string({
      error: (issue) =>
        Array.isArray(issue.input)
          ? `${name} must be given once, not ${issue.input.length} times`
          : `${name} must be a single text value`,
    })
    .optional()
    .transform((text) => (text === undefined || text.trim() === '' ? undefined : text));
}

/** A count in its one canonical decimal spelling: `0x10`, `1e2`, `-0`, ` 5`, `007` are refused, not coerced. */
export function wholeNumber(name: string, min: number, max: number) {
  return queryText(name).transform((text, context) => {
    if (text === undefined) return undefined;
    const value = canonicalDecimal(text);
    const problem =
      value === undefined
        ? `${name} must be a whole number from ${min} to ${max} in plain decimal digits (no sign, spaces, leading zeros, fraction or exponent), found ${echoed(text)}`
        : value < min
          ? `${name} must be at least ${min}`
          : value > max
            ? `${name} must be at most ${max}`
            : undefined;
    if (problem === undefined) return value;
    context.addIssue({ code: 'custom', message: problem });
    return z.NEVER;
  });
}

/** The raw list parameters; `parseListParams` refuses any other query parameter unless the route names it. */
export const listParamsSchema = z.object(
  {
    filter: queryText('filter'),
    offset: wholeNumber('offset', 0, MAX_OFFSET),
    limit: wholeNumber('limit', 1, MAX_PAGE_SIZE),
    order: queryText('order'),
  },
  { error: 'the query parameters must be an object of text values' },
);

export type ListParams = z.output<typeof listParamsSchema>;

export const LIST_PARAMETERS: readonly string[] = Object.keys(listParamsSchema.shape);

/** A list request after parsing: the filter and order as ASTs, not yet checked against a catalogue. */
export interface ParsedListParams {
  readonly filter?: FilterNode;
  readonly order?: readonly OrderTerm[];
  readonly offset: number;
  readonly limit: number;
}

export interface ListQueryDefaults {
  /** Sort used when the request has no `order`. */
  readonly order?: readonly StoreSort[];
  /** Query parameters the route reads itself, besides the list parameters. */
  readonly otherParams?: readonly string[];
}

function validationError(issues: readonly ValidationIssue[]): PlatformError {
  return new PlatformError('validation_failed', issues.map((issue) => issue.message).join('; '), issues);
}

/**
 * A raw `&` ends the `filter` parameter in a URL, so `?filter=moduleId=7&name=Beta` arrives as a filter
 * `moduleId=7` and a parameter `name`. Such a parameter, or any other the route does not read, is a 400
 * that names it: a condition is never dropped silently.
 */
function unknownParameters(raw: unknown, known: ReadonlySet<string>): ValidationIssue[] {
  if (typeof raw !== 'object' || raw === null) return [];
  return Object.keys(raw)
    .filter((name) => !known.has(name))
    .map((name) => ({
      path: name,
      message: `unknown query parameter "${name}" (this list reads ${[...known].join(', ')}); to AND filter conditions write ";" or an encoded "&" (%26) inside filter, as a raw "&" ends the filter parameter`,
    }));
}

/**
 * Validates the list parameters and parses `filter` and `order`. Throws `validation_failed` (details:
 * `{ path, message }[]`, one per unknown query parameter too) or `filter_syntax`, each saying where.
 */
export function parseListParams(rawQuery: unknown, otherParams: readonly string[] = []): ParsedListParams {
  const parsed = listParamsSchema.safeParse(rawQuery ?? {});
  const unknown = unknownParameters(rawQuery, new Set([...LIST_PARAMETERS, ...otherParams]));
  if (!parsed.success || unknown.length > 0) {
    const issues: ValidationIssue[] = (parsed.error?.issues ?? []).map((issue) => ({
      path: issue.path.map(String).join('.'),
      message: issue.message,
    }));
    throw validationError([...issues, ...unknown]);
  }
  const { filter, offset, limit, order } = parsed.data;
  return {
    ...(filter !== undefined && { filter: parseFilter(filter) }),
    ...(order !== undefined && { order: parseOrder(order) }),
    offset: offset ?? 0,
    limit: limit ?? DEFAULT_PAGE_SIZE,
  };
}

/** Checks parsed list parameters against `fields`: throws `unknown_field` or `validation_failed`. */
export function resolveListParams(
  params: ParsedListParams,
  fields: FieldCatalogue,
  defaultOrder?: readonly StoreSort[],
): StoreQuery {
  const storeFilter: StoreFilter | undefined = params.filter && resolveFilter(params.filter, fields);
  const sort = params.order === undefined ? defaultOrder : resolveOrder(params.order, fields);
  return {
    ...(storeFilter && { filter: storeFilter }),
    ...(sort && { sort }),
    offset: params.offset,
    limit: params.limit,
  };
}

/**
 * Validates, parses and resolves the list parameters of a request. Throws `validation_failed` (details:
 * `{ path, message }[]`), `filter_syntax` or `unknown_field` PlatformErrors, each saying where.
 */
export function parseListQuery(
  rawQuery: unknown,
  fields: FieldCatalogue,
  defaults: ListQueryDefaults = {},
): StoreQuery {
  return resolveListParams(parseListParams(rawQuery, defaults.otherParams), fields, defaults.order);
}
