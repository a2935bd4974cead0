import { streamName } from '../../contracts/streams';
import type { KernelDeps } from './kernel-deps';
import type { Decider, DomainEvent } from './decider';
import {
  withCommandId,
  type CommandContext,
  type CommandOrigin,
  type CommandResult,
  type HandleOptions,
} from './handler';
import { requestHash } from './idempotency';
import { OneAtATime } from './one-at-a-time';

/**
 * Who a create is repeatable by, and under which key (undefined: not repeatable): a credential and its
 * Idempotency-Key, or a scenario and the operation of a run.
 */
export interface CreateClaim {
  readonly holder: string;
  readonly key: string | undefined;
}

/**
 * The commands of an aggregate kept as a resource (a per-tenant integer id): how its create, update and
 * delete are prepared (reading what they depend on) and how its state is shown. The routes of `resource-routes.ts`
 * and other callers (scenario steps) run them through `resourceCommands`.
 */
export interface ResourceCommandSpec<State, Command, Event extends DomainEvent, CreateBody, UpdateBody> {
  readonly noun: string;
  /** When the noun is no stream category (`field-group`: categories have no `-`). */
  readonly category?: string;
  readonly decider: Decider<State, Command, Event>;
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

export interface ResourceCommands<State, CreateBody, UpdateBody> {
  /** Creates under a new id (or `chosenId`); a repeat of a claimed create answers as the first time. */
  create(
    origin: CommandOrigin,
    claim: CreateClaim,
    body: CreateBody,
    chosenId?: number,
  ): Promise<{ readonly id: number; readonly result: CommandResult<State> }>;
  update(
    context: CommandContext,
    id: number,
    body: UpdateBody,
    options?: HandleOptions,
  ): Promise<CommandResult<State>>;
  delete(context: CommandContext, id: number, options?: HandleOptions): Promise<CommandResult<State>>;
}

/**
 * Runs a resource's commands. `idsMayBeChosen`: clients may create under an id of their choice, so an
 * allocated id they took is skipped.
 */
export function resourceCommands<State, Command, Event extends DomainEvent, CreateBody, UpdateBody>(
  deps: Pick<KernelDeps, 'handler' | 'ids' | 'idempotency'>,
  spec: ResourceCommandSpec<State, Command, Event, CreateBody, UpdateBody>,
  idsMayBeChosen = false,
): ResourceCommands<State, CreateBody, UpdateBody> {
  const { noun, decider } = spec;
  const category = spec.category ?? noun;
  const streamOf = (tenant: string, id: number) => streamName(category, tenant, id);

  const createQueue = new OneAtATime();
  const freeId = async (tenant: string): Promise<number> => {
    for (;;) {
      const id = await deps.ids.next(tenant, category);
      if (!idsMayBeChosen) return id;
      const taken = await deps.handler.load(streamOf(tenant, id), decider);
      if (taken.revision === undefined) return id;
    }
  };

  return {
    async create(origin, claim, body, chosenId) {
      const { tenant } = origin;
      const hashOfRequest = () =>
        requestHash('POST', chosenId === undefined ? `/${noun}` : `/${noun}/${chosenId}`, body);
      const run = async () => {
        // A repeat of a create that ran answers as the first time, before the checks of a new one (a cap the
        // first create itself reached must not refuse its repeat).
        const earlier =
          claim.key === undefined
            ? null
            : await deps.idempotency.earlier(tenant, claim.holder, claim.key, hashOfRequest);
        if (earlier?.entityId != null) {
          const result = await deps.handler.resultOf(
            streamOf(tenant, earlier.entityId),
            decider,
            earlier.commandId,
          );
          if (result) return { id: earlier.entityId, result };
        }
        const commandFor = await spec.prepareCreate(body, tenant);
        const identity = await deps.idempotency.identify(
          tenant,
          claim.holder,
          claim.key,
          hashOfRequest,
          async () => chosenId ?? (await freeId(tenant)),
        );
        const id = identity.entityId!;
        const result = await deps.handler.handle(
          streamOf(tenant, id),
          decider,
          commandFor(id),
          withCommandId(origin, identity.commandId),
          // A chosen id may be taken: the decider says so (409).
          identity.mayBeRepeat || chosenId !== undefined ? { mayBeRepeat: true } : { newStream: true },
        );
        return { id, result };
      };
      const queueKey = spec.createQueueKey?.(body, tenant);
      return queueKey === undefined ? run() : createQueue.run(queueKey, run);
    },

    async update(context, id, body, options = {}) {
      return deps.handler.handle(
        streamOf(context.tenant, id),
        decider,
        await spec.prepareUpdate(body, context.tenant, id),
        context,
        options,
      );
    },

    async delete(context, id, options = {}) {
      return deps.handler.handle(
        streamOf(context.tenant, id),
        decider,
        await spec.prepareDelete(context.tenant, id),
        context,
        options,
      );
    },
  };
}
