import { catalogue, type FieldCatalogue } from '../../languages/filter/resolve';
import { AUDIT_COLUMNS } from '../../languages/filter/record-fields';

/** The fields each list route lets a client filter and sort on, and where they live in the read model. */

export const SPACE_FIELDS: FieldCatalogue = catalogue({
  id: { path: 'spaceId', type: 'integer' },
  name: { path: 'name', type: 'string' },
  description: { path: 'description', type: 'string' },
  ...AUDIT_COLUMNS,
});

export const MODULE_FIELDS: FieldCatalogue = catalogue({
  id: { path: 'moduleId', type: 'integer' },
  spaceId: { path: 'spaceId', type: 'integer' },
  name: { path: 'name', type: 'string' },
  description: { path: 'description', type: 'string' },
  kind: { path: 'kind', type: 'string' },
  template: { path: 'template', type: 'string' },
  ...AUDIT_COLUMNS,
});

export const FIELD_FIELDS: FieldCatalogue = catalogue({
  id: { path: 'fieldId', type: 'integer' },
  moduleId: { path: 'moduleId', type: 'integer' },
  spaceId: { path: 'spaceId', type: 'integer' },
  key: { path: 'key', type: 'string' },
  name: { path: 'name', type: 'string' },
  type: { path: 'type', type: 'string' },
  required: { path: 'required', type: 'boolean' },
  position: { path: 'position', type: 'integer' },
  builtIn: { path: 'builtIn', type: 'boolean' },
  ...AUDIT_COLUMNS,
});

export const LABEL_FIELDS: FieldCatalogue = catalogue({
  id: { path: 'labelId', type: 'integer' },
  name: { path: 'name', type: 'string' },
  color: { path: 'color', type: 'string' },
  ...AUDIT_COLUMNS,
});

export const AUDIT_FIELDS: FieldCatalogue = catalogue({
  position: { path: 'position', type: 'integer' },
  type: { path: 'type', type: 'string' },
  category: { path: 'category', type: 'string' },
  streamId: { path: 'streamId', type: 'string' },
  userId: { path: 'userId', type: 'string' },
  credentialId: { path: 'credentialId', type: 'string' },
  clientId: { path: 'clientId', type: 'string' },
  commandId: { path: 'commandId', type: 'string' },
  correlationId: { path: 'correlationId', type: 'string' },
  at: { path: 'at', type: 'datetime' },
});

export const FIELD_HISTORY_FIELDS: FieldCatalogue = catalogue({
  field: { path: 'field', type: 'string' },
  credentialId: { path: 'credentialId', type: 'string' },
  changedAt: { path: 'at', type: 'datetime' },
  position: { path: 'position', type: 'integer' },
});

export const SEGMENT_FIELDS: FieldCatalogue = catalogue({
  id: { path: 'segmentId', type: 'integer' },
  spaceId: { path: 'spaceId', type: 'integer' },
  name: { path: 'name', type: 'string' },
  ...AUDIT_COLUMNS,
});

export const CATEGORY_FIELDS: FieldCatalogue = catalogue({
  id: { path: 'categoryId', type: 'integer' },
  name: { path: 'name', type: 'string' },
  description: { path: 'description', type: 'string' },
  parentId: { path: 'parentId', type: 'integer' },
  ...AUDIT_COLUMNS,
});

export const TEAM_FIELDS: FieldCatalogue = catalogue({
  id: { path: 'teamId', type: 'integer' },
  name: { path: 'name', type: 'string' },
  description: { path: 'description', type: 'string' },
  ...AUDIT_COLUMNS,
});

export const MENU_FIELDS: FieldCatalogue = catalogue({
  id: { path: 'menuId', type: 'integer' },
  name: { path: 'name', type: 'string' },
  position: { path: 'position', type: 'integer' },
  ...AUDIT_COLUMNS,
});

export const FIELD_GROUP_FIELDS: FieldCatalogue = catalogue({
  id: { path: 'fieldGroupId', type: 'integer' },
  moduleId: { path: 'moduleId', type: 'integer' },
  name: { path: 'name', type: 'string' },
  position: { path: 'position', type: 'integer' },
  ...AUDIT_COLUMNS,
});

export const USER_FIELDS: FieldCatalogue = catalogue({
  id: { path: 'userId', type: 'integer' },
  email: { path: 'email', type: 'string' },
  name: { path: 'name', type: 'string' },
  role: { path: 'role', type: 'string' },
  active: { path: 'active', type: 'boolean' },
});
