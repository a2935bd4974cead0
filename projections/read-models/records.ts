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
  created: 'RecordCreated',
  patches: {
    /** A soft delete: the document stays, marked, for `GET /record/deleted` and a restore. */
    RecordDeleted: (_data, event) => ({
      set: { deletedAt: event.metadata.occurredAt, deletedBy: event.metadata.actor.userId },
    }),
    RecordRestored: () => ({ set: {}, unset: ['deletedAt', 'deletedBy'] }),
    /** Each change names its field path (`name`, `fields.<key>`); a null value removes the field. */
    RecordUpdated(data) {
      const set: Record<string, unknown> = {};
      const unset: string[] = [];
      for (const change of (data as unknown as RecordUpdatedData).changes) {
        if (change.to === null) unset.push(change.field);
        else set[change.field] = change.to;
      }
      return { set, unset };
    },
    /** Labels as a set of paths (`labels.<id>`), so attaching one is a patch, not a read-modify-write. */
    RecordLabelled: (data) => ({ set: { [`labels.${String(data.labelId)}`]: true } }),
    RecordUnlabelled: (data) => ({ set: {}, unset: [`labels.${String(data.labelId)}`] }),
  },
});
