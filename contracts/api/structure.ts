/** Spaces and modules: the structure records live in. */
import { z } from 'zod';
import { entityIdSchema } from '../entity-id';
import { MODULE_KINDS } from '../events/records';
import { moduleTemplateKeySchema } from '../module-templates';
import { auditFields, entityId, entityOperations, listed } from './shared';

const name = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .meta({ description: 'The name shown to users.' });
const description = z.string().max(5000, 'must be at most 5000 characters').nullable();

export const createSpaceBody = z
  .strictObject({ name, description: description.optional() })
  .meta({ id: 'SpaceCreate' });
export const updateSpaceBody = z
  .strictObject({
    id: entityIdSchema.optional().meta({ description: 'The entity (when the path does not name it).' }),
    name: name.optional(),
    description: description.optional(),
  })
  .meta({ id: 'SpaceOrModuleUpdate' });
export const createModuleBody = z
  .strictObject({
    spaceId: entityIdSchema.meta({ description: 'The space the module belongs to.' }),
    template: moduleTemplateKeySchema.optional().meta({
      description: 'Installs a built-in module (`GET /module/built-in`); without it the module is custom.',
    }),
    name: name
      .optional()
      .meta({ description: "Required for a custom module; a built-in one defaults to its template's." }),
    description: description.optional(),
  })
  .refine((body) => body.template !== undefined || body.name !== undefined, {
    path: ['name'],
    message: 'a custom module needs a name (a built-in module takes its template’s)',
  })
  .meta({ id: 'ModuleCreate' });
export const updateModuleBody = updateSpaceBody;

const spaceCore = { id: entityId, name: z.string(), description: z.string().nullable() };
const moduleCore = {
  id: entityId,
  spaceId: entityId,
  name: z.string(),
  description: z.string().nullable(),
  kind: z.enum(MODULE_KINDS),
  template: z
    .string()
    .nullable()
    .meta({ description: 'The built-in template it was installed from (null: custom).' }),
};

export const SPACE_OPERATIONS = entityOperations({
  noun: 'space',
  name: 'Space',
  plural: 'Spaces',
  tag: 'spaces',
  idName: 'spaceId',
  createBody: createSpaceBody,
  updateBody: updateSpaceBody,
  written: z.object(spaceCore).meta({ id: 'SpaceWritten' }),
  read: z.object({ ...spaceCore, ...auditFields }).meta({ id: 'Space' }),
  tools: true,
  examples: { create: { name: 'Sales', description: 'Leads and deals' } },
});

export const MODULE_OPERATIONS = entityOperations({
  noun: 'module',
  name: 'Module',
  plural: 'Modules',
  tag: 'modules',
  idName: 'moduleId',
  createBody: createModuleBody,
  updateBody: updateModuleBody,
  written: z.object(moduleCore).meta({ id: 'ModuleWritten' }),
  read: z.object({ ...moduleCore, ...auditFields }).meta({ id: 'Module' }),
  tools: true,
  examples: { create: { spaceId: 1, name: 'Companies' } },
});

export const STRUCTURE_OPERATIONS = [...listed(SPACE_OPERATIONS), ...listed(MODULE_OPERATIONS)];
