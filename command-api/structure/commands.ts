import type { z } from 'zod';
import type { createFieldBody, orderFieldsBody, updateFieldBody } from '../../contracts/api/fields';
import type {
  createModuleBody,
  createSpaceBody,
  updateModuleBody,
  updateSpaceBody,
} from '../../contracts/api/structure';
import type { ModuleEvent, SpaceEvent } from '../../contracts/events/records';
import { MODULE_TEMPLATES } from '../../contracts/module-templates';
import type { DataStructure } from '../../languages/data-structure';
import { PlatformError } from '../../contracts/errors';
import { streamName } from '../../contracts/streams';
import type { CommandDeps } from '../deps';
import {
  withCommandId,
  type AggregateLoader,
  type CommandContext,
  type CommandOrigin,
  type CommandResult,
  type HandleOptions,
} from '../kit/handler';
import { requestHash } from '../kit/idempotency';
import type { CreateClaim, ResourceCommandSpec } from '../kit/resource-commands';
import { dataStructureDecider } from './domain/data-structure';
import { moduleDecider, type ModuleCommand, type ModuleState } from './domain/module';
import { spaceDecider, type SpaceCommand, type SpaceState } from './domain/space';

type CreateFieldBody = z.infer<typeof createFieldBody>;
type UpdateFieldBody = z.infer<typeof updateFieldBody>;
type OrderFieldsBody = z.infer<typeof orderFieldsBody>;

/** The module `moduleId` as it is now, with its fields; null when it was deleted or never was. */
export async function moduleFields(aggregates: AggregateLoader, tenant: string, moduleId: number) {
  const module = await aggregates.load(streamName('module', tenant, moduleId), moduleDecider);
  return module.state.status === 'active' ? module.state : null;
}

/** The structure `dataStructureId` as it is now; null when it was deleted or never was. */
export async function currentStructure(
  aggregates: AggregateLoader,
  tenant: string,
  dataStructureId: number,
): Promise<DataStructure | null> {
  const { state } = await aggregates.load(
    streamName('dataStructure', tenant, dataStructureId),
    dataStructureDecider,
  );
  return state.status === 'active' ? { fields: state.attributes.fields as DataStructure['fields'] } : null;
}

/** Refuses a hook setting that names a data structure this system does not have. */
export async function assertStructureExists(
  aggregates: AggregateLoader,
  tenant: string,
  dataStructureId: number | null | undefined,
): Promise<void> {
  if (dataStructureId === null || dataStructureId === undefined) return;
  if ((await currentStructure(aggregates, tenant, dataStructureId)) === null)
    throw new PlatformError('validation_failed', `no data structure ${dataStructureId}`, [
      { path: 'dataStructureId', message: 'no such data structure' },
    ]);
}

export type CreateSpace = z.infer<typeof createSpaceBody>;
export type UpdateSpace = z.infer<typeof updateSpaceBody>;
export type CreateModule = z.infer<typeof createModuleBody>;
export type UpdateModule = z.infer<typeof updateModuleBody>;

/** Spaces: the structure records live in. A space with modules cannot be deleted. */
export function spaceCommandSpec(
  deps: Pick<CommandDeps, 'reads'>,
): ResourceCommandSpec<SpaceState, SpaceCommand, SpaceEvent, CreateSpace, UpdateSpace> {
  return {
    noun: 'space',
    decider: spaceDecider,
    prepareCreate: async (body) => (spaceId) => ({
      kind: 'CreateSpace',
      spaceId,
      name: body.name,
      description: body.description ?? null,
    }),
    prepareUpdate: async (body) => ({
      kind: 'UpdateSpace',
      ...(body.name !== undefined && { name: body.name }),
      ...(body.description !== undefined && { description: body.description }),
    }),
    // Counted from the read models: a module created meanwhile by another process can slip past.
    prepareDelete: async (tenant, spaceId) => ({
      kind: 'DeleteSpace',
      modules: await deps.reads.modulesInSpace(tenant, spaceId),
    }),
    view: (state) => ({ id: state.spaceId, name: state.name, description: state.description }),
  };
}

/** Modules of a space, empty or from a built-in template. A module with records cannot be deleted. */
export function moduleCommandSpec(
  deps: Pick<CommandDeps, 'handler' | 'reads' | 'ids'>,
): ResourceCommandSpec<ModuleState, ModuleCommand, ModuleEvent, CreateModule, UpdateModule> {
  return {
    noun: 'module',
    decider: moduleDecider,
    async prepareCreate(body, tenant) {
      const space = await deps.handler.load(streamName('space', tenant, body.spaceId), spaceDecider);
      const spaceExists = space.state.status === 'active';
      const { template: templateKey, spaceId } = body;
      if (templateKey === undefined)
        return (moduleId) => ({
          kind: 'CreateModule',
          moduleId,
          spaceId,
          spaceExists,
          name: body.name!,
          description: body.description ?? null,
        });
      const template = MODULE_TEMPLATES[templateKey];
      // Counted from the read models: installs in this process queue (createQueueKey); one made meanwhile by
      // another process can slip past.
      const installedInSpace = await deps.reads.modulesOfTemplate(tenant, spaceId, templateKey);
      const fieldIds: number[] = [];
      for (let index = 0; index < template.fields.length; index++)
        fieldIds.push(await deps.ids.next(tenant, 'field'));
      return (moduleId) => ({
        kind: 'InstallBuiltInModule',
        moduleId,
        spaceId,
        spaceExists,
        template: templateKey,
        name: body.name ?? template.name,
        description: body.description !== undefined ? body.description : template.description,
        fieldIds,
        installedInSpace,
      });
    },
    createQueueKey: (body, tenant) =>
      body.template === undefined ? undefined : `${tenant}.${body.spaceId}.${body.template}`,
    prepareUpdate: async (body) => ({
      kind: 'UpdateModule',
      ...(body.name !== undefined && { name: body.name }),
      ...(body.description !== undefined && { description: body.description }),
    }),
    // Counted from the read models: a record created meanwhile by another process can slip past.
    prepareDelete: async (tenant, moduleId) => ({
      kind: 'DeleteModule',
      records: await deps.reads.recordsInModule(tenant, moduleId),
    }),
    view: (state) => ({
      id: state.moduleId,
      spaceId: state.spaceId,
      name: state.name,
      description: state.description,
      kind: state.kind,
      template: state.template,
    }),
  };
}

/**
 * Field definitions are commands on their module's stream (the module owns its record schema, so a record
 * is always checked against one consistent set of fields). A change or removal by field id finds the module
 * through the fields read model.
 */
export function fieldCommands(deps: Pick<CommandDeps, 'handler' | 'ids' | 'idempotency' | 'reads'>) {
  const moduleStream = (tenant: string, moduleId: number): string => streamName('module', tenant, moduleId);

  /** Whether the relation target of a config exists (the decider refuses a relation to nothing). */
  const relationTarget = async (tenant: string, fieldConfig: Record<string, unknown> | undefined) => {
    const target = fieldConfig?.moduleId;
    if (typeof target !== 'number' || !Number.isSafeInteger(target) || target <= 0) return {};
    const module = await deps.handler.load(moduleStream(tenant, target), moduleDecider);
    return { relationTargetExists: module.state.status === 'active' };
  };

  /** The module that holds field `fieldId`, or a 404. */
  const moduleOfField = async (tenant: string, fieldId: number): Promise<number> => {
    const moduleId = await deps.reads.fieldModule(tenant, fieldId);
    if (moduleId === null) throw new PlatformError('not_found', `field ${fieldId} not found`);
    return moduleId;
  };

  return {
    /** Adds a field to its module under a new id; a repeat of a claimed add answers as the first time. */
    async add(
      origin: CommandOrigin,
      claim: CreateClaim,
      body: CreateFieldBody,
    ): Promise<{ fieldId: number; result: CommandResult<ModuleState> }> {
      const { tenant } = origin;
      const module = await deps.handler.load(moduleStream(tenant, body.moduleId), moduleDecider);
      if (module.state.status !== 'active')
        throw new PlatformError('validation_failed', `module ${body.moduleId} does not exist`, [
          { path: 'moduleId', message: 'no such module' },
        ]);
      const target = body.type === 'relation' ? await relationTarget(tenant, body.config) : {};
      const identity = await deps.idempotency.identify(
        tenant,
        claim.holder,
        claim.key,
        () => requestHash('POST', '/field', body),
        () => deps.ids.next(tenant, 'field'),
      );
      const fieldId = identity.entityId!;
      const command: ModuleCommand = {
        kind: 'AddField',
        fieldId,
        name: body.name,
        ...(body.key !== undefined && { key: body.key }),
        type: body.type,
        required: body.required ?? false,
        config: body.config ?? {},
        ...(body.personal !== undefined && { personal: body.personal }),
        ...target,
      };
      const result = await deps.handler.handle(
        moduleStream(tenant, body.moduleId),
        moduleDecider,
        command,
        withCommandId(origin, identity.commandId),
        identity.mayBeRepeat ? { mayBeRepeat: true } : {},
      );
      return { fieldId, result };
    },

    async change(
      context: CommandContext,
      fieldId: number,
      body: Omit<UpdateFieldBody, 'id'>,
      options: HandleOptions = {},
    ): Promise<CommandResult<ModuleState>> {
      const moduleId = await moduleOfField(context.tenant, fieldId);
      return deps.handler.handle(
        moduleStream(context.tenant, moduleId),
        moduleDecider,
        {
          kind: 'ChangeField',
          fieldId,
          ...(body.name !== undefined && { name: body.name }),
          ...(body.required !== undefined && { required: body.required }),
          ...(body.config !== undefined && { config: body.config }),
          ...(body.personal !== undefined && { personal: body.personal }),
          ...(await relationTarget(context.tenant, body.config)),
        },
        context,
        options,
      );
    },

    order(
      context: CommandContext,
      body: OrderFieldsBody,
      options: HandleOptions = {},
    ): Promise<CommandResult<ModuleState>> {
      return deps.handler.handle(
        moduleStream(context.tenant, body.moduleId),
        moduleDecider,
        { kind: 'OrderFields', fieldIds: body.fieldIds },
        context,
        options,
      );
    },

    async remove(
      context: CommandContext,
      fieldId: number,
      options: HandleOptions = {},
    ): Promise<CommandResult<ModuleState>> {
      const moduleId = await moduleOfField(context.tenant, fieldId);
      return deps.handler.handle(
        moduleStream(context.tenant, moduleId),
        moduleDecider,
        { kind: 'RemoveField', fieldId },
        context,
        options,
      );
    },
  };
}
