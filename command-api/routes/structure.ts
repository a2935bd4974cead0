import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { PlatformError } from '../../contracts/errors';
import { streamName } from '../../contracts/streams';
import { validate } from '../../infra/http/validation';
import { moduleDecider, type ModuleState } from '../domain/module';
import { spaceDecider, type SpaceState } from '../domain/space';
import type { CommandDeps } from '../deps';
import { requestHash } from '../kit/idempotency';
import { authorize, commandContext, idempotencyKey, preconditions, sendResult } from './context';
import { idParam, optionalId } from '../../infra/http/params';

const name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const description = z.string().max(5000, 'must be at most 5000 characters').nullable();

const createSpace = z.strictObject({ name, description: description.optional() });
const updateSpace = z.strictObject({
  id: z.number().int().positive().optional(),
  name: name.optional(),
  description: description.optional(),
});
const createModule = z.strictObject({
  spaceId: z.number().int().positive(),
  name,
  description: description.optional(),
});
const updateModule = z.strictObject({
  id: z.number().int().positive().optional(),
  name: name.optional(),
  description: description.optional(),
});

function spaceView(state: SpaceState): Record<string, unknown> {
  return { id: state.spaceId, name: state.name, description: state.description };
}

function moduleView(state: ModuleState): Record<string, unknown> {
  return { id: state.moduleId, spaceId: state.spaceId, name: state.name, description: state.description };
}

/** Spaces and modules: the structure records live in. */
export function structureRoutes(deps: CommandDeps): Router {
  const router = Router();

  router.post('/space', async (req, res) => {
    const principal = authorize(req, 'space', 'create');
    const body = validate(createSpace, req.body, 'body');
    const identity = await deps.idempotency.identify(
      principal.tenant,
      principal.credential.id,
      idempotencyKey(req),
      requestHash('POST', '/space', body),
      () => deps.ids.next(principal.tenant, 'space'),
    );
    const spaceId = identity.entityId!;
    const result = await deps.handler.handle(
      streamName('space', principal.tenant, spaceId),
      spaceDecider,
      { kind: 'CreateSpace', spaceId, name: body.name, description: body.description ?? null },
      commandContext(req, principal, identity.commandId),
      identity.mayBeRepeat ? { mayBeRepeat: true } : { newStream: true },
    );
    res.setHeader('Location', `${req.baseUrl}/space/${spaceId}`);
    sendResult(res, 201, result, spaceView(result.state));
  });

  const updateSpaceRoute = async (req: Request, res: Response): Promise<void> => {
    const principal = authorize(req, 'space', 'update');
    const body = validate(updateSpace, req.body, 'body');
    const spaceId = optionalId(req, 'spaceId') ?? body.id;
    if (spaceId === undefined)
      throw new PlatformError(
        'validation_failed',
        'the space id is missing: PUT /space/{spaceId} or a body "id"',
      );
    const result = await deps.handler.handle(
      streamName('space', principal.tenant, spaceId),
      spaceDecider,
      {
        kind: 'UpdateSpace',
        ...(body.name !== undefined && { name: body.name }),
        ...(body.description !== undefined && { description: body.description }),
      },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, spaceView(result.state));
  };
  router.put('/space', updateSpaceRoute);
  router.put('/space/:spaceId', updateSpaceRoute);

  router.delete('/space/:spaceId', async (req, res) => {
    const principal = authorize(req, 'space', 'delete');
    const spaceId = idParam(req, 'spaceId');
    const result = await deps.handler.handle(
      streamName('space', principal.tenant, spaceId),
      spaceDecider,
      { kind: 'DeleteSpace' },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, { id: spaceId, deleted: true });
  });

  router.post('/module', async (req, res) => {
    const principal = authorize(req, 'module', 'create');
    const body = validate(createModule, req.body, 'body');
    const space = await deps.handler.load(streamName('space', principal.tenant, body.spaceId), spaceDecider);
    const identity = await deps.idempotency.identify(
      principal.tenant,
      principal.credential.id,
      idempotencyKey(req),
      requestHash('POST', '/module', body),
      () => deps.ids.next(principal.tenant, 'module'),
    );
    const moduleId = identity.entityId!;
    const result = await deps.handler.handle(
      streamName('module', principal.tenant, moduleId),
      moduleDecider,
      {
        kind: 'CreateModule',
        moduleId,
        spaceId: body.spaceId,
        spaceExists: space.state.status === 'active',
        name: body.name,
        description: body.description ?? null,
      },
      commandContext(req, principal, identity.commandId),
      identity.mayBeRepeat ? { mayBeRepeat: true } : { newStream: true },
    );
    res.setHeader('Location', `${req.baseUrl}/module/${moduleId}`);
    sendResult(res, 201, result, moduleView(result.state));
  });

  const updateModuleRoute = async (req: Request, res: Response): Promise<void> => {
    const principal = authorize(req, 'module', 'update');
    const body = validate(updateModule, req.body, 'body');
    const moduleId = optionalId(req, 'moduleId') ?? body.id;
    if (moduleId === undefined)
      throw new PlatformError(
        'validation_failed',
        'the module id is missing: PUT /module/{moduleId} or a body "id"',
      );
    const result = await deps.handler.handle(
      streamName('module', principal.tenant, moduleId),
      moduleDecider,
      {
        kind: 'UpdateModule',
        ...(body.name !== undefined && { name: body.name }),
        ...(body.description !== undefined && { description: body.description }),
      },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, moduleView(result.state));
  };
  router.put('/module', updateModuleRoute);
  router.put('/module/:moduleId', updateModuleRoute);

  router.delete('/module/:moduleId', async (req, res) => {
    const principal = authorize(req, 'module', 'delete');
    const moduleId = idParam(req, 'moduleId');
    const result = await deps.handler.handle(
      streamName('module', principal.tenant, moduleId),
      moduleDecider,
      { kind: 'DeleteModule' },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, { id: moduleId, deleted: true });
  });

  return router;
}
