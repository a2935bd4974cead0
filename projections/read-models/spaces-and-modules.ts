import { READ_MODELS } from '../../contracts/read-models';
import { entityProjection } from './entity';

export const spacesProjection = entityProjection({
  name: 'spaces',
  category: 'space',
  collection: READ_MODELS.spaces,
  indexes: [{ name: 'tenant_space', paths: ['tenant', 'spaceId'] }],
  idKey: 'spaceId',
  events: { created: 'SpaceCreated', updated: 'SpaceUpdated', deleted: 'SpaceDeleted' },
});

export const modulesProjection = entityProjection({
  name: 'modules',
  category: 'module',
  collection: READ_MODELS.modules,
  indexes: [
    { name: 'tenant_module', paths: ['tenant', 'moduleId'] },
    { name: 'tenant_space_module', paths: ['tenant', 'spaceId', 'moduleId'] },
  ],
  idKey: 'moduleId',
  events: { created: 'ModuleCreated', updated: 'ModuleUpdated', deleted: 'ModuleDeleted' },
  touchedBy: ['FieldAdded', 'FieldChanged', 'FieldRemoved', 'FieldsOrdered'],
});
