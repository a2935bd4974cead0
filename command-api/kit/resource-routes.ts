import type { Request, Response, Router } from 'express';
import type { Operation } from '../../contracts/api/operation';
import { z } from 'zod';
import { entityIdSchema } from '../../contracts/entity-id';
import { PlatformError } from '../../contracts/errors';
import { streamName } from '../../contracts/streams';
import { mount } from '../../infra/http/operations';
import { optionalId } from '../../infra/http/params';
import { validate } from '../../contracts/validation';
import type { CommandDeps } from '../deps';
import type { Decider, DomainEvent } from './decider';
import { requestHash } from './idempotency';
import { OneAtATime } from './one-at-a-time';
import { authorize, commandContext, idempotencyKey, preconditions, sendResult } from './route-context';

/**
 * One aggregate exposed as a REST resource: `POST /<noun>` creates (with a per-tenant integer id and
 * Idempotency-Key), `PUT /<noun>` and `PUT /<noun>/{id}` update (If-Match honoured), `DELETE /<noun>/{id}`
 * deletes. The category (the noun unless given) is the stream category, the id sequence and the permission
 * module.
 */
export interface Resource<
  State,
  Command,
  Event extends DomainEvent,
  CreateBody,
  UpdateBody extends { id?: number | undefined },
> {
  readonly noun: string;
  /** When the noun is no stream category (`field-group`: categories have no `-`). */
  readonly category?: string;
  readonly idParam: string;
  /** The contracts of its routes; `deleteByBody` (`DELETE /<noun>` with `{"id": …}`) only where published. */
  readonly operations: ResourceOperations;
  readonly decider: Decider<State, Command, Event>;
  readonly createBody: z.ZodType<CreateBody>;
  readonly updateBody: z.ZodType<UpdateBody>;
  /**
   * Checks what the create depends on (reading other aggregates if needed) before any id is allocated,
   * and returns the create command for the new id.
   */
  prepareCreate(body: CreateBody, tenant: string): Promise<(id: number) => Command>;
  /**
   * Creates with the same key (undefined: none) run one at a time in this process, from `prepareCreate` to
   * the append, so a rule `prepareCreate` reads from the read models sees the create before it.
   */
  createQueueKey?(body: CreateBody, tenant: string): string | undefined;
  /** The update command for entity `id` (reading what it depends on, as `prepareCreate` does). */
  prepareUpdate(body: UpdateBody, tenant: string, id: number): Promise<Command>;
  /** The delete command for entity `id` (reading what it depends on). */
  prepareDelete(tenant: string, id: number): Promise<Command>;
  view(state: State): Record<string, unknown>;
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
>(
  router: Router,
  deps: CommandDeps,
  resource: Resource<State, Command, Event, CreateBody, UpdateBody>,
): void {
  const { noun, decider, operations } = resource;
  const category = resource.category ?? noun;

  const createQueue = new OneAtATime();
  /** A new id: allocated, or chosen by the client; when clients may choose, an allocated one they took is skipped. */
  const freeId = async (tenant: string): Promise<number> => {
    for (;;) {
      const id = await deps.ids.next(tenant, category);
      if (!operations.createWithId) return id;
      const taken = await deps.handler.load(streamName(category, tenant, id), decider);
      if (taken.revision === undefined) return id;
    }
  };
  const create = async (req: Request, res: Response): Promise<void> => {
    const principal = authorize(req, category, 'create');
    const chosenId = optionalId(req, resource.idParam);
    const body = validate(resource.createBody, req.body, 'body');
    const run = async () => {
      const commandFor = await resource.prepareCreate(body, principal.tenant);
      const identity = await deps.idempotency.identify(
        principal.tenant,
        principal.credential.id,
        idempotencyKey(req),
        () => requestHash('POST', chosenId === undefined ? `/${noun}` : `/${noun}/${chosenId}`, body),
        async () => chosenId ?? (await freeId(principal.tenant)),
      );
      const id = identity.entityId!;
      const result = await deps.handler.handle(
        streamName(category, principal.tenant, id),
        decider,
        commandFor(id),
        commandContext(req, principal, identity.commandId),
        // A chosen id may be taken: the decider says so (409).
        identity.mayBeRepeat || chosenId !== undefined ? { mayBeRepeat: true } : { newStream: true },
      );
      return { id, result };
    };
    const queueKey = resource.createQueueKey?.(body, principal.tenant);
    const { id, result } = await (queueKey === undefined ? run() : createQueue.run(queueKey, run));
    res.setHeader('Location', `${req.baseUrl}/${noun}/${id}`);
    sendResult(res, 201, result, resource.view(result.state));
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
    const result = await deps.handler.handle(
      streamName(category, principal.tenant, id),
      decider,
      await resource.prepareUpdate(body, principal.tenant, id),
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, resource.view(result.state));
  };
  mount(router, operations.update, update);
  mount(router, operations.updateById, update);

  const remove = async (req: Request, res: Response): Promise<void> => {
    const principal = authorize(req, category, 'delete');
    const id = optionalId(req, resource.idParam) ?? validate(bodyId, req.body ?? {}, 'body').id;
    const result = await deps.handler.handle(
      streamName(category, principal.tenant, id),
      decider,
      await resource.prepareDelete(principal.tenant, id),
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, { id, deleted: true });
  };
  if (operations.deleteByBody) mount(router, operations.deleteByBody, remove);
  mount(router, operations.delete, remove);
}
