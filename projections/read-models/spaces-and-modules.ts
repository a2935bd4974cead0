import { READ_MODELS } from '../../contracts/read-models';
import { entityProjection, setAllBut, touch } from './entity';

export const spacesProjection = entityProjection({
  name: 'spaces',
  category: 'space',
  collection: READ_MODELS.spaces,
  indexes: [{ name: 'tenant_space', paths: ['tenant', 'spaceId'] }],
  idKey: 'spaceId',
  created: 'SpaceCreated',
  deleted: 'SpaceDeleted',
  patches: { SpaceUpdated: setAllBut('spaceId') },
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
  created: 'ModuleCreated',
  deleted: 'ModuleDeleted',
  // Field events belong to the module's stream; the fields projection keeps their documents.
  patches: {
    ModuleUpdated: setAllBut('moduleId'),
    FieldAdded: touch,
    FieldChanged: touch,
    FieldRemoved: touch,
    FieldsOrdered: touch,
  },
});
