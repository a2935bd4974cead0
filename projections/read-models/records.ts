import type { RecordUpdatedData } from '../../contracts/events/records';
import { READ_MODELS } from '../../contracts/read-models';
import { entityProjection } from './entity';

export const recordsProjection = entityProjection({
  name: 'records',
  category: 'record',
  collection: READ_MODELS.records,
  indexes: [
    { name: 'tenant_record', paths: ['tenant', 'recordId'] },
    { name: 'tenant_module_record', paths: ['tenant', 'moduleId', 'recordId'] },
    { name: 'tenant_space_record', paths: ['tenant', 'spaceId', 'recordId'] },
    { name: 'tenant_name', paths: ['tenant', 'name'] },
    { name: 'tenant_updated', paths: ['tenant', 'updatedAt'] },
  ],
  idKey: 'recordId',
  events: { created: 'RecordCreated', updated: 'RecordUpdated', deleted: 'RecordDeleted' },
  /** Each change names its field path (`name`, `fields.<key>`); a null value removes the field. */
  patchOf(data) {
    const set: Record<string, unknown> = {};
    const unset: string[] = [];
    for (const change of (data as unknown as RecordUpdatedData).changes) {
      if (change.to === null) unset.push(change.field);
      else set[change.field] = change.to;
    }
    return { set, unset };
  },
});
