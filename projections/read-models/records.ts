import type { RecordCreatedData, RecordUpdatedData } from '../../contracts/events/records';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import type { ReadModelChange } from '../../infra/read-store/port';
import type { Projection } from '../projection';
import { createdColumns, updatedColumns } from './common';

export const recordsProjection: Projection = {
  name: 'records',
  categories: ['record'],
  collections: {
    [READ_MODELS.records]: [
      { name: 'tenant_record', paths: ['tenant', 'recordId'] },
      { name: 'tenant_module_record', paths: ['tenant', 'moduleId', 'recordId'] },
      { name: 'tenant_space_record', paths: ['tenant', 'spaceId', 'recordId'] },
      { name: 'tenant_name', paths: ['tenant', 'name'] },
      { name: 'tenant_updated', paths: ['tenant', 'updatedAt'] },
    ],
  },
  project(event, collection): ReadModelChange[] {
    const target = collection(READ_MODELS.records);
    const tenant = event.metadata.tenant;
    const position = event.position;
    switch (event.type) {
      case 'RecordCreated': {
        const data = event.data as RecordCreatedData;
        return [
          {
            op: 'upsert',
            collection: target,
            position,
            doc: { id: documentId(tenant, data.recordId), ...data, ...createdColumns(event) },
          },
        ];
      }
      case 'RecordUpdated': {
        const data = event.data as RecordUpdatedData;
        const set: Record<string, unknown> = updatedColumns(event);
        const unset: string[] = [];
        for (const change of data.changes) {
          if (change.to === null) unset.push(change.field);
          else set[change.field] = change.to;
        }
        return [
          { op: 'patch', collection: target, position, id: documentId(tenant, data.recordId), set, unset },
        ];
      }
      case 'RecordDeleted':
        return [
          {
            op: 'delete',
            collection: target,
            position,
            id: documentId(tenant, (event.data as { recordId: number }).recordId),
          },
        ];
      default:
        return [];
    }
  },
};
