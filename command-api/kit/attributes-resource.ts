import type { z } from 'zod';
import {
  attributesDecider,
  type AttributesCommand,
  type AttributesEntity,
  type AttributesState,
} from './attributes';
import type { DomainEvent } from './decider';
import type { Resource, ResourceOperations } from './resource-routes';

type Attributes = Record<string, unknown>;

export interface AttributesResourceSpec<
  Create extends Attributes,
  Update extends Attributes & { id?: number | undefined },
> {
  readonly entity: AttributesEntity;
  readonly idParam: string;
  readonly operations: ResourceOperations;
  readonly createBody: z.ZodType<Create>;
  readonly updateBody: z.ZodType<Update>;
  /** Checks what the new attributes point at (404s and 400s); returns what to store. */
  checkCreate(body: Create, tenant: string): Promise<Attributes>;
  checkUpdate(body: Omit<Update, 'id'>, tenant: string, id: number): Promise<Attributes>;
}

/** What an attributes entity's create and update check (its feature's commands) before the decider rules. */
export type AttributesChecks<
  Create extends Attributes,
  Update extends Attributes & { id?: number | undefined },
> = Pick<AttributesResourceSpec<Create, Update>, 'checkCreate' | 'checkUpdate'>;

/** A REST resource of an attributes entity: the routes check the references, the generic decider rules. */
export function attributesResource<
  Create extends Attributes,
  Update extends Attributes & { id?: number | undefined },
>(
  spec: AttributesResourceSpec<Create, Update>,
): Resource<AttributesState, AttributesCommand, DomainEvent, Create, Update> {
  return {
    noun: spec.entity.noun,
    ...(spec.entity.category !== undefined && { category: spec.entity.category }),
    idParam: spec.idParam,
    operations: spec.operations,
    decider: attributesDecider(spec.entity),
    createBody: spec.createBody,
    updateBody: spec.updateBody,
    async prepareCreate(body, tenant) {
      const attributes = await spec.checkCreate(body, tenant);
      return (entityId) => ({ kind: 'Create', id: entityId, attributes });
    },
    async prepareUpdate(body, tenant, entityId) {
      const { id: _bodyId, ...change } = body;
      return { kind: 'Update', attributes: await spec.checkUpdate(change, tenant, entityId) };
    },
    prepareDelete: async () => ({ kind: 'Delete' }),
    view: (state) => ({ id: state.id, ...state.attributes }),
  };
}
