/**
 * Field definitions of modules: their lists, reads and changes, the deprecated `/custom-field` reads, and the
 * built-in module templates. A field is a command on its module's stream; the reads come from the fields
 * read model.
 */
import { z } from 'zod';
import { entityIdSchema } from '../entity-id';
import { fieldKeySchema } from '../events/records';
import { FIELD_CONFIG_SCHEMAS, FIELD_TYPES, MAX_FIELDS_PER_MODULE } from '../fields';
import { moduleTemplateKeySchema } from '../module-templates';
import { operation } from './operation';
import {
  auditFields,
  deletedSchema,
  entityId,
  etagHeader,
  idAsText,
  listQuery,
  locationHeader,
  pageOf,
  pathIds,
  READ_ERRORS,
  WRITE_ERRORS,
} from './shared';

const fieldName = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .meta({ description: 'The name shown to users.' });
const fieldType = z.enum(FIELD_TYPES).meta({ id: 'FieldType', description: 'What the field holds.' });
const fieldConfig = z.record(z.string(), z.unknown()).meta({
  description:
    "The type's settings, checked against the type: " +
    Object.entries(FIELD_CONFIG_SCHEMAS)
      .map(([type, schema]) => {
        const keys = Object.keys((schema as z.ZodObject).shape);
        return `\`${type}\` ${keys.length === 0 ? '{}' : `{${keys.join(', ')}}`}`;
      })
      .join('; ') +
    '. `relation.moduleId` names the module whose records it points at; `button.webhookUrl` is https (http only on loopback).',
  example: { options: ['new', 'won', 'lost'] },
});

export const createFieldBody = z
  .strictObject({
    moduleId: entityIdSchema.meta({ description: 'The module the field belongs to.' }),
    name: fieldName,
    key: fieldKeySchema
      .optional()
      .meta({ description: 'The key record values are stored under; derived from the name when omitted.' }),
    type: fieldType,
    required: z.boolean().optional().meta({ description: 'Records must give it a value (default false).' }),
    config: fieldConfig.optional(),
    personal: z.boolean().optional().meta({
      description:
        "Its values are personal data: sealed in events under the record's own key, so erasing the record (`POST /record/{id}/erase`) makes them unreadable everywhere. Default: true for text, long_text, email and phone, false for the other types. Changing it applies to values written afterwards.",
    }),
  })
  .meta({ id: 'FieldCreate' });
export const updateFieldBody = z
  .strictObject({
    id: entityIdSchema.optional().meta({ description: 'The field (when the path does not name it).' }),
    name: fieldName.optional(),
    required: z.boolean().optional(),
    config: fieldConfig.optional(),
    personal: z.boolean().optional(),
  })
  .meta({ id: 'FieldUpdate', description: 'The type and key of a field never change.' });
export const orderFieldsBody = z
  .strictObject({
    moduleId: entityIdSchema,
    fieldIds: z
      .array(entityIdSchema)
      .min(1)
      .max(MAX_FIELDS_PER_MODULE)
      .meta({ description: 'Every field of the module, in the new order; positions become 1..n.' }),
  })
  .meta({ id: 'FieldOrder' });

const fieldCore = {
  id: entityId,
  moduleId: entityId,
  spaceId: entityId,
  key: z.string().meta({ description: 'The key record values are stored under.' }),
  name: z.string(),
  type: fieldType,
  required: z.boolean(),
  config: z.record(z.string(), z.unknown()).meta({ description: "The type's settings." }),
  position: z.number().int(),
  builtIn: z
    .boolean()
    .meta({ description: 'Installed with a built-in module: it stays as long as the module.' }),
  personal: z
    .boolean()
    .meta({ description: "Its values are personal data, sealed under the record's key and erasable." }),
};
export const fieldWritten = z.object(fieldCore).meta({ id: 'FieldWritten' });
export const fieldSchema = z.object({ ...fieldCore, ...auditFields }).meta({ id: 'Field' });
export const fieldPage = pageOf(fieldSchema, 'FieldPage');
const fieldPath = pathIds({ fieldId: 'The field.' });

export const createField = operation({
  operationId: 'createField',
  method: 'post',
  path: '/field',
  tag: 'fields',
  summary: 'Add a field to a module',
  description: '`Idempotency-Key` makes a retry safe.',
  body: {
    schema: createFieldBody,
    example: { moduleId: 1, name: 'Status', type: 'select', config: { options: ['new', 'won', 'lost'] } },
  },
  responses: {
    201: { description: 'The field.', schema: fieldWritten, headers: { ...locationHeader, ...etagHeader } },
    ...WRITE_ERRORS,
  },
  security: 'token',
  tool: true,
});
export const orderFields = operation({
  operationId: 'orderFields',
  method: 'put',
  path: '/field/order',
  tag: 'fields',
  summary: "Reorder a module's fields",
  body: { schema: orderFieldsBody },
  responses: {
    200: {
      description: "The module's fields in their new order.",
      schema: z.object({ moduleId: entityId, items: z.array(fieldWritten) }).meta({ id: 'FieldOrderResult' }),
      headers: etagHeader,
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});
export const updateField = operation({
  operationId: 'updateField',
  method: 'put',
  path: '/field',
  tag: 'fields',
  summary: "Change the field named by the body's `id`",
  body: { schema: updateFieldBody },
  responses: {
    200: { description: 'The field after the change.', schema: fieldWritten, headers: etagHeader },
    ...WRITE_ERRORS,
  },
  security: 'token',
});
export const updateFieldById = operation({
  operationId: 'updateFieldById',
  method: 'put',
  path: '/field/{fieldId}',
  tag: 'fields',
  summary: 'Change a field (name, required, settings)',
  params: fieldPath,
  body: { schema: updateFieldBody },
  responses: {
    200: { description: 'The field after the change.', schema: fieldWritten, headers: etagHeader },
    ...WRITE_ERRORS,
  },
  security: 'token',
  tool: true,
});
export const deleteField = operation({
  operationId: 'deleteField',
  method: 'delete',
  path: '/field/{fieldId}',
  tag: 'fields',
  summary: 'Remove a field from its module',
  params: fieldPath,
  responses: { 200: { description: 'The field was removed.', schema: deletedSchema }, ...WRITE_ERRORS },
  security: 'token',
});

export const listFields = operation({
  operationId: 'listFields',
  method: 'get',
  path: '/field',
  tag: 'fields',
  summary: 'List field definitions (by module, then position)',
  query: listQuery,
  responses: { 200: { description: 'A page of fields.', schema: fieldPage }, ...READ_ERRORS },
  security: 'token',
  tool: true,
});
export const getField = operation({
  operationId: 'getField',
  method: 'get',
  path: '/field/{fieldId}',
  tag: 'fields',
  summary: 'Read a field definition',
  params: fieldPath,
  responses: { 200: { description: 'The field.', schema: fieldSchema, headers: etagHeader }, ...READ_ERRORS },
  security: 'token',
  tool: true,
});

const bySpacePath = pathIds({ spaceId: 'The space.' });
export const listSpaceFields = operation({
  operationId: 'listSpaceFields',
  method: 'get',
  path: '/field/by-space/{spaceId}',
  tag: 'fields',
  summary: "List the fields of a space's modules",
  params: bySpacePath,
  query: listQuery,
  responses: { 200: { description: 'A page of fields.', schema: fieldPage }, ...READ_ERRORS },
  security: 'token',
  tool: true,
});
export const fieldPositionsQuery = z.object({
  moduleId: idAsText('The module.'),
});
const positionsQuery = listQuery.extend(fieldPositionsQuery.shape);
const fieldPositions = z
  .object({
    moduleId: entityId,
    items: z.array(z.object({ id: entityId, key: z.string(), name: z.string(), position: z.number().int() })),
    meta: z.object({ total: z.number().int(), offset: z.number().int(), limit: z.number().int() }),
  })
  .meta({ id: 'FieldPositions' });
export const listFieldPositions = operation({
  operationId: 'listFieldPositions',
  method: 'get',
  path: '/field/position',
  tag: 'fields',
  summary: "A module's fields in order: id, key, name, position",
  query: positionsQuery,
  responses: { 200: { description: 'The positions.', schema: fieldPositions }, ...READ_ERRORS },
  security: 'token',
});
export const listCustomFieldsBySpace = operation({
  ...listSpaceFields,
  operationId: 'listCustomFieldsBySpace',
  path: '/custom-field/by-space/{spaceId}',
  deprecatedBy: '/field/by-space/{spaceId}',
  tool: false,
});
export const listCustomFieldPositions = operation({
  ...listFieldPositions,
  operationId: 'listCustomFieldPositions',
  path: '/custom-field/position',
  deprecatedBy: '/field/position',
});

const recordFields = z
  .object({
    moduleId: entityId,
    recordId: entityId,
    items: z.array(
      fieldSchema
        .extend({ value: z.unknown().meta({ description: "The record's value (null: none)." }) })
        .meta({ id: 'FieldWithValue' }),
    ),
    meta: z.object({ total: z.number().int(), offset: z.number().int(), limit: z.number().int() }),
  })
  .meta({ id: 'RecordFields' });
export const listRecordFields = operation({
  operationId: 'listRecordFields',
  method: 'get',
  path: '/field/of/{moduleId}/{recordId}',
  tag: 'fields',
  summary: "A module's fields in order, each with one record's value",
  params: pathIds({ moduleId: 'The module.', recordId: 'The record.' }),
  query: listQuery,
  responses: { 200: { description: 'The fields with their values.', schema: recordFields }, ...READ_ERRORS },
  security: 'token',
  tool: true,
});

/** `GET /module/built-in` takes no query parameters: the catalogue is short and fixed. */
export const noQuery = z.strictObject({}, { error: 'GET /module/built-in takes no query parameters' });
const moduleTemplate = z
  .object({
    template: z.string(),
    name: z.string(),
    description: z.string(),
    fields: z.array(
      z
        .object({
          key: z.string(),
          name: z.string(),
          type: fieldType,
          required: z.boolean(),
          config: z.record(z.string(), z.unknown()),
          position: z.number().int(),
        })
        .loose(),
    ),
  })
  .meta({
    id: 'ModuleTemplate',
    description: 'A built-in module a space can install (`POST /module` with `template`).',
  });
export const listModuleTemplates = operation({
  operationId: 'listModuleTemplates',
  method: 'get',
  path: '/module/built-in',
  tag: 'modules',
  summary: 'List the built-in module templates',
  responses: {
    200: { description: 'Every template.', schema: pageOf(moduleTemplate, 'ModuleTemplatePage') },
  },
  security: 'token',
});
export const getModuleTemplate = operation({
  operationId: 'getModuleTemplate',
  method: 'get',
  path: '/module/built-in/{template}',
  tag: 'modules',
  summary: 'Read a built-in module template',
  params: z.object({ template: moduleTemplateKeySchema.meta({ description: 'The template key.' }) }),
  responses: { 200: { description: 'The template.', schema: moduleTemplate } },
  security: 'token',
});

export const FIELD_OPERATIONS = [
  createField,
  orderFields,
  updateField,
  updateFieldById,
  deleteField,
  listFields,
  getField,
  listSpaceFields,
  listFieldPositions,
  listCustomFieldsBySpace,
  listCustomFieldPositions,
  listRecordFields,
  listModuleTemplates,
  getModuleTemplate,
];
