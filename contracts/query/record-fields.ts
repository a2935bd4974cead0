import { catalogue, type FieldCatalogue } from './resolve';

/** The audit columns every entity read model carries. */
export const AUDIT_COLUMNS = {
  createdAt: { path: 'createdAt', type: 'datetime' },
  updatedAt: { path: 'updatedAt', type: 'datetime' },
  createdBy: { path: 'createdBy', type: 'string' },
  updatedBy: { path: 'updatedBy', type: 'string' },
} as const;

/**
 * The fields a record list lets a client filter and sort on, and where they live in the records read model.
 * Shared by the query API and by the command side, which checks saved segments' filters against it.
 */
const recordFields = {
  id: { path: 'recordId', type: 'integer' },
  moduleId: { path: 'moduleId', type: 'integer' },
  spaceId: { path: 'spaceId', type: 'integer' },
  name: { path: 'name', type: 'string' },
  ...AUDIT_COLUMNS,
} as const;

export const RECORD_FIELDS: FieldCatalogue = catalogue(recordFields);

export const DELETED_RECORD_FIELDS: FieldCatalogue = catalogue({
  ...recordFields,
  deletedAt: { path: 'deletedAt', type: 'datetime' },
  deletedBy: { path: 'deletedBy', type: 'string' },
});
