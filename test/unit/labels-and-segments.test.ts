import { attributesDecider, LABEL, SEGMENT } from '../../command-api/kit/attributes';
import type { DomainEvent } from '../../command-api/kit/decider';
import { recordDecider } from '../../command-api/records/domain/record';
import type { RecordEvent } from '../../contracts/events/records';
import { streamName } from '../../contracts/streams';
import { labelsProjection } from '../../projections/read-models/catalogue-entities';
import { recordsProjection } from '../../projections/read-models/records';
import { deciderSpec, EventLog, projectionSpec, TEST_TENANT } from '../support/given-when-then';

describe('label decider (the attributes decider with LABEL)', () => {
  const spec = deciderSpec(attributesDecider(LABEL));
  const created: DomainEvent = { type: 'LabelCreated', data: { labelId: 4, name: 'VIP', color: '#ff0000' } };

  test('creates a label', () => {
    const state = spec
      .given([])
      .when({ kind: 'Create', id: 4, attributes: { name: 'VIP', color: '#ff0000' } })
      .then([created]);
    expect(state).toEqual({ status: 'active', id: 4, attributes: { name: 'VIP', color: '#ff0000' } });
  });

  test('changes only what differs; the same values change nothing', () => {
    spec
      .given([created])
      .when({ kind: 'Update', attributes: { name: 'VIP', color: '#00ff00' } })
      .then([{ type: 'LabelUpdated', data: { labelId: 4, color: '#00ff00' } }]);
    spec
      .given([created])
      .when({ kind: 'Update', attributes: { name: 'VIP' } })
      .thenNothingHappens();
  });

  test('deletes a label once; a missing or deleted label is not found', () => {
    const deleted: DomainEvent = { type: 'LabelDeleted', data: { labelId: 4 } };
    spec.given([created]).when({ kind: 'Delete' }).then([deleted]);
    spec.given([created, deleted]).when({ kind: 'Delete' }).thenThrows('not_found');
    spec
      .given([])
      .when({ kind: 'Update', attributes: { name: 'x' } })
      .thenThrows('not_found');
    spec
      .given([created])
      .when({ kind: 'Create', id: 4, attributes: { name: 'Other', color: '#000000' } })
      .thenThrows('conflict');
  });
});

describe('record decider: labels', () => {
  const spec = deciderSpec(recordDecider);
  const created: RecordEvent = {
    type: 'RecordCreated',
    data: { recordId: 31, moduleId: 12, spaceId: 7, name: 'Deal', fields: {} },
  };
  const labelled: RecordEvent = { type: 'RecordLabelled', data: { recordId: 31, labelId: 4 } };

  test('attaches a live label once; attaching it again changes nothing', () => {
    const state = spec
      .given([created])
      .when({ kind: 'LabelRecord', labelId: 4, labelExists: true })
      .then([labelled]);
    expect(state.labelIds).toEqual([4]);
    spec
      .given([created, labelled])
      .when({ kind: 'LabelRecord', labelId: 4, labelExists: true })
      .thenNothingHappens();
  });

  test('refuses a label that does not exist (or belongs to another system)', () => {
    spec
      .given([created])
      .when({ kind: 'LabelRecord', labelId: 9, labelExists: false })
      .thenThrows('not_found');
  });

  test('detaches an attached label; detaching one it does not carry is not found', () => {
    const state = spec
      .given([created, labelled])
      .when({ kind: 'UnlabelRecord', labelId: 4 })
      .then([{ type: 'RecordUnlabelled', data: { recordId: 31, labelId: 4 } }]);
    expect(state.labelIds).toEqual([]);
    spec.given([created]).when({ kind: 'UnlabelRecord', labelId: 4 }).thenThrows('not_found');
  });

  test('a deleted record takes no labels', () => {
    spec
      .given([created, { type: 'RecordDeleted', data: { recordId: 31, moduleId: 12, spaceId: 7 } }])
      .when({ kind: 'LabelRecord', labelId: 4, labelExists: true })
      .thenThrows('not_found');
  });
});

describe('labels in the read models', () => {
  const log = new EventLog();
  const record = streamName('record', TEST_TENANT, 31);
  const created = log.record(record, {
    type: 'RecordCreated',
    data: { recordId: 31, moduleId: 12, spaceId: 7, name: 'Deal', fields: {} },
  });
  const labelled = log.record(record, { type: 'RecordLabelled', data: { recordId: 31, labelId: 4 } });
  const unlabelled = log.record(record, { type: 'RecordUnlabelled', data: { recordId: 31, labelId: 4 } });

  test('a record keeps its labels as the paths labels.<id>, so attaching is a patch', () => {
    projectionSpec(recordsProjection)
      .given([created])
      .when(labelled)
      .then([
        {
          op: 'patch',
          collection: 'records',
          position: labelled.position,
          id: `${TEST_TENANT}.31`,
          set: {
            'labels.4': true,
            updatedAt: labelled.metadata.occurredAt,
            updatedBy: labelled.metadata.actor.userId,
            revision: 1,
          },
        },
      ]);
    projectionSpec(recordsProjection)
      .given([created, labelled])
      .when(unlabelled)
      .thenDocuments('records', [
        expect.objectContaining({ id: `${TEST_TENANT}.31`, labels: {}, revision: 2 }) as Record<
          string,
          unknown
        >,
      ]);
  });

  test('a label is a document until it is deleted', () => {
    const labels = new EventLog();
    const stream = streamName('label', TEST_TENANT, 4);
    const labelCreated = labels.record(stream, {
      type: 'LabelCreated',
      data: { labelId: 4, name: 'VIP', color: '#ff0000' },
    });
    projectionSpec(labelsProjection)
      .given([])
      .when(labelCreated)
      .thenDocuments('labels', [
        expect.objectContaining({
          id: `${TEST_TENANT}.4`,
          labelId: 4,
          name: 'VIP',
          color: '#ff0000',
        }) as Record<string, unknown>,
      ]);
    const deleted = labels.record(stream, { type: 'LabelDeleted', data: { labelId: 4 } });
    projectionSpec(labelsProjection).given([labelCreated]).when(deleted).thenDocuments('labels', []);
  });
});

describe('segment decider (the attributes decider with SEGMENT; the route checks the space)', () => {
  const spec = deciderSpec(attributesDecider(SEGMENT));
  const created: DomainEvent = {
    type: 'SegmentCreated',
    data: { segmentId: 3, spaceId: 7, name: 'Big deals', filter: 'name~Big%', order: null },
  };
  const create = {
    kind: 'Create' as const,
    id: 3,
    attributes: { spaceId: 7, name: 'Big deals', filter: 'name~Big%', order: null },
  };

  test('creates a segment once', () => {
    const state = spec.given([]).when(create).then([created]);
    expect(state).toMatchObject({ status: 'active', attributes: { filter: 'name~Big%' } });
    spec.given([created]).when(create).thenThrows('conflict');
  });

  test('changes what differs (null clears the filter); deletes once', () => {
    spec
      .given([created])
      .when({ kind: 'Update', attributes: { name: 'Big deals', filter: null, order: 'name;ASC' } })
      .then([{ type: 'SegmentUpdated', data: { segmentId: 3, filter: null, order: 'name;ASC' } }]);
    spec
      .given([created])
      .when({ kind: 'Update', attributes: { filter: 'name~Big%' } })
      .thenNothingHappens();
    const deleted: DomainEvent = { type: 'SegmentDeleted', data: { segmentId: 3 } };
    spec.given([created]).when({ kind: 'Delete' }).then([deleted]);
    spec.given([created, deleted]).when({ kind: 'Delete' }).thenThrows('not_found');
  });
});
