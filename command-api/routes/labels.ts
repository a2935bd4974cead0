import type { Router } from 'express';
import { z } from 'zod';
import { streamName } from '../../contracts/streams';
import { idParam } from '../../infra/http/params';
import { attributesDecider, LABEL } from '../domain/attributes';
import { recordDecider } from '../domain/record';
import type { CommandDeps } from '../deps';
import { attributesResource, updateOf } from './attributes-resource';
import { authorize, commandContext, preconditions, sendResult } from './context';

const labelDecider = attributesDecider(LABEL);

const name = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');
const color = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, 'must be a colour as #rrggbb')
  .transform((value) => value.toLowerCase());
const DEFAULT_LABEL_COLOR = '#808080';

/** Labels: a name and a display colour; `DELETE /label` takes the id in the body too (the spec lists it). */
export function labelResource() {
  return attributesResource({
    entity: LABEL,
    idParam: 'labelId',
    deleteByBody: true,
    createBody: z.strictObject({ name, color: color.optional() }),
    updateBody: updateOf({ name, color }),
    checkCreate: async (body) => ({ name: body.name, color: body.color ?? DEFAULT_LABEL_COLOR }),
    checkUpdate: async (body) => body,
  });
}

/** Attaching labels to records: `POST`/`DELETE /record/{recordId}/label/{labelId}`. */
export function addLabelRoutes(router: Router, deps: CommandDeps): void {
  router.post('/record/:recordId/label/:labelId', async (req, res) => {
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

  router.delete('/record/:recordId/label/:labelId', async (req, res) => {
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
