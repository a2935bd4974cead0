import type { z } from 'zod';
import {
  createModuleBody,
  createSpaceBody,
  MODULE_OPERATIONS,
  SPACE_OPERATIONS,
  updateModuleBody,
  updateSpaceBody,
} from '../../../contracts/api/structure';
import { MODULE_TEMPLATES } from '../../../contracts/module-templates';
import { streamName } from '../../../contracts/streams';
import type { ModuleEvent, SpaceEvent } from '../../../contracts/events/records';
import { moduleDecider, type ModuleCommand, type ModuleState } from '../domain/module';
import { spaceDecider, type SpaceCommand, type SpaceState } from '../domain/space';
import type { CommandDeps } from '../../deps';
import type { Resource } from '../../kit/resource-routes';

type CreateSpace = z.infer<typeof createSpaceBody>;
type UpdateSpace = z.infer<typeof updateSpaceBody>;
type CreateModule = z.infer<typeof createModuleBody>;
type UpdateModule = z.infer<typeof updateModuleBody>;

/** Spaces and modules: the structure records live in. */
export function spaceResource(
  deps: CommandDeps,
): Resource<SpaceState, SpaceCommand, SpaceEvent, CreateSpace, UpdateSpace> {
  return {
    noun: 'space',
    idParam: 'spaceId',
    operations: SPACE_OPERATIONS,
    decider: spaceDecider,
    createBody: createSpaceBody,
    updateBody: updateSpaceBody,
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

export function moduleResource(
  deps: CommandDeps,
): Resource<ModuleState, ModuleCommand, ModuleEvent, CreateModule, UpdateModule> {
  return {
    noun: 'module',
    idParam: 'moduleId',
    operations: MODULE_OPERATIONS,
    decider: moduleDecider,
    createBody: createModuleBody,
    updateBody: updateModuleBody,
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
