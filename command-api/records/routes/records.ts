import type { Router } from 'express';
import type { z } from 'zod';
import {
  createRecord,
  createRecordBody,
  deleteRecord,
  eraseRecord,
  eraseRecordBody,
  pressRecordButton,
  restoreRecord,
  updateRecord,
  updateRecordBody,
  updateRecordById,
} from '../../../contracts/api/records';
import { isAdmin } from '../../../contracts/auth';
import { PlatformError } from '../../../contracts/errors';
import type { RecordEvent } from '../../../contracts/events/records';
import { validate } from '../../../contracts/validation';
import { idParam } from '../../../infra/http/params';
import { mount } from '../../../infra/http/operations';
import type { CommandDeps } from '../../deps';
import type { AggregateLoader } from '../../kit/handler';
import type { Resource } from '../../kit/resource-routes';
import { authorize, commandContext, preconditions, sendResult } from '../../kit/route-context';
import { pressButton, recordCommandSpec, recordView, type RecordCommands } from '../commands';
import type { RecordCommand, RecordState } from '../domain/record';
import { eraseRecord as eraseRecordData } from '../erasure';

/** Records as a REST resource: `POST /record`, `PUT /record[/{recordId}]`, `DELETE /record/{recordId}`. */
export function recordResource(
  aggregates: AggregateLoader,
): Resource<
  RecordState,
  RecordCommand,
  RecordEvent,
  z.infer<typeof createRecordBody>,
  z.infer<typeof updateRecordBody>
> {
  return {
    ...recordCommandSpec(aggregates),
    idParam: 'recordId',
    operations: {
      create: createRecord,
      update: updateRecord,
      updateById: updateRecordById,
      delete: deleteRecord,
    },
    createBody: createRecordBody,
    updateBody: updateRecordBody,
  };
}

/** `POST /record/{recordId}/restore`: brings a soft-deleted record back, if its module still exists. */
export function addRecordRestoreRoute(router: Router, deps: CommandDeps, records: RecordCommands): void {
  mount(router, restoreRecord, async (req, res) => {
    const principal = authorize(req, 'record', 'delete');
    const result = await records.restore(
      commandContext(req, principal, deps.newCommandId()),
      idParam(req, 'recordId'),
      preconditions(req),
    );
    sendResult(res, 200, result, recordView(result.state));
  });
}

/** `POST /record/{recordId}/erase`: administrators erase a record's personal data (crypto-shredding). */
export function addRecordEraseRoute(router: Router, deps: CommandDeps): void {
  mount(router, eraseRecord, async (req, res) => {
    const principal = authorize(req, 'record', 'delete');
    if (!isAdmin(principal))
      throw new PlatformError('forbidden', "only administrators erase a record's personal data");
    const recordId = idParam(req, 'recordId');
    const { reason } = validate(eraseRecordBody, req.body, 'body');
    const { result, fields } = await eraseRecordData(
      deps,
      commandContext(req, principal, deps.newCommandId()),
      recordId,
      reason,
    );
    sendResult(res, 200, result, { id: recordId, erased: true, fields });
  });
}

/**
 * `POST /record/{recordId}/button/{fieldId}`: presses a button field and answers what its webhook answered;
 * no answer at all is a 502.
 */
export function addButtonRoute(router: Router, deps: CommandDeps): void {
  mount(router, pressRecordButton, async (req, res) => {
    const principal = authorize(req, 'record', 'update');
    const recordId = idParam(req, 'recordId');
    const fieldId = idParam(req, 'fieldId');
    const { result, press } = await pressButton(
      deps,
      commandContext(req, principal, deps.newCommandId()),
      recordId,
      fieldId,
    );
    sendResult(res, 200, result, { recordId, fieldId, ...press });
  });
}
