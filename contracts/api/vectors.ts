/**
 * Semantic search over the records of one space: the records most like a text (`similar`), least like it
 * (`outliers`), and a compact lookup for AI agents (`context`).
 */
import { z } from 'zod';

import { MAX_PAGE_SIZE } from '../query/list-params';
import { operation } from './operation';
import { auditFields, entityId, READ_ERRORS } from './shared';
import { fieldValue, recordSchema } from './records';

export const MAX_VECTOR_QUERY_CHARS = 4000;
export const SIMILAR_DEFAULT_LIMIT = 20;
export const OUTLIERS_DEFAULT_LIMIT = 100;
export const CONTEXT_DEFAULT_LIMIT = 100;

const common = {
  space_id: entityId.meta({ description: 'The space searched (its read access is needed); required.' }),
  query: z
    .string()
    .min(1)
    .max(MAX_VECTOR_QUERY_CHARS)
    .meta({
      description: `Free text, at most ${MAX_VECTOR_QUERY_CHARS} characters.`,
      example: 'late invoices',
    }),
  filter: z.string().optional().meta({
    description:
      'The list language of `GET /record`, applied before ranking: only matching records are ranked. Not with `segment_id`.',
  }),
  segment_id: entityId.optional().meta({
    description: 'A saved segment whose filter is applied before ranking. Not with `filter`.',
  }),
};

const limitOf = (fallback: number) =>
  z
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .optional()
    .meta({
      description: `Records returned at most (default ${fallback}, at most ${MAX_PAGE_SIZE}, as every list).`,
    });

export const similarQuery = z.object({
  ...common,
  limit: limitOf(SIMILAR_DEFAULT_LIMIT),
  min_similarity: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .meta({ description: 'Cosine similarity floor in [0, 1]: records less similar are dropped.' }),
});
export const outliersQuery = z.object({
  ...common,
  limit: limitOf(OUTLIERS_DEFAULT_LIMIT),
  max_distance: z.number().min(0).max(2).optional().meta({
    description: 'Cosine distance floor in [0, 2]: records closer to the query than this are dropped.',
  }),
});
export const contextQuery = z.object({ ...common, limit: limitOf(CONTEXT_DEFAULT_LIMIT) });

const searchMeta = z.object({
  spaceId: entityId,
  limit: z.number().int(),
  total: z.number().int().meta({ description: 'Records returned.' }),
  searched: z.number().int().meta({ description: 'Searchable records of the space.' }),
  model: z.string().meta({ description: 'What the vectors were made with (model and text recipe).' }),
});

const similarItem = z
  .object({
    ...recordSchema.shape,
    similarity: z
      .number()
      .meta({ description: 'Cosine similarity of its closest chunk to the query, in [-1, 1].' }),
  })
  .meta({ id: 'SimilarRecord' });
const outlierItem = z
  .object({
    ...recordSchema.shape,
    distance: z
      .number()
      .meta({ description: 'Cosine distance (1 − similarity) of its closest chunk, in [0, 2].' }),
  })
  .meta({ id: 'OutlierRecord' });

/** A custom field value in the spec's short notation. */
const contextValue = z
  .object({
    value: fieldValue,
    id: z.string().meta({ description: 'The value: `<record id>.<field key>`.' }),
    created: z.string(),
    updated: z.string(),
    customFieldInputId: entityId,
    customFieldInputName: z.string(),
  })
  .meta({ id: 'ContextFieldValue' });
const contextItem = z
  .object({
    id: entityId,
    name: z.string(),
    moduleId: entityId,
    similarity: z.number(),
    labelIds: z.array(entityId),
    customFields: z.array(contextValue),
    fromSegment: z
      .string()
      .optional()
      .meta({ description: "The segment's name, when `segment_id` was given." }),
    ...z.object(auditFields).pick({ createdAt: true, updatedAt: true }).shape,
  })
  .meta({ id: 'ContextRecord' });

const VECTOR_ERRORS = {
  400: {
    description:
      'A parameter is missing or out of range, both `filter` and `segment_id` were given, or the filter is not valid.',
  },
  403: { description: 'The credential may not read records of this space.' },
  404: { description: 'The space or the segment does not exist.' },
  ...READ_ERRORS,
  503: {
    description:
      'Semantic search is not available: switched off (`SEMANTIC_SEARCH=false`), or the embedding model or the vector index (Qdrant) did not answer.',
  },
} as const;

export const similarRecords = operation({
  operationId: 'similarRecords',
  method: 'get',
  path: '/record/vector/similar',
  tag: 'records',
  summary: 'Records of a space most like a text',
  description:
    'Ranks the records of one space by the cosine similarity of their text (name, text-like fields, labels) to the ' +
    'query, most similar first. A filter or a segment applies before ranking.',
  query: similarQuery,
  responses: {
    200: {
      description: 'The most similar records.',
      schema: z.object({ items: z.array(similarItem), meta: searchMeta }).meta({ id: 'SimilarRecords' }),
    },
    ...VECTOR_ERRORS,
  },
  security: 'token',
  tool: true,
});

export const outlierRecords = operation({
  operationId: 'outlierRecords',
  method: 'get',
  path: '/record/vector/outliers',
  tag: 'records',
  summary: 'Records of a space least like a text',
  description:
    'Ranks the records of one space by cosine distance from the query, farthest first (exact, not approximate).',
  query: outliersQuery,
  responses: {
    200: {
      description: 'The least similar records.',
      schema: z.object({ items: z.array(outlierItem), meta: searchMeta }).meta({ id: 'OutlierRecords' }),
    },
    ...VECTOR_ERRORS,
  },
  security: 'token',
  tool: true,
});

export const contextRecords = operation({
  operationId: 'contextRecords',
  method: 'get',
  path: '/record/vector/context',
  tag: 'records',
  summary: 'A compact lookup of the records of a space most like a text, for AI agents',
  description:
    'The most similar records with their custom field values in short notation (value, id, created, updated, ' +
    'customFieldInputId, customFieldInputName), and `fromSegment` when a segment was given.',
  query: contextQuery,
  responses: {
    200: {
      description: 'The records, compactly.',
      schema: z.object({ items: z.array(contextItem), meta: searchMeta }).meta({ id: 'ContextRecords' }),
    },
    ...VECTOR_ERRORS,
  },
  security: 'token',
  tool: true,
});

export const VECTOR_OPERATIONS = [similarRecords, outlierRecords, contextRecords];
