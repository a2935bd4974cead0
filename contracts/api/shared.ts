/** Pieces most operation contracts share: id parameters, the list parameters, audit fields, pages. */
import { z } from 'zod';
import { ENTITY_ID_JSON_SCHEMA, entityIdTextSchema, MAX_ENTITY_ID } from '../entity-id';
import { DEFAULT_PAGE_SIZE, MAX_OFFSET, MAX_PAGE_SIZE } from '../query/list-params';
import { operation, type Operation, type OperationResponse } from './operation';

/** An id in a path or a query string: validated as canonical decimal text, described as the integer it names. */
export function idAsText(description: string) {
  return entityIdTextSchema.meta({ description, override: ENTITY_ID_JSON_SCHEMA });
}

/** Path parameters that are all entity ids: `pathIds({ recordId: 'The record.' })`. */
export function pathIds<const Names extends string>(descriptions: Record<Names, string>) {
  const shape = Object.fromEntries(
    Object.entries<string>(descriptions).map(([name, description]) => [name, idAsText(description)]),
  ) as Record<Names, ReturnType<typeof idAsText>>;
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
      param: { id: 'ListFilter' },
    }),
  offset: z
    .int()
    .min(0)
    .max(MAX_OFFSET)
    .optional()
    .meta({ description: 'Zero-based index of the first item.', param: { id: 'ListOffset' } }),
  limit: z
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .optional()
    .meta({ description: `Most items returned (default ${DEFAULT_PAGE_SIZE}).`, param: { id: 'ListLimit' } }),
  order: z
    .string()
    .optional()
    .meta({
      description: 'Comma-separated `field;DIRECTION` pairs, DIRECTION `ASC` or `DESC` (default `DESC`).',
      example: 'createdAt;DESC',
      param: { id: 'ListOrder' },
    }),
});

/** Who changed an entity and when, on every read model. */
export const auditFields = {
  createdAt: z.string().meta({ description: 'ISO 8601 time of creation.' }),
  updatedAt: z.string().meta({ description: 'ISO 8601 time of the last change.' }),
  createdBy: z
    .string()
    .nullable()
    .meta({ description: 'The user who created it (null: the platform itself).' }),
  updatedBy: z.string().nullable().meta({ description: 'The user who changed it last.' }),
};

const pages = new Map<string, z.ZodType>();

/** A page of a list: the items and where the page is. One schema per id (a component id names one schema). */
export function pageOf<Item extends z.ZodType>(item: Item, id: string) {
  const known = pages.get(id);
  if (known !== undefined) return known as ReturnType<typeof newPage<Item>>;
  const page = newPage(item, id);
  pages.set(id, page);
  return page;
}

function newPage<Item extends z.ZodType>(item: Item, id: string) {
  return z
    .object({
      items: z.array(item),
      meta: z.object({
        total: z.number().int().meta({ description: 'How many items match, over all pages.' }),
        offset: z.number().int(),
        limit: z.number().int(),
        totalRelation: z
          .enum(['eq', 'gte'])
          .optional()
          .meta({
            description:
              'On lists that count up to a cap (a module’s records as of a moment: `PAST_LIST_COUNT_CAP`, ' +
              '10,000 by default): `eq` when `total` is exact, `gte` when more match than the cap and `total` ' +
              'is the cap.',
          }),
      }),
    })
    .meta({ id });
}

/** What a delete answers. */
export const deletedSchema = z
  .object({ id: entityId, deleted: z.literal(true) })
  .meta({ id: 'Deleted', description: 'The id of what was deleted.' });

/**
 * A UUID in its canonical form, lower case, as the platform makes them: an id with a second spelling would
 * name the same thing twice (a lookup, a subject, a key). `what` names it in the message.
 */
export function canonicalUuid(what: string) {
  return z
    .uuid(`must be ${what} (a UUID)`)
    .refine((id) => id === id.toLowerCase(), `must be ${what} (a UUID) in lower case`);
}

/**
 * The body of an erasure (`POST …/erase`): why, which the audit trail keeps. `what` names what is erased in the
 * message of a missing reason; `id` names the schema.
 */
export function erasureBody(what: string, id: string) {
  return z
    .strictObject({
      reason: z
        .string()
        .trim()
        .min(1, `say why the ${what} is erased`)
        .max(1000)
        .meta({ description: 'Why (a request under GDPR Art. 17, say); kept in the audit trail.' }),
    })
    .meta({ id });
}

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

/** What `entityOperations` needs to describe an entity's routes. */
export interface EntityContract {
  /** The path (without the leading `/`) and the word in summaries: `space`, `field-group`. */
  readonly noun: string;
  /** The word in summaries when the path is no word (`ai/column-data-transform`). */
  readonly label?: string;
  /** The entity's name in operation ids, singular and plural: `Space`, `Spaces`. */
  readonly name: string;
  readonly plural: string;
  readonly tag: string;
  readonly idName: string;
  readonly createBody: z.ZodType;
  readonly updateBody: z.ZodType;
  /** The entity as writes answer it, and as reads answer it. */
  readonly written: z.ZodType;
  readonly read: z.ZodType;
  /** Also `DELETE /<noun>` with `{"id": …}` in the body. */
  readonly deleteByBody?: boolean;
  /** Also `POST /<noun>/{id}`: created under an id the client chooses. */
  readonly createWithId?: boolean;
  /** Offered as MCP tools: list, get, create and update by id. */
  readonly tools?: boolean;
  readonly examples?: { readonly create?: unknown; readonly update?: unknown };
}

/** The list, read, create, update and delete operations of an entity, uniformly named and described. */
export function entityOperations(entity: EntityContract) {
  const { name, plural, tag, idName } = entity;
  const noun = entity.label ?? entity.noun;
  const base = `/${entity.noun}`;
  const byId = `/${entity.noun}/{${idName}}`;
  const params = pathIds({ [idName]: `The ${noun}.` } as Record<string, string>);
  const tool = entity.tools === true;
  const page = pageOf(entity.read, `${name}Page`);
  const createExample = entity.examples?.create;
  const updateExample = entity.examples?.update;
  const operations = {
    list: operation({
      operationId: `list${plural}`,
      method: 'get',
      path: base,
      tag,
      summary: `List ${noun}s`,
      query: listQuery,
      responses: { 200: { description: `A page of ${noun}s.`, schema: page }, ...READ_ERRORS },
      security: 'token',
      tool,
    }),
    get: operation({
      operationId: `get${name}`,
      method: 'get',
      path: byId,
      tag,
      summary: `Read a ${noun}`,
      params,
      responses: {
        200: { description: `The ${noun}.`, schema: entity.read, headers: etagHeader },
        ...READ_ERRORS,
      },
      security: 'token',
      tool,
    }),
    create: operation({
      operationId: `create${name}`,
      method: 'post',
      path: base,
      tag,
      summary: `Create a ${noun}`,
      description: '`Idempotency-Key` makes a retry safe.',
      body: { schema: entity.createBody, ...(createExample !== undefined && { example: createExample }) },
      responses: {
        201: {
          description: `The created ${noun}.`,
          schema: entity.written,
          headers: { ...locationHeader, ...etagHeader },
        },
        ...WRITE_ERRORS,
      },
      security: 'token',
      tool,
    }),
    update: operation({
      operationId: `update${name}`,
      method: 'put',
      path: base,
      tag,
      summary: `Update the ${noun} named by the body's \`id\``,
      body: { schema: entity.updateBody, ...(updateExample !== undefined && { example: updateExample }) },
      responses: {
        200: { description: `The ${noun} after the change.`, schema: entity.written, headers: etagHeader },
        ...WRITE_ERRORS,
      },
      security: 'token',
    }),
    updateById: operation({
      operationId: `update${name}ById`,
      method: 'put',
      path: byId,
      tag,
      summary: `Update a ${noun}`,
      description: '`If-Match` with the ETag of a read guards against lost updates.',
      params,
      body: { schema: entity.updateBody, ...(updateExample !== undefined && { example: updateExample }) },
      responses: {
        200: { description: `The ${noun} after the change.`, schema: entity.written, headers: etagHeader },
        ...WRITE_ERRORS,
      },
      security: 'token',
      tool,
    }),
    delete: operation({
      operationId: `delete${name}`,
      method: 'delete',
      path: byId,
      tag,
      summary: `Delete a ${noun}`,
      params,
      responses: { 200: { description: `The ${noun} was deleted.`, schema: deletedSchema }, ...WRITE_ERRORS },
      security: 'token',
    }),
  };
  const deleteByBody = entity.deleteByBody
    ? operation({
        operationId: `delete${name}ByBody`,
        method: 'delete',
        path: base,
        tag,
        summary: `Delete the ${noun} named by the body's \`id\``,
        body: { schema: z.strictObject({ id: entityId }).meta({ id: `${name}Reference` }) },
        responses: {
          200: { description: `The ${noun} was deleted.`, schema: deletedSchema },
          ...WRITE_ERRORS,
        },
        security: 'token',
      })
    : undefined;
  const createWithId = entity.createWithId
    ? operation({
        operationId: `create${name}WithId`,
        method: 'post',
        path: byId,
        tag,
        summary: `Create a ${noun} under the id given`,
        description: 'A 409 when the id is taken. `Idempotency-Key` makes a retry safe.',
        params,
        body: { schema: entity.createBody, ...(createExample !== undefined && { example: createExample }) },
        responses: {
          201: {
            description: `The created ${noun}.`,
            schema: entity.written,
            headers: { ...locationHeader, ...etagHeader },
          },
          ...WRITE_ERRORS,
        },
        security: 'token',
      })
    : undefined;
  return {
    ...operations,
    ...(deleteByBody && { deleteByBody }),
    ...(createWithId && { createWithId }),
  };
}

/** The operations of `entityOperations` as a list for the table. */
export function listed(operations: Record<string, Operation | undefined>): Operation[] {
  return Object.values(operations).filter((op): op is Operation => op !== undefined);
}
