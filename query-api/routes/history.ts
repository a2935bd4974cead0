import { equals } from '../../languages/filter/store-query';
import type { Request, Router } from 'express';
import { isAdmin } from '../../contracts/auth';
import { PlatformError } from '../../contracts/errors';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import { awaitConsistency } from '../consistency';
import { streamName } from '../../contracts/streams';
import { principalOf } from '../../infra/http/context';
import { idParam } from '../../infra/http/params';
import { sendJson } from '../../infra/http/respond';
import { listAudit, listFieldHistory, listRecordHistory } from '../../contracts/api/files';
import { mount } from '../../infra/http/operations';
import { auditView, fieldHistoryView } from '../representations';
import { AUDIT_FIELDS, FIELD_HISTORY_FIELDS } from './catalogues';
import { readPage, readRecordOfModule, type EntityDescription, type EntityReadDeps } from './entities';

const newestFirst = [{ path: 'position', direction: 'desc' }] as const;

const AUDIT: EntityDescription = {
  module: 'audit',
  collection: READ_MODELS.audit,
  projection: 'audit',
  fields: AUDIT_FIELDS,
  view: auditView,
  noun: 'audit entry',
  defaultOrder: newestFirst,
};

const FIELD_HISTORY: EntityDescription = {
  module: 'record',
  collection: READ_MODELS.fieldHistory,
  projection: 'field-history',
  fields: FIELD_HISTORY_FIELDS,
  view: fieldHistoryView,
  noun: 'field change',
  defaultOrder: newestFirst,
};

function requireAdmin(req: Request): string {
  const principal = principalOf(req);
  if (!isAdmin(principal)) throw new PlatformError('forbidden', 'only admins may read the audit trail');
  return principal.tenant;
}

/**
 * History read from the events (through projections, never a separate log): the audit trail of who did
 * what, a record's full history for admins, and the field changes the calling user made to a record.
 */
export function addHistoryRoutes(router: Router, deps: EntityReadDeps, records: EntityDescription): void {
  mount(router, listAudit, async (req, res) => {
    requireAdmin(req);
    sendJson(res, 200, await readPage(req, deps, AUDIT));
  });

  mount(router, listRecordHistory, async (req, res) => {
    const tenant = requireAdmin(req);
    const recordId = idParam(req, 'recordId');
    // Deleted records have a history too; records that never were have none.
    await awaitConsistency(req, deps.consistency, [records.projection]);
    if (!(await deps.readModels.get(tenant, records.collection, documentId(tenant, recordId))))
      throw new PlatformError('not_found', `record ${recordId} not found`);
    const stream = streamName('record', tenant, recordId);
    sendJson(res, 200, await readPage(req, deps, AUDIT, equals('streamId', stream)));
  });

  mount(router, listFieldHistory, async (req, res) => {
    const moduleId = idParam(req, 'moduleId');
    const recordId = idParam(req, 'recordId');
    await readRecordOfModule(req, deps, records, moduleId, recordId);
    const { userId } = principalOf(req);
    sendJson(
      res,
      200,
      await readPage(req, deps, FIELD_HISTORY, {
        kind: 'and',
        children: [equals('recordId', recordId), equals('userId', userId)],
      }),
    );
  });
}
