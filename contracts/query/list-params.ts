/**
 * The common list parameters of the spec (`filter`, `offset`, `limit`, `order`): validated from the raw
 * URL query and turned into one `StoreQuery`. An empty parameter (`?filter=&limit=`) counts as omitted,
 * because clients that build URLs from forms send them.
 */
import { z } from 'zod';
import { canonicalDecimal, echoed } from '../entity-id';
import { PlatformError } from '../errors';
import { parseFilter, parseOrder } from './parse';
import { resolveFilter, resolveOrder, type FieldCatalogue, type ValidationIssue } from './resolve';
import type { StoreFilter, StoreQuery, StoreSort } from './store-query';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;
/** Deep offsets make every store scan and skip; beyond this a client should narrow its filter. */
export const MAX_OFFSET = 10_000_000;

/** One query-string value; a repeated parameter arrives as an array and is refused rather than guessed. */
function queryText(name: string) {
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
function wholeNumber(name: string, min: number, max: number) {
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

/** The raw list parameters; other query parameters of a route are ignored here. */
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

export interface ListQueryDefaults {
  /** Sort used when the request has no `order`. */
  readonly order?: readonly StoreSort[];
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
  const parsed = listParamsSchema.safeParse(rawQuery ?? {});
  if (!parsed.success) {
    const issues: ValidationIssue[] = parsed.error.issues.map((issue) => ({
      path: issue.path.map(String).join('.'),
      message: issue.message,
    }));
    throw new PlatformError('validation_failed', issues.map((issue) => issue.message).join('; '), issues);
  }
  const { filter, offset, limit, order } = parsed.data;
  const storeFilter: StoreFilter | undefined =
    filter === undefined ? undefined : resolveFilter(parseFilter(filter), fields);
  const sort = order === undefined ? defaults.order : resolveOrder(parseOrder(order), fields);
  return {
    ...(storeFilter && { filter: storeFilter }),
    ...(sort && { sort }),
    offset: offset ?? 0,
    limit: limit ?? DEFAULT_PAGE_SIZE,
  };
}
