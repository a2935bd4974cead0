import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { PlatformError } from '../../contracts/errors';
import { fieldKeySchema, fieldValueSchema } from '../../contracts/events/records';
import { streamName } from '../../contracts/streams';
import { validate } from '../../infra/http/validation';
import { moduleDecider } from '../domain/module';
import { recordDecider, type RecordState } from '../domain/record';
import type { CommandDeps } from '../deps';
import { requestHash } from '../kit/idempotency';
import { authorize, commandContext, idempotencyKey, preconditions, sendResult } from './context';
import { idParam, optionalId } from '../../infra/http/params';

const MAX_FIELDS = 200;
const name = z.string().trim().min(1, 'must not be empty').max(500, 'must be at most 500 characters');
const fields = z
  .record(fieldKeySchema, fieldValueSchema)
  .refine((value) => Object.keys(value).length <= MAX_FIELDS, `at most ${MAX_FIELDS} fields per record`);

const createRecord = z.strictObject({
  moduleId: z.number().int().positive(),
  name,
  fields: fields.optional(),
});
const updateRecord = z.strictObject({
  id: z.number().int().positive().optional(),
  name: name.optional(),
  fields: fields.optional(),
});

export function recordView(state: RecordState): Record<string, unknown> {
  return {
    id: state.recordId,
    moduleId: state.moduleId,
    spaceId: state.spaceId,
    name: state.name,
    fields: state.fields,
  };
}

export function recordRoutes(deps: CommandDeps): Router {
  const router = Router();

  router.post('/record', async (req, res) => {
    const principal = authorize(req, 'record', 'create');
    const body = validate(createRecord, req.body, 'body');
    const module = await deps.handler.load(
      streamName('module', principal.tenant, body.moduleId),
      moduleDecider,
    );
    const identity = await deps.idempotency.identify(
      principal.tenant,
      principal.credential.id,
      idempotencyKey(req),
      requestHash('POST', '/record', body),
      () => deps.ids.next(principal.tenant, 'record'),
    );
    const recordId = identity.entityId!;
    const result = await deps.handler.handle(
      streamName('record', principal.tenant, recordId),
      recordDecider,
      {
        kind: 'CreateRecord',
        recordId,
        moduleId: body.moduleId,
        moduleSpaceId: module.state.status === 'active' ? module.state.spaceId : null,
        name: body.name,
        fields: body.fields ?? {},
      },
      commandContext(req, principal, identity.commandId),
      identity.mayBeRepeat ? { mayBeRepeat: true } : { newStream: true },
    );
    res.setHeader('Location', `${req.baseUrl}/record/${recordId}`);
    sendResult(res, 201, result, recordView(result.state));
  });

  const update = async (req: Request, res: Response): Promise<void> => {
    const principal = authorize(req, 'record', 'update');
    const body = validate(updateRecord, req.body, 'body');
    const recordId = optionalId(req, 'recordId') ?? body.id;
    if (recordId === undefined)
      throw new PlatformError(
        'validation_failed',
        'the record id is missing: PUT /record/{recordId} or a body "id"',
      );
    const result = await deps.handler.handle(
      streamName('record', principal.tenant, recordId),
      recordDecider,
      {
        kind: 'UpdateRecord',
        ...(body.name !== undefined && { name: body.name }),
        ...(body.fields !== undefined && { fields: body.fields }),
      },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, recordView(result.state));
  };
  router.put('/record', update);
  router.put('/record/:recordId', update);

  router.delete('/record/:recordId', async (req, res) => {
    const principal = authorize(req, 'record', 'delete');
    const recordId = idParam(req, 'recordId');
    const result = await deps.handler.handle(
      streamName('record', principal.tenant, recordId),
      recordDecider,
      { kind: 'DeleteRecord' },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, { id: recordId, deleted: true });
  });

  return router;
}
