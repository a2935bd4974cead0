import type {
  ModuleCreatedData,
  ModuleUpdatedData,
  SpaceCreatedData,
  SpaceUpdatedData,
} from '../../contracts/events/records';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import type { ReadModelChange } from '../../infra/read-store/port';
import type { Projection } from '../projection';
import { createdColumns, defined, updatedColumns } from './common';

export const spacesProjection: Projection = {
  name: 'spaces',
  categories: ['space'],
  collections: { [READ_MODELS.spaces]: [{ name: 'tenant_space', paths: ['tenant', 'spaceId'] }] },
  project(event, collection): ReadModelChange[] {
    const target = collection(READ_MODELS.spaces);
    const tenant = event.metadata.tenant;
    const position = event.position;
    switch (event.type) {
      case 'SpaceCreated': {
        const data = event.data as SpaceCreatedData;
        return [
          {
            op: 'upsert',
            collection: target,
            position,
            doc: { id: documentId(tenant, data.spaceId), ...data, ...createdColumns(event) },
          },
        ];
      }
      case 'SpaceUpdated': {
        const { spaceId, ...changes } = event.data as SpaceUpdatedData;
        return [
          {
            op: 'patch',
            collection: target,
            position,
            id: documentId(tenant, spaceId),
            set: defined({ ...changes, ...updatedColumns(event) }),
          },
        ];
      }
      case 'SpaceDeleted':
        return [
          {
            op: 'delete',
            collection: target,
            position,
            id: documentId(tenant, (event.data as { spaceId: number }).spaceId),
          },
        ];
      default:
        return [];
    }
  },
};

export const modulesProjection: Projection = {
  name: 'modules',
  categories: ['module'],
  collections: {
    [READ_MODELS.modules]: [
      { name: 'tenant_module', paths: ['tenant', 'moduleId'] },
      { name: 'tenant_space_module', paths: ['tenant', 'spaceId', 'moduleId'] },
    ],
  },
  project(event, collection): ReadModelChange[] {
    const target = collection(READ_MODELS.modules);
    const tenant = event.metadata.tenant;
    const position = event.position;
    switch (event.type) {
      case 'ModuleCreated': {
        const data = event.data as ModuleCreatedData;
        return [
          {
            op: 'upsert',
            collection: target,
            position,
            doc: { id: documentId(tenant, data.moduleId), ...data, ...createdColumns(event) },
          },
        ];
      }
      case 'ModuleUpdated': {
        const { moduleId, ...changes } = event.data as ModuleUpdatedData;
        return [
          {
            op: 'patch',
            collection: target,
            position,
            id: documentId(tenant, moduleId),
            set: defined({ ...changes, ...updatedColumns(event) }),
          },
        ];
      }
      case 'ModuleDeleted':
        return [
          {
            op: 'delete',
            collection: target,
            position,
            id: documentId(tenant, (event.data as { moduleId: number }).moduleId),
          },
        ];
      default:
        return [];
    }
  },
};
