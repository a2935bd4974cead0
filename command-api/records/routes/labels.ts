import type { Router } from 'express';
import { streamName } from '../../../contracts/streams';
import { idParam } from '../../../infra/http/params';
import { attributesDecider, LABEL } from '../../kit/attributes';
import { recordDecider } from '../domain/record';
import type { CommandDeps } from '../../deps';
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

const labelDecider = attributesDecider(LABEL);

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
export function addLabelRoutes(router: Router, deps: CommandDeps): void {
  mount(router, labelRecord, async (req, res) => {
    // Attaching reads the label: a credential that may not see labels may not attach them either.
    authorize(req, 'label', 'read');
    const principal = authorize(req, 'record', 'update');
    const recordId = idParam(req, 'recordId');
    const labelId = idParam(req, 'labelId');
    const label = await deps.handler.load(streamName('label', principal.tenant, labelId), labelDecider);
    const result = await deps.handler.handle(
      streamName('record', principal.tenant, recordId),
      recordDecider,
      { kind: 'LabelRecord', labelId, labelExists: label.state.status === 'active' },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, { recordId, labelIds: result.state.labelIds });
  });

  mount(router, unlabelRecord, async (req, res) => {
    const principal = authorize(req, 'record', 'update');
    const recordId = idParam(req, 'recordId');
    const labelId = idParam(req, 'labelId');
    const result = await deps.handler.handle(
      streamName('record', principal.tenant, recordId),
      recordDecider,
      { kind: 'UnlabelRecord', labelId },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, { recordId, labelIds: result.state.labelIds });
  });
}
