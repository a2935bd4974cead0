import type { Request, Response, Router } from 'express';
import type { Operation } from '../../contracts/api/operation';
import { z } from 'zod';
import { entityIdSchema } from '../../contracts/entity-id';
import { PlatformError } from '../../contracts/errors';
import { mount } from '../../infra/http/operations';
import { optionalId } from '../../infra/http/params';
import { validate } from '../../contracts/validation';
import type { KernelDeps } from './kernel-deps';
import type { DomainEvent } from './decider';
import { resourceCommands, type ResourceCommandSpec } from './resource-commands';
import {
  authorize,
  commandContext,
  commandOrigin,
  idempotencyKey,
  preconditions,
  sendResult,
} from './route-context';

/**
 * One aggregate exposed as a REST resource: `POST /<noun>` creates (with a per-tenant integer id and
 * Idempotency-Key), `PUT /<noun>` and `PUT /<noun>/{id}` update (If-Match honoured), `DELETE /<noun>/{id}`
 * deletes. The category (the noun unless given) is the stream category, the id sequence and the permission
 * module. Its commands are `ResourceCommandSpec`'s; this adds what HTTP needs.
 */
export interface Resource<
  State,
  Command,
  Event extends DomainEvent,
  CreateBody,
  UpdateBody extends { id?: number | undefined },
> extends ResourceCommandSpec<State, Command, Event, CreateBody, UpdateBody> {
  readonly idParam: string;
  /** The contracts of its routes; `deleteByBody` (`DELETE /<noun>` with `{"id": …}`) only where published. */
  readonly operations: ResourceOperations;
  readonly createBody: z.ZodType<CreateBody>;
  readonly updateBody: z.ZodType<UpdateBody>;
  /** What a create answers, when it shows more than `view` (a secret shown once). */
  readonly createdView?: (state: State) => Record<string, unknown>;
}

export interface ResourceOperations {
  readonly create: Operation;
  readonly update: Operation;
  readonly updateById: Operation;
  readonly delete: Operation;
  readonly deleteByBody?: Operation;
  /** `POST /<noun>/{id}`: created under an id the client chooses (the allocator then skips taken ids). */
  readonly createWithId?: Operation;
}

const bodyId = z.strictObject({ id: entityIdSchema }, { error: 'the body must be {"id": <id>}' });

/** Adds the resource's routes to `router` (one flat router: nested ones cost on every request). */
export function addResourceRoutes<
  State,
  Command,
  Event extends DomainEvent,
  CreateBody,
  UpdateBody extends { id?: number | undefined },
>(router: Router, deps: KernelDeps, resource: Resource<State, Command, Event, CreateBody, UpdateBody>): void {
  const { noun, operations } = resource;
  const category = resource.category ?? noun;
  const commands = resourceCommands(deps, resource, operations.createWithId !== undefined);

  const create = async (req: Request, res: Response): Promise<void> => {
    const principal = authorize(req, category, 'create');
    const chosenId = optionalId(req, resource.idParam);
    const body = validate(resource.createBody, req.body, 'body');
    const { id, result } = await commands.create(
      commandOrigin(req, principal),
      { holder: principal.credential.id, key: idempotencyKey(req) },
      body,
      chosenId,
    );
    res.setHeader('Location', `${req.baseUrl}/${noun}/${id}`);
    sendResult(res, 201, result, (resource.createdView ?? resource.view)(result.state));
  };
  mount(router, operations.create, create);
  if (operations.createWithId) mount(router, operations.createWithId, create);

  const update = async (req: Request, res: Response): Promise<void> => {
    const principal = authorize(req, category, 'update');
    const body = validate(resource.updateBody, req.body, 'body');
    const id = optionalId(req, resource.idParam) ?? body.id;
    if (id === undefined)
      throw new PlatformError(
        'validation_failed',
        `the ${noun} id is missing: PUT /${noun}/{${resource.idParam}} or a body "id"`,
      );
    if (body.id !== undefined && body.id !== id)
      throw new PlatformError('validation_failed', `the body id ${body.id} differs from the path id ${id}`);
    const result = await commands.update(
      commandContext(req, principal, deps.newCommandId()),
      id,
      body,
      preconditions(req),
    );
    sendResult(res, 200, result, resource.view(result.state));
  };
  mount(router, operations.update, update);
  mount(router, operations.updateById, update);

  const remove = async (req: Request, res: Response): Promise<void> => {
    const principal = authorize(req, category, 'delete');
    const id = optionalId(req, resource.idParam) ?? validate(bodyId, req.body ?? {}, 'body').id;
    const result = await commands.delete(
      commandContext(req, principal, deps.newCommandId()),
      id,
      preconditions(req),
    );
    sendResult(res, 200, result, { id, deleted: true });
  };
  if (operations.deleteByBody) mount(router, operations.deleteByBody, remove);
  mount(router, operations.delete, remove);
}
