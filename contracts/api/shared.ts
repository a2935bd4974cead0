/** Pieces most operation contracts share: id parameters, the list parameters, audit fields, pages. */
import { z } from 'zod';
import { entityIdTextSchema, MAX_ENTITY_ID } from '../entity-id';
import { DEFAULT_PAGE_SIZE, MAX_OFFSET, MAX_PAGE_SIZE } from '../query/list-params';
import type { OperationResponse } from './operation';

/** An id in the path: validated as canonical decimal text, described as the integer it names. */
export function idInPath(description: string) {
  return entityIdTextSchema.meta({
    description,
    override: { type: 'integer', format: 'int32', minimum: 1, maximum: MAX_ENTITY_ID },
  });
}

/** Path parameters that are all entity ids: `pathIds({ recordId: 'The record.' })`. */
export function pathIds<const Names extends string>(descriptions: Record<Names, string>) {
  const shape = Object.fromEntries(
    Object.entries<string>(descriptions).map(([name, description]) => [name, idInPath(description)]),
  ) as Record<Names, ReturnType<typeof idInPath>>;
  return z.object(shape);
}

/** An id in a JSON body or answer. */
export const entityId = z.number().int().min(1).max(MAX_ENTITY_ID);

/**
 * The common list parameters as the document shows them. The route validates them with
 * `parseListParams` (contracts/query/list-params.ts), which also resolves the filter and order.
 */
export const listQuery = z.object({
  filter: z
    .string()
    .optional()
    .meta({
      description:
        'Conditions `field operator value` joined with `;` or `&` (AND) or `|` (OR), grouped with parentheses. ' +
        'Operators: `=` `!=` `>` `>=` `<` `<=` `~` (LIKE, `%` wildcard) `!~` `...` (IN, comma-separated).',
      example: 'name~%invoice%;createdAt>=2026-01-01',
    }),
  offset: z
    .int()
    .min(0)
    .max(MAX_OFFSET)
    .optional()
    .meta({ description: 'Zero-based index of the first item.' }),
  limit: z
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .optional()
    .meta({ description: `Most items returned (default ${DEFAULT_PAGE_SIZE}).` }),
  order: z.string().optional().meta({
    description: 'Comma-separated `field;DIRECTION` pairs, DIRECTION `ASC` or `DESC` (default `DESC`).',
    example: 'createdAt;DESC',
  }),
});

/** Who changed an entity and when, on every read model. */
export const auditFields = {
  createdAt: z.string().meta({ description: 'ISO 8601 time of creation.' }),
  updatedAt: z.string().meta({ description: 'ISO 8601 time of the last change.' }),
  createdBy: z
    .number()
    .int()
    .nullable()
    .meta({ description: 'The user who created it (null: the platform).' }),
  updatedBy: z.number().int().nullable().meta({ description: 'The user who changed it last.' }),
};

/** A page of a list: the items and where the page is. */
export function pageOf<Item extends z.ZodType>(item: Item, id: string) {
  return z
    .object({
      items: z.array(item),
      meta: z.object({
        total: z.number().int().meta({ description: 'How many items match, over all pages.' }),
        offset: z.number().int(),
        limit: z.number().int(),
      }),
    })
    .meta({ id });
}

/** What a delete answers. */
export const deletedSchema = z
  .object({ id: entityId, deleted: z.literal(true) })
  .meta({ id: 'Deleted', description: 'The id of what was deleted.' });

/** Errors a write may answer beyond the common ones: conflicts, preconditions, idempotency, quota. */
export const WRITE_ERRORS: Readonly<Record<number, OperationResponse>> = {
  409: { description: 'The change conflicts with the current state (for example a name in use).' },
  412: { description: '`If-Match` named a revision that is no longer current.' },
  422: { description: 'The `Idempotency-Key` was used before with another request.' },
  429: { description: 'The system used up its API call quota for this minute (`Retry-After`).' },
};

/** Errors a read may answer beyond the common ones. */
export const READ_ERRORS: Readonly<Record<number, OperationResponse>> = {
  422: { description: 'The query would do more work than one query may (`E4220`): narrow the filter.' },
  429: { description: 'The system used up its API call quota for this minute (`Retry-After`).' },
  504: { description: 'The read did not catch up with `X-Min-Position` in time.' },
};

/** The `ETag` of an answer: the entity's revision, for `If-Match` on the next write. */
export const etagHeader = { ETag: 'The revision of the entity, for `If-Match`.' };

/** The `Location` of a created entity. */
export const locationHeader = { Location: 'Where the created entity is read.' };
