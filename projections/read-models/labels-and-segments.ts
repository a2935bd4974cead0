import { READ_MODELS } from '../../contracts/read-models';
import { entityProjection, setAllBut } from './entity';

export const labelsProjection = entityProjection({
  name: 'labels',
  category: 'label',
  collection: READ_MODELS.labels,
  indexes: [
    { name: 'tenant_label', paths: ['tenant', 'labelId'] },
    { name: 'tenant_label_name', paths: ['tenant', 'name'] },
  ],
  idKey: 'labelId',
  created: 'LabelCreated',
  deleted: 'LabelDeleted',
  patches: { LabelUpdated: setAllBut('labelId') },
});

export const segmentsProjection = entityProjection({
  name: 'segments',
  category: 'segment',
  collection: READ_MODELS.segments,
  indexes: [
    { name: 'tenant_segment', paths: ['tenant', 'segmentId'] },
    { name: 'tenant_space_segment', paths: ['tenant', 'spaceId', 'segmentId'] },
  ],
  idKey: 'segmentId',
  created: 'SegmentCreated',
  deleted: 'SegmentDeleted',
  patches: { SegmentUpdated: setAllBut('segmentId') },
});
