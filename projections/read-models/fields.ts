import type { FieldAddedData, FieldChangedData } from '../../contracts/events/records';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import type { ReadModelChange } from '../../contracts/read-model-changes';
import type { Projection } from '../projection';
import { createdColumns, defined, updatedColumns } from './common';

/**
 * One document per field definition, from the field events of module streams: what `/field` lists and what
 * the command side reads to find a field's module.
 */
export const fieldsProjection: Projection = {
  name: 'fields',
  categories: ['module'],
  collections: {
    [READ_MODELS.fields]: [
      { name: 'tenant_field', paths: ['tenant', 'fieldId'] },
      // Record lists look fields up by the keys their filter names.
      { name: 'tenant_key_module', paths: ['tenant', 'key', 'moduleId'] },
      { name: 'tenant_module_position', paths: ['tenant', 'moduleId', 'position'] },
      { name: 'tenant_space_module_position', paths: ['tenant', 'spaceId', 'moduleId', 'position'] },
    ],
  },
  project(event, collection): ReadModelChange[] {
    const target = collection(READ_MODELS.fields);
    const { tenant } = event.metadata;
    const { position } = event;
    switch (event.type) {
      case 'FieldAdded': {
        const { moduleId, spaceId, field } = event.data as FieldAddedData;
        return [
          {
            op: 'upsert',
            collection: target,
            position,
            doc: {
              id: documentId(tenant, field.fieldId),
              moduleId,
              spaceId,
              ...field,
              ...createdColumns(event),
            },
          },
        ];
      }
      case 'FieldChanged': {
        const { fieldId, name, required, config, personal } = event.data as FieldChangedData;
        return [
          {
            op: 'patch',
            collection: target,
            position,
            id: documentId(tenant, fieldId),
            set: { ...defined({ name, required, config, personal }), ...updatedColumns(event) },
          },
        ];
      }
      case 'FieldRemoved':
        return [
          {
            op: 'delete',
            collection: target,
            position,
            id: documentId(tenant, (event.data as { fieldId: number }).fieldId),
          },
        ];
      case 'FieldsOrdered':
        return (event.data as { fieldIds: number[] }).fieldIds.map((fieldId, index) => ({
          op: 'patch',
          collection: target,
          position,
          id: documentId(tenant, fieldId),
          set: { position: index + 1, ...updatedColumns(event) },
        }));
      default:
        return [];
    }
  },
};
