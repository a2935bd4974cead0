import type { RecordUpdatedData } from '../../contracts/events/records';
import { READ_MODELS } from '../../contracts/read-models';
import { entityProjection } from './entity';

export const recordsProjection = entityProjection({
  name: 'records',
  category: 'record',
  collection: READ_MODELS.records,
  // `status` follows the tenant in every index: every list reads live or deleted records only, so each list
  // query can seek on it instead of checking every document.
  indexes: [
    { name: 'tenant_status_record', paths: ['tenant', 'status', 'recordId'] },
    { name: 'tenant_status_module_record', paths: ['tenant', 'status', 'moduleId', 'recordId'] },
    { name: 'tenant_status_space_record', paths: ['tenant', 'status', 'spaceId', 'recordId'] },
    { name: 'tenant_status_name', paths: ['tenant', 'status', 'name'] },
    { name: 'tenant_status_updated', paths: ['tenant', 'status', 'updatedAt'] },
    // `moduleId=<m>;name~Record 12%`: a name search within a module seeks to the module's names starting with
    // the pattern's literal prefix (case-insensitively) instead of checking every record of the module.
    {
      name: 'tenant_status_module_folded_name',
      paths: ['tenant', 'status', 'moduleId', { path: 'name', caseFolded: true }],
    },
  ],
  idKey: 'recordId',
  created: 'RecordCreated',
  initial: { status: 'live' },
  patches: {
    /** A soft delete: the document stays, marked, for `GET /record/deleted` and a restore. */
    RecordDeleted: (_data, event) => ({
      set: {
        status: 'deleted',
        deletedAt: event.metadata.occurredAt,
        deletedBy: event.metadata.actor.userId,
      },
    }),
    RecordRestored: () => ({ set: { status: 'live' }, unset: ['deletedAt', 'deletedBy'] }),
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
