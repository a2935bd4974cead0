/** Field definitions of modules: their lists, reads and changes. */
import { z } from 'zod';
import { FIELD_TYPES } from '../fields';
import { auditFields, entityId, etagHeader, listQuery, pageOf, pathIds, READ_ERRORS } from './shared';
import { operation } from './operation';

export const fieldSchema = z
  .object({
    id: entityId,
    moduleId: entityId,
    spaceId: entityId,
    key: z.string().meta({ description: 'The key record values are stored under.' }),
    name: z.string(),
    type: z.enum(FIELD_TYPES),
    required: z.boolean(),
    config: z
      .record(z.string(), z.unknown())
      .meta({ description: "The type's settings (options, scale, …)." }),
    position: z.number().int(),
    builtIn: z.boolean().meta({ description: 'Installed with a built-in module.' }),
    ...auditFields,
  })
  .meta({ id: 'Field' });
export const fieldPage = pageOf(fieldSchema, 'FieldPage');

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
  params: pathIds({ fieldId: 'The field.' }),
  responses: { 200: { description: 'The field.', schema: fieldSchema, headers: etagHeader }, ...READ_ERRORS },
  security: 'token',
  tool: true,
});

export const FIELD_OPERATIONS = [listFields, getField];
