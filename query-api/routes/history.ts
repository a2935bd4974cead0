import { equals, type StoreFilter } from '../../languages/filter/store-query';
import { AS_OF_PARAMETERS, pastMomentOf, type PastMoment } from '../../contracts/query/as-of';
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

/** A record's history: the audit trail of its stream, cut at a moment when asked. */
const RECORD_HISTORY: EntityDescription = { ...AUDIT, otherQueryParams: AS_OF_PARAMETERS };

function requireAdmin(req: Request): string {
  const principal = principalOf(req);
  if (!isAdmin(principal)) throw new PlatformError('forbidden', 'only admins may read the audit trail');
  return principal.tenant;
}

/**
 * History read from the events (through projections, never a separate log): the audit trail of who did
 * what, a record's full history for admins, and the field changes the calling user made to a record.
 */
export function addHistoryRoutes(
  router: Router,
  deps: EntityReadDeps,
  records: EntityDescription,
  /** The last position a moment of the past includes (see `query-api/records/past.ts`). */
  positionOf: (moment: PastMoment) => Promise<bigint>,
): void {
  mount(router, listAudit, async (req, res) => {
    requireAdmin(req);
    sendJson(res, 200, await readPage(req, deps, AUDIT));
  });

  mount(router, listRecordHistory, async (req, res) => {
    const tenant = requireAdmin(req);
    const recordId = idParam(req, 'recordId');
    const moment = pastMomentOf(req.query);
    // Deleted records have a history too; records that never were have none.
    await awaitConsistency(req, deps.consistency, [records.projection]);
    if (!(await deps.readModels.get(tenant, records.collection, documentId(tenant, recordId))))
      throw new PlatformError('not_found', `record ${recordId} not found`);
    const stream = equals('streamId', streamName('record', tenant, recordId));
    const until = moment && (await positionOf(moment));
    const scope: StoreFilter =
      until === undefined
        ? stream
        : {
            kind: 'and',
            children: [
              stream,
              { kind: 'compare', path: 'position', op: 'lte', value: Number(until), numeric: true },
            ],
          };
    sendJson(res, 200, await readPage(req, deps, RECORD_HISTORY, scope));
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
