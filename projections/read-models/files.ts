import type { RecordErasedData } from '../../contracts/events/records';
import { ERASED_VALUE } from '../../contracts/personal-data';
import type { FileAttachedData, FileDetachedData, FileWeightsSetData } from '../../contracts/events/files';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import type { ReadModelChange } from '../../contracts/read-model-changes';
import type { Projection } from '../projection';
import { createdColumns, updatedColumns } from './common';

/** The files of records (metadata and blob key), one document per file, for the file routes. */
export const filesProjection: Projection = {
  name: 'files',
  categories: ['record'],
  collections: {
    // Every file list is one record's, in display order.
    [READ_MODELS.files]: [
      { name: 'tenant_record_weight', paths: ['tenant', 'recordId', 'weight', 'fileId'] },
    ],
  },
  project(event, collection): ReadModelChange[] {
    const target = collection(READ_MODELS.files);
    const { tenant } = event.metadata;
    const position = event.position;
    switch (event.type) {
      case 'FileAttached': {
        const data = event.data as FileAttachedData;
        return [
          {
            op: 'upsert',
            collection: target,
            position,
            doc: { id: documentId(tenant, data.fileId), ...data, ...createdColumns(event) },
          },
        ];
      }
      case 'FileDetached': {
        const { fileId } = event.data as FileDetachedData;
        return [{ op: 'delete', collection: target, position, id: documentId(tenant, fileId) }];
      }
      case 'FileWeightsSet':
        return (event.data as FileWeightsSetData).weights.map(({ fileId, weight }) => ({
          op: 'patch',
          collection: target,
          position,
          id: documentId(tenant, fileId),
          set: { weight, ...updatedColumns(event) },
        }));
      case 'RecordErased':
        return [
          {
            op: 'patchWhere',
            collection: target,
            where: { tenant, recordId: (event.data as RecordErasedData).recordId },
            set: { name: ERASED_VALUE },
            position,
          },
        ];
      default:
        return [];
    }
  },
};
