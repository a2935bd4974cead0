import type { FilterNode, OrderTerm } from '../../languages/filter/ast';
import { parseListParams, resolveListParams, type ParsedListParams } from '../../contracts/query/list-params';
import {
  fieldReferences,
  modulesRequiredBy,
  namedFieldsFilter,
  namesUsed,
  recordFieldCatalogue,
  recordFieldDefinitionOf,
  RECORD_FIELDS,
  type RecordFieldDefinition,
} from '../../languages/filter/record-fields';
import type { FieldCatalogue } from '../../languages/filter/resolve';
import { equals } from '../../languages/filter/store-query';
import { READ_MODELS } from '../../contracts/read-models';
import { PlatformError } from '../../contracts/errors';
import { and, type EntityDescription, type EntityReadDeps } from '../routes/entities';
import { recordView } from '../representations';

/**
 * Record lists without a request: the catalogue of the fields a filter and order name, and the searches a
 * scenario step and semantic search make, found as `GET /record` finds them.
 */

/** `GET /record`, `/module/{id}/item`: the live records. */
export const RECORDS: EntityDescription = {
  module: 'record',
  collection: READ_MODELS.records,
  projection: 'records',
  fields: RECORD_FIELDS,
  view: recordView,
  noun: 'record',
  softDeleted: 'live',
};

/** Which records a list shows, for resolving field keys: one module, one space, or the whole system. */
export interface RecordListScope {
  readonly moduleId?: number;
  readonly spaceId?: number;
  /** A saved segment's filter and order, resolved with the same fields as the request's. */
  readonly saved?: { readonly filter?: FilterNode; readonly order?: readonly OrderTerm[] };
}

/** More definitions than this for the names of one list would mean thousands of modules sharing keys. */
const MAX_DEFINITIONS = 10_000;

/**
 * The field definitions a record list's filter and order name, among the modules in scope: the list's own
 * module, else the modules the filter requires (`moduleId=…`), else the space's or the system's.
 */
async function definitionsNamed(
  deps: Pick<EntityReadDeps, 'readModels'>,
  tenant: string,
  scope: RecordListScope,
  names: readonly string[],
  requiredModules: readonly number[] | undefined,
): Promise<RecordFieldDefinition[]> {
  const { keys, fieldIds } = fieldReferences(names);
  const named = namedFieldsFilter(keys, fieldIds);
  if (!named) return [];
  const modules =
    scope.moduleId !== undefined
      ? equals('moduleId', scope.moduleId)
      : requiredModules && { kind: 'in' as const, path: 'moduleId', values: requiredModules, numeric: true };
  const space = scope.spaceId === undefined ? undefined : equals('spaceId', scope.spaceId);
  const filter = and(named, modules, space);
  const { items } = await deps.readModels.find(tenant, READ_MODELS.fields, {
    ...(filter && { filter }),
    limit: MAX_DEFINITIONS,
    withTotal: false,
  });
  return items.flatMap((doc) => recordFieldDefinitionOf(doc) ?? []);
}

/** `records` with a catalogue of the fields `params` (and a saved segment) name; `beforeReading` first. */
export async function catalogued(
  deps: Pick<EntityReadDeps, 'readModels'>,
  tenant: string,
  records: EntityDescription,
  scope: RecordListScope,
  params: ParsedListParams,
  beforeReading: () => Promise<void> = async () => undefined,
): Promise<EntityDescription & { readonly fields: FieldCatalogue }> {
  const names = namesUsed([params.filter, scope.saved?.filter], [params.order, scope.saved?.order]);
  const { keys, fieldIds } = fieldReferences(names);
  if (keys.length === 0 && fieldIds.length === 0) return records;
  await beforeReading();
  // Both the request's and a segment's filter limit the list: keys resolve against the modules both allow.
  const byRequest = modulesRequiredBy(params.filter);
  const bySegment = modulesRequiredBy(scope.saved?.filter);
  const requiredModules =
    byRequest && bySegment ? byRequest.filter((id) => bySegment.includes(id)) : (byRequest ?? bySegment);
  const definitions = await definitionsNamed(deps, tenant, scope, names, requiredModules);
  return { ...records, fields: recordFieldCatalogue(definitions, records.softDeleted === 'deleted') };
}

/** What a scenario's search step asks for: the list language's filter and order, a page, a module. */
export interface RecordSearch {
  readonly filter?: string;
  readonly order?: string;
  readonly limit: number;
  readonly moduleId?: number;
}

/**
 * Live records found as `GET /record` (or `/module/{id}/item`) finds them, without a request: the same
 * filter and order language, field keys resolved against the modules in scope, the same representation.
 * Throws the same `filter_syntax`, `unknown_field` or `validation_failed` errors.
 */
export async function searchRecords(
  deps: Pick<EntityReadDeps, 'readModels'>,
  tenant: string,
  search: RecordSearch,
): Promise<{ items: Record<string, unknown>[]; total: number }> {
  const params = parseListParams({
    ...(search.filter !== undefined && { filter: search.filter }),
    ...(search.order !== undefined && { order: search.order }),
    limit: String(search.limit),
  });
  const scope = search.moduleId === undefined ? {} : { moduleId: search.moduleId };
  const records = await catalogued(deps, tenant, RECORDS, scope, params);
  const query = resolveListParams(params, records.fields, [
    { path: records.fields('id')!.path, direction: 'asc' },
  ]);
  const filter = and(
    equals('status', 'live'),
    search.moduleId === undefined ? undefined : equals('moduleId', search.moduleId),
    query.filter,
  );
  const page = await deps.readModels.find(tenant, RECORDS.collection, {
    ...query,
    ...(filter && { filter }),
  });
  return { items: page.items.map(RECORDS.view), total: page.total ?? page.items.length };
}

/** Records a filter may keep for a ranking at most; a filter that keeps more is refused (narrow it). */
export const MAX_FILTERED_RECORDS = 50_000;
const ID_PAGE = 1000;

/**
 * The live records of a space that match a request's filter and a saved segment's (either may be absent), as
 * ids, read a page at a time in id order. More than `MAX_FILTERED_RECORDS` is a 422 that asks for a narrower
 * filter. Field keys resolve against the space's fields, as a segment's list does.
 */
export async function liveRecordIdsMatching(
  deps: Pick<EntityReadDeps, 'readModels'>,
  tenant: string,
  spaceId: number,
  filters: { readonly request?: FilterNode; readonly saved?: FilterNode },
): Promise<Set<number>> {
  const params: ParsedListParams = {
    ...(filters.request && { filter: filters.request }),
    offset: 0,
    limit: ID_PAGE,
  };
  const scope: RecordListScope = { spaceId, ...(filters.saved && { saved: { filter: filters.saved } }) };
  const records = await catalogued(deps, tenant, RECORDS, scope, params);
  const conditions = [filters.request, filters.saved].flatMap((node) =>
    node ? [resolveListParams({ filter: node, offset: 0, limit: 1 }, records.fields, []).filter] : [],
  );
  const ids = new Set<number>();
  const filter = and(equals('status', 'live'), equals('spaceId', spaceId), ...conditions);
  for await (const page of deps.readModels.idPages(tenant, RECORDS.collection, 'recordId', filter, ID_PAGE)) {
    for (const id of page) ids.add(id);
    if (ids.size > MAX_FILTERED_RECORDS)
      throw new PlatformError(
        'query_too_expensive',
        `the filter keeps more than ${MAX_FILTERED_RECORDS} records of the space; narrow it to rank fewer`,
      );
  }
  return ids;
}
