import type { z } from 'zod';
import type { remoteLinked } from '../../contracts/events/records';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import { remoteKey } from '../../contracts/remote-keys';
import type { ReadModelChange } from '../../contracts/read-model-changes';
import type { Projection } from '../projection';
import { createdColumns } from './common';

/** Which record each remote key points at, for `GET /record/remote/{remoteId}/{remoteApplication}`. */
export const remoteLinksProjection: Projection = {
  name: 'remote-links',
  categories: ['remote'],
  collections: { [READ_MODELS.remoteLinks]: [{ name: 'tenant_record', paths: ['tenant', 'recordId'] }] },
  project(event, collection): ReadModelChange[] {
    if (event.type !== 'RemoteLinked') return [];
    const { remoteApplication, remoteId, recordId } = event.data as z.infer<typeof remoteLinked>;
    return [
      {
        op: 'upsert',
        collection: collection(READ_MODELS.remoteLinks),
        position: event.position,
        doc: {
          id: documentId(event.metadata.tenant, remoteKey(remoteApplication, remoteId)),
          remoteApplication,
          remoteId,
          recordId,
          ...createdColumns(event),
        },
      },
    ];
  },
};
