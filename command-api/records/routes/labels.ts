import type { Router } from 'express';
import { idParam } from '../../../infra/http/params';
import { LABEL } from '../../kit/attributes';
import type { CommandDeps } from '../../deps';
import type { RecordCommands } from '../commands';
import { attributesResource } from '../../kit/attributes-resource';
import {
  createLabelBody,
  DEFAULT_LABEL_COLOR,
  LABEL_OPERATIONS,
  labelRecord,
  unlabelRecord,
  updateLabelBody,
} from '../../../contracts/api/catalogue';
import { mount } from '../../../infra/http/operations';
import { authorize, commandContext, preconditions, sendResult } from '../../kit/route-context';

/** Labels: a name and a display colour; `DELETE /label` takes the id in the body too (the spec lists it). */
export function labelResource() {
  return attributesResource({
    entity: LABEL,
    idParam: 'labelId',
    operations: LABEL_OPERATIONS,
    createBody: createLabelBody,
    updateBody: updateLabelBody,
    checkCreate: async (body) => ({ name: body.name, color: body.color ?? DEFAULT_LABEL_COLOR }),
    checkUpdate: async (body) => body,
  });
}

/** Attaching labels to records: `POST`/`DELETE /record/{recordId}/label/{labelId}`. */
export function addLabelRoutes(router: Router, deps: CommandDeps, records: RecordCommands): void {
  mount(router, labelRecord, async (req, res) => {
    // Attaching reads the label: a credential that may not see labels may not attach them either.
    authorize(req, 'label', 'read');
    const principal = authorize(req, 'record', 'update');
    const recordId = idParam(req, 'recordId');
    const result = await records.label(
      commandContext(req, principal, deps.newCommandId()),
      recordId,
      idParam(req, 'labelId'),
      preconditions(req),
    );
    sendResult(res, 200, result, { recordId, labelIds: result.state.labelIds });
  });

  mount(router, unlabelRecord, async (req, res) => {
    const principal = authorize(req, 'record', 'update');
    const recordId = idParam(req, 'recordId');
    const result = await records.unlabel(
      commandContext(req, principal, deps.newCommandId()),
      recordId,
      idParam(req, 'labelId'),
      preconditions(req),
    );
    sendResult(res, 200, result, { recordId, labelIds: result.state.labelIds });
  });
}
