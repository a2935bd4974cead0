import type { Request, Router } from 'express';
import { can, type Operation } from '../../contracts/auth';
import { PlatformError } from '../../contracts/errors';
import { parseListQuery } from '../../contracts/query/list-params';
import type { FieldCatalogue } from '../../languages/filter/resolve';
import { equals, type StoreFilter, type StoreSort } from '../../languages/filter/store-query';
import { documentId } from '../../contracts/read-models';
import { etagOf } from '../../infra/http/conditional';
import { principalOf } from '../../infra/http/context';
import { idParam } from '../../infra/http/params';
import type { Document } from '../../contracts/read-model-changes';
import type { ReadModels } from '../../infra/read-store/read-models';
import { awaitConsistency, type ReadConsistency } from '../consistency';
import { sendJson } from '../../infra/http/respond';
import { mount } from '../../infra/http/operations';
import type { Operation as ApiOperation } from '../../contracts/api/operation';

export interface EntityReadDeps {
  readonly readModels: ReadModels;
  readonly consistency: ReadConsistency;
}

export interface EntityDescription {
  /** Permission module name checked with `can`. */
  readonly module: string;
  readonly collection: string;
  readonly projection: string;
  readonly fields: FieldCatalogue;
  readonly view: (doc: Document) => Record<string, unknown>;
  readonly noun: string;
  /** The order of a list without `order`; by default the entity's integer id, ascending. */
  readonly defaultOrder?: readonly StoreSort[];
  /**
   * For soft-deleted entities (documents with `status` `live` or `deleted`): whether this description reads the
   * live ones or the deleted ones. The other kind is invisible to it.
   */
  readonly softDeleted?: 'live' | 'deleted';
  /** Query parameters a list route of the entity reads besides the list ones (any other is a 400). */
  readonly otherQueryParams?: readonly string[];
  /** Replaces the `can(…, module, 'read')` check (a user reading their own account); returns the tenant. */
  readonly authorizeRead?: (req: Request) => string;
  /**
   * Lists count at most this many matches (`meta.totalRelation` then says whether `total` is exact, `eq`,
   * or a lower bound, `gte`): for collections where an exact count visits far more than the page.
   */
  readonly countCap?: number;
}

function isDeleted(doc: Document): boolean {
  return doc.status === 'deleted';
}

/** The documents a description can see: live or deleted ones. */
function visibility(entity: EntityDescription): StoreFilter | undefined {
  if (entity.softDeleted === undefined) return undefined;
  return equals('status', entity.softDeleted);
}

export function and(...filters: Array<StoreFilter | undefined>): StoreFilter | undefined {
  const children = filters.filter((filter): filter is StoreFilter => filter !== undefined);
  return children.length <= 1 ? children[0] : { kind: 'and', children };
}

export function authorize(req: Request, module: string, operation: Operation): string {
  const principal = principalOf(req);
  if (!can(principal, module, operation))
    throw new PlatformError('forbidden', `this credential may not ${operation} ${module}`);
  return principal.tenant;
}

/** GET one entity by its integer id, with its ETag. */
export async function readOne(
  req: Request,
  deps: EntityReadDeps,
  entity: EntityDescription,
  id: number,
): Promise<{ body: Record<string, unknown>; etag: string }> {
  const tenant = entity.authorizeRead?.(req) ?? authorize(req, entity.module, 'read');
  await awaitConsistency(req, deps.consistency, [entity.projection]);
  const doc = await deps.readModels.get(tenant, entity.collection, documentId(tenant, id));
  if (!doc || (entity.softDeleted !== undefined && isDeleted(doc) !== (entity.softDeleted === 'deleted')))
    throw new PlatformError('not_found', `${entity.noun} ${id} not found`);
  return { body: entity.view(doc), etag: etagOf(Number(doc.revision ?? 0)) };
}

/** GET one record of module `moduleId` (with its ETag); a record of another module is a 404. */
export async function readRecordOfModule(
  req: Request,
  deps: EntityReadDeps,
  records: EntityDescription,
  moduleId: number,
  recordId: number,
): Promise<{ body: Record<string, unknown>; etag: string }> {
  const found = await readOne(req, deps, records, recordId);
  if (found.body.moduleId !== moduleId)
    throw new PlatformError('not_found', `record ${recordId} not found in module ${moduleId}`);
  return found;
}

/** A list page: `filter`, `offset`, `limit`, `order` as the spec defines them, plus `meta`. */
export async function readPage(
  req: Request,
  deps: EntityReadDeps,
  entity: EntityDescription,
  scope?: StoreFilter,
): Promise<Record<string, unknown>> {
  const tenant = entity.authorizeRead?.(req) ?? authorize(req, entity.module, 'read');
  const query = parseListQuery(req.query, entity.fields, {
    order: entity.defaultOrder ?? [{ path: entity.fields('id')!.path, direction: 'asc' }],
    ...(entity.otherQueryParams && { otherParams: entity.otherQueryParams }),
  });
  await awaitConsistency(req, deps.consistency, [entity.projection]);
  const filter = and(visibility(entity), scope, query.filter);
  const cap = entity.countCap;
  const page = await deps.readModels.find(tenant, entity.collection, {
    ...query,
    ...(filter && { filter }),
    // One more than the cap: whether there are more than it.
    ...(cap !== undefined && { countLimit: cap + 1 }),
  });
  const items = page.items.map(entity.view);
  const paging = { offset: query.offset ?? 0, limit: query.limit };
  if (cap === undefined || page.total === undefined) return { items, meta: { total: page.total, ...paging } };
  const capped = page.total > cap;
  return {
    items,
    meta: { total: capped ? cap : page.total, ...paging, totalRelation: capped ? 'gte' : 'eq' },
  };
}

/** Adds the read-one route of an entity, and its list route if given (one flat router: nested ones cost). */
export function addEntityRoutes(
  router: Router,
  deps: EntityReadDeps,
  operations: { readonly list?: ApiOperation; readonly get: ApiOperation },
  idName: string,
  entity: EntityDescription,
): void {
  if (operations.list)
    mount(router, operations.list, async (req, res) => {
      sendJson(res, 200, await readPage(req, deps, entity));
    });
  mount(router, operations.get, async (req, res) => {
    const { body, etag } = await readOne(req, deps, entity, idParam(req, idName));
    sendJson(res, 200, body, { ETag: etag });
  });
}
