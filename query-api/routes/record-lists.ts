import type { Request } from 'express';
import { parseListParams } from '../../contracts/query/list-params';
import type { FieldCatalogue } from '../../languages/filter/resolve';
import { awaitConsistency } from '../consistency';
import { authorize, type EntityDescription, type EntityReadDeps } from './entities';
import { DELETED_RECORD_FIELDS } from '../../languages/filter/record-fields';
import { catalogued, RECORDS, type RecordListScope } from '../records/search';

/** `GET /record/deleted`: soft-deleted records, newest deletion first. */
export const DELETED_RECORDS: EntityDescription = {
  ...RECORDS,
  fields: DELETED_RECORD_FIELDS,
  softDeleted: 'deleted',
  defaultOrder: [{ path: 'deletedAt', direction: 'desc' }],
};

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
  return catalogued(deps, tenant, records, scope, params, () =>
    awaitConsistency(req, deps.consistency, ['fields']),
  );
}
