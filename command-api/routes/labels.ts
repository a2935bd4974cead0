import type { Router } from 'express';
import { z } from 'zod';
import type { LabelEvent } from '../../contracts/events/records';
import { streamName } from '../../contracts/streams';
import { validate } from '../../contracts/validation';
import { idParam } from '../../infra/http/params';
import { labelDecider, type LabelCommand, type LabelState } from '../domain/label';
import { recordDecider } from '../domain/record';
import type { CommandDeps } from '../deps';
import { authorize, commandContext, preconditions, sendResult } from './context';
import type { Resource } from './resource';

const id = z.number().int().positive();
const name = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');
const color = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, 'must be a colour as #rrggbb')
  .transform((value) => value.toLowerCase());
export const DEFAULT_LABEL_COLOR = '#808080';

const createLabel = z.strictObject({ name, color: color.optional() });
const updateLabel = z.strictObject({ id: id.optional(), name: name.optional(), color: color.optional() });
const deleteLabel = z.strictObject({ id }, { error: 'the body must be {"id": <label id>}' });

export function labelResource(): Resource<
  LabelState,
  LabelCommand,
  LabelEvent,
  z.infer<typeof createLabel>,
  z.infer<typeof updateLabel>
> {
  return {
    noun: 'label',
    idParam: 'labelId',
    decider: labelDecider,
    createBody: createLabel,
    updateBody: updateLabel,
    prepareCreate: async (body) => (labelId) => ({
      kind: 'CreateLabel',
      labelId,
      name: body.name,
      color: body.color ?? DEFAULT_LABEL_COLOR,
    }),
    prepareUpdate: async (body) => ({
      kind: 'UpdateLabel',
      ...(body.name !== undefined && { name: body.name }),
      ...(body.color !== undefined && { color: body.color }),
    }),
    prepareDelete: async () => ({ kind: 'DeleteLabel' }),
    view: (state) => ({ id: state.labelId, name: state.name, color: state.color }),
  };
}

/**
 * `DELETE /label` with `{"id": …}` in the body (the spec publishes it beside `DELETE /label/{labelId}`), and
 * attaching labels to records: `POST`/`DELETE /record/{recordId}/label/{labelId}`.
 */
export function addLabelRoutes(router: Router, deps: CommandDeps): void {
  router.delete('/label', async (req, res) => {
    const principal = authorize(req, 'label', 'delete');
    const { id: labelId } = validate(deleteLabel, req.body ?? {}, 'body');
    const result = await deps.handler.handle(
      streamName('label', principal.tenant, labelId),
      labelDecider,
      { kind: 'DeleteLabel' },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, { id: labelId, deleted: true });
  });

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
