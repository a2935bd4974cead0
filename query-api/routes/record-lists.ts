import type { Request } from 'express';
import type { FilterNode, OrderTerm } from '../../contracts/query/ast';
import { parseListParams } from '../../contracts/query/list-params';
import {
  fieldReferences,
  modulesRequiredBy,
  namedFieldsFilter,
  namesUsed,
  recordFieldCatalogue,
  recordFieldDefinitionOf,
  type RecordFieldDefinition,
} from '../../contracts/query/record-fields';
import type { FieldCatalogue } from '../../contracts/query/resolve';
import { equals } from '../../contracts/query/store-query';
import { READ_MODELS } from '../../contracts/read-models';
import { awaitConsistency } from '../consistency';
import { and, authorize, type EntityDescription, type EntityReadDeps } from './entities';

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
  deps: EntityReadDeps,
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

/**
 * The records description for one list request: its catalogue knows the built-in columns and the fields
 * of the modules in scope that the request (and a saved segment) names, so field values filter and sort
 * by their field's type.
 */
export async function recordsListed(
  req: Request,
  deps: EntityReadDeps,
  records: EntityDescription,
  scope: RecordListScope = {},
): Promise<EntityDescription & { readonly fields: FieldCatalogue }> {
  const tenant = records.authorizeRead?.(req) ?? authorize(req, records.module, 'read');
  const params = parseListParams(req.query, records.otherQueryParams);
  const names = namesUsed([params.filter, scope.saved?.filter], [params.order, scope.saved?.order]);
  const { keys, fieldIds } = fieldReferences(names);
  if (keys.length === 0 && fieldIds.length === 0) return records;
  await awaitConsistency(req, deps.consistency, ['fields']);
  // Both the request's and a segment's filter limit the list: keys resolve against the modules both allow.
  const byRequest = modulesRequiredBy(params.filter);
  const bySegment = modulesRequiredBy(scope.saved?.filter);
  const requiredModules =
    byRequest && bySegment ? byRequest.filter((id) => bySegment.includes(id)) : (byRequest ?? bySegment);
  const definitions = await definitionsNamed(deps, tenant, scope, names, requiredModules);
  return { ...records, fields: recordFieldCatalogue(definitions, records.softDeleted === 'deleted') };
}
