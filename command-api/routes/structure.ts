import { z } from 'zod';
import { entityIdSchema } from '../../contracts/entity-id';
import { MODULE_TEMPLATES, moduleTemplateKeySchema } from '../../contracts/module-templates';
import { streamName } from '../../contracts/streams';
import type { ModuleEvent, SpaceEvent } from '../../contracts/events/records';
import { moduleDecider, type ModuleCommand, type ModuleState } from '../domain/module';
import { spaceDecider, type SpaceCommand, type SpaceState } from '../domain/space';
import type { CommandDeps } from '../deps';
import type { Resource } from './resource';

const id = entityIdSchema;
const name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const description = z.string().max(5000, 'must be at most 5000 characters').nullable();

const createSpace = z.strictObject({ name, description: description.optional() });
const updateSpace = z.strictObject({
  id: id.optional(),
  name: name.optional(),
  description: description.optional(),
});
const createModule = z
  .strictObject({
    spaceId: id,
    /** Installs a built-in module; without it the module is custom. */
    template: moduleTemplateKeySchema.optional(),
    /** A built-in module's name and description default to its template's. */
    name: name.optional(),
    description: description.optional(),
  })
  .refine((body) => body.template !== undefined || body.name !== undefined, {
    path: ['name'],
    message: 'a custom module needs a name (a built-in module takes its template’s)',
  });
const updateModule = updateSpace;

/** Spaces and modules: the structure records live in. */
export function spaceResource(
  deps: CommandDeps,
): Resource<SpaceState, SpaceCommand, SpaceEvent, z.infer<typeof createSpace>, z.infer<typeof updateSpace>> {
  return {
    noun: 'space',
    idParam: 'spaceId',
    decider: spaceDecider,
    createBody: createSpace,
    updateBody: updateSpace,
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
): Resource<
  ModuleState,
  ModuleCommand,
  ModuleEvent,
  z.infer<typeof createModule>,
  z.infer<typeof updateModule>
> {
  return {
    noun: 'module',
    idParam: 'moduleId',
    decider: moduleDecider,
    createBody: createModule,
    updateBody: updateModule,
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
