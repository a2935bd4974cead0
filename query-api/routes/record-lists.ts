import type { Request } from 'express';
import type { FilterNode, OrderTerm } from '../../contracts/query/ast';
import { parseListParams } from '../../contracts/query/list-params';
import {
  fieldReferences,
  modulesRequiredBy,
  namesUsed,
  recordFieldCatalogue,
  type RecordFieldDefinition,
} from '../../contracts/query/record-fields';
import type { FieldCatalogue } from '../../contracts/query/resolve';
import { equals, type StoreFilter } from '../../contracts/query/store-query';
import { READ_MODELS } from '../../contracts/read-models';
import { FIELD_TYPES } from '../../contracts/fields';
import type { Document } from '../../infra/read-store/port';
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

function definitionOf(doc: Document): RecordFieldDefinition | undefined {
  const { fieldId, moduleId, key, type, config } = doc;
  if (typeof fieldId !== 'number' || typeof moduleId !== 'number' || typeof key !== 'string')
    return undefined;
  const known = FIELD_TYPES.find((candidate) => candidate === type);
  if (!known) return undefined;
  const settings = typeof config === 'object' && config !== null ? (config as Record<string, unknown>) : {};
  return { fieldId, moduleId, key, type: known, config: settings };
}

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
  if (keys.length === 0 && fieldIds.length === 0) return [];
  const named: StoreFilter[] = [];
  if (keys.length > 0) named.push({ kind: 'in', path: 'key', values: keys });
  if (fieldIds.length > 0) named.push({ kind: 'in', path: 'fieldId', values: fieldIds, numeric: true });
  const modules =
    scope.moduleId !== undefined
      ? equals('moduleId', scope.moduleId)
      : requiredModules && { kind: 'in' as const, path: 'moduleId', values: requiredModules, numeric: true };
  const space = scope.spaceId === undefined ? undefined : equals('spaceId', scope.spaceId);
  const filter = and(named.length === 1 ? named[0] : { kind: 'or', children: named }, modules, space);
  const { items } = await deps.readModels.find(tenant, READ_MODELS.fields, {
    ...(filter && { filter }),
    limit: MAX_DEFINITIONS,
    withTotal: false,
  });
  return items.flatMap((doc) => definitionOf(doc) ?? []);
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
  const requiredModules = modulesRequiredBy(params.filter) ?? modulesRequiredBy(scope.saved?.filter);
  const definitions = await definitionsNamed(deps, tenant, scope, names, requiredModules);
  return { ...records, fields: recordFieldCatalogue(definitions, records.softDeleted === 'deleted') };
}
