/**
 * The parameters of the semantic searches (`/record/vector/similar`, `/outliers`, `/context`), from the raw
 * URL query: each in its one canonical form, every problem named, unknown parameters refused.
 */
import { z } from 'zod';
import {
  CONTEXT_DEFAULT_LIMIT,
  MAX_VECTOR_QUERY_CHARS,
  OUTLIERS_DEFAULT_LIMIT,
  SIMILAR_DEFAULT_LIMIT,
} from '../api/vectors';
import { echoed, MAX_ENTITY_ID } from '../entity-id';
import { PlatformError } from '../errors';
import type { FilterNode } from '../../languages/filter/ast';
import { MAX_PAGE_SIZE, queryText, wholeNumber } from './list-params';
import { parseFilter } from '../../languages/filter/parse';

export type VectorSearchKind = 'similar' | 'outliers' | 'context';

export interface VectorParams {
  readonly spaceId: number;
  readonly query: string;
  readonly limit: number;
  readonly filter?: FilterNode;
  readonly segmentId?: number;
  /** similar: the similarity floor. */
  readonly minSimilarity?: number;
  /** outliers: the distance floor. */
  readonly maxDistance?: number;
}

/** A decimal in plain digits (`0.25`, `1`, `.5` refused), from `min` to `max`. */
function decimalIn(name: string, min: number, max: number) {
  return queryText(name).transform((text, context) => {
    if (text === undefined) return undefined;
    const value = /^(0|[1-9][0-9]*)(\.[0-9]{1,12})?$/.test(text) ? Number(text) : undefined;
    if (value !== undefined && value >= min && value <= max) return value;
    context.addIssue({
      code: 'custom',
      message: `${name} must be a decimal from ${min} to ${max} in plain digits (such as 0.75), found ${echoed(text)}`,
    });
    return z.NEVER;
  });
}

const DEFAULT_LIMITS: Record<VectorSearchKind, number> = {
  similar: SIMILAR_DEFAULT_LIMIT,
  outliers: OUTLIERS_DEFAULT_LIMIT,
  context: CONTEXT_DEFAULT_LIMIT,
};

function schemaOf(kind: VectorSearchKind) {
  return z.object({
    space_id: wholeNumber('space_id', 1, MAX_ENTITY_ID),
    query: queryText('query'),
    limit: wholeNumber('limit', 1, MAX_PAGE_SIZE),
    filter: queryText('filter'),
    segment_id: wholeNumber('segment_id', 1, MAX_ENTITY_ID),
    ...(kind === 'similar' && { min_similarity: decimalIn('min_similarity', 0, 1) }),
    ...(kind === 'outliers' && { max_distance: decimalIn('max_distance', 0, 2) }),
  });
}

export function parseVectorParams(raw: unknown, kind: VectorSearchKind): VectorParams {
  const schema = schemaOf(kind);
  const problems: string[] = [];
  const known = new Set(Object.keys(schema.shape));
  if (typeof raw === 'object' && raw !== null)
    for (const name of Object.keys(raw))
      if (!known.has(name))
        problems.push(`unknown query parameter "${name}" (this search reads ${[...known].join(', ')})`);
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) problems.push(...parsed.error.issues.map((issue) => issue.message));
  const values = parsed.success ? (parsed.data as Record<string, unknown>) : {};
  if (parsed.success) {
    if (values.space_id === undefined) problems.push('space_id is required: the space to search');
    const query = values.query as string | undefined;
    if (query === undefined) problems.push('query is required: the text to compare the records with');
    else if (query.length > MAX_VECTOR_QUERY_CHARS)
      problems.push(`query has ${query.length} characters; at most ${MAX_VECTOR_QUERY_CHARS}`);
    if (values.filter !== undefined && values.segment_id !== undefined)
      problems.push('filter and segment_id exclude each other: give one of them');
  }
  if (problems.length > 0)
    throw new PlatformError(
      'validation_failed',
      problems.join('; '),
      problems.map((message) => ({ path: '', message })),
    );
  return {
    spaceId: values.space_id as number,
    query: values.query as string,
    limit: (values.limit as number | undefined) ?? DEFAULT_LIMITS[kind],
    ...(values.filter !== undefined && { filter: parseFilter(values.filter as string) }),
    ...(values.segment_id !== undefined && { segmentId: values.segment_id as number }),
    ...(values.min_similarity !== undefined && { minSimilarity: values.min_similarity as number }),
    ...(values.max_distance !== undefined && { maxDistance: values.max_distance as number }),
  };
}
