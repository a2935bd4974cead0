import { READ_MODELS, VALIDITY } from '../../contracts/read-models';
import { recordVersionsProjection } from '../../projections/read-models/record-versions';
import { EventLog, projectionSpec } from '../support/given-when-then';

/** The temporal read model: one document per version of a record, valid between two positions. */
describe('record versions projection', () => {
  const spec = projectionSpec(recordVersionsProjection);
  const log = new EventLog();
  const stream = 'record-acme.7';
  const created = log.record(stream, {
    type: 'RecordCreated',
    data: { recordId: 7, moduleId: 2, spaceId: 1, name: 'Deal', fields: { stage: 'lead' } },
  });
  const renamed = log.record(stream, {
    type: 'RecordUpdated',
    data: { recordId: 7, changes: [{ field: 'name', from: 'Deal', to: 'Big deal' }] },
  });
  const labelled = log.record(stream, { type: 'RecordLabelled', data: { recordId: 7, labelId: 3 } });
  const deleted = log.record(stream, {
    type: 'RecordDeleted',
    data: { recordId: 7, moduleId: 2, spaceId: 1 },
  });
  const expectVersions = (history: ReturnType<typeof log.record>[]) =>
    spec
      .given(history.slice(0, -1))
      .when(history.at(-1)!)
      .thenDocuments(READ_MODELS.recordVersions, collect(history));
  /** What the versions should be: each event's record, valid from its position to the next one's. */
  function collect(history: ReturnType<typeof log.record>[]) {
    return history.map((event, index) => {
      const next = history[index + 1];
      return expect.objectContaining({
        id: `acme.7@${event.revision}`,
        recordId: 7,
        [VALIDITY.fromPosition]: Number(event.position),
        [VALIDITY.fromTime]: event.metadata.occurredAt,
        ...(next
          ? { [VALIDITY.toPosition]: Number(next.position), [VALIDITY.toTime]: next.metadata.occurredAt }
          : {}),
      }) as unknown as Record<string, unknown>;
    });
  }

  test('each event of a record makes a version, and closes the one before', () => {
    expectVersions([created]);
    expectVersions([created, renamed]);
    expectVersions([created, renamed, labelled, deleted]);
  });

  test('a version holds the record as it was then: the name, the fields, the labels, the deletion', () => {
    spec
      .given([created, renamed, labelled])
      .when(deleted)
      .thenDocuments(READ_MODELS.recordVersions, [
        expect.objectContaining({ id: 'acme.7@0', name: 'Deal', fields: { stage: 'lead' }, status: 'live' }),
        expect.objectContaining({ id: 'acme.7@1', name: 'Big deal', status: 'live' }),
        expect.objectContaining({ id: 'acme.7@2', name: 'Big deal', labels: { 3: true }, status: 'live' }),
        expect.objectContaining({ id: 'acme.7@3', name: 'Big deal', status: 'deleted' }),
      ] as unknown as Record<string, unknown>[]);
  });

  test('an erasure reaches back: every version, the new one too, shows the name and erased fields as erased', () => {
    const erasureLog = new EventLog();
    const erasedStream = 'record-acme.8';
    const first = erasureLog.record(erasedStream, {
      type: 'RecordCreated',
      data: { recordId: 8, moduleId: 2, spaceId: 1, name: 'Ada', fields: { email: 'a@x.io', stage: 'lead' } },
    });
    const second = erasureLog.record(erasedStream, {
      type: 'RecordUpdated',
      data: { recordId: 8, changes: [{ field: 'fields.stage', from: 'lead', to: 'won' }] },
    });
    const erased = erasureLog.record(erasedStream, {
      type: 'RecordErased',
      data: { recordId: 8, moduleId: 2, spaceId: 1, reason: 'Art. 17', fields: ['email'] },
    });
    // Another record's versions are left alone.
    spec
      .given([created, first, second])
      .when(erased)
      .thenDocuments(READ_MODELS.recordVersions, [
        expect.objectContaining({ id: 'acme.7@0', name: 'Deal' }),
        expect.objectContaining({
          id: 'acme.8@0',
          name: '[erased]',
          fields: { email: '[erased]', stage: 'lead' },
        }),
        expect.objectContaining({
          id: 'acme.8@1',
          name: '[erased]',
          fields: { email: '[erased]', stage: 'won' },
        }),
        expect.objectContaining({
          id: 'acme.8@2',
          name: '[erased]',
          fields: { email: '[erased]', stage: 'won' },
        }),
      ] as unknown as Record<string, unknown>[]);
  });

  test('the current version is the one without an end', () => {
    spec
      .given([created])
      .when(renamed)
      .thenDocuments(READ_MODELS.recordVersions, [
        expect.objectContaining({ id: 'acme.7@0', [VALIDITY.toPosition]: Number(renamed.position) }),
        expect.not.objectContaining({ [VALIDITY.toPosition]: expect.anything() }),
      ] as unknown as Record<string, unknown>[]);
  });

  test('a module’s field makes two indexes of the versions (by its value, and by validity for counts); its other events change nothing', () => {
    const field = log.record('module-acme.2', {
      type: 'FieldAdded',
      data: {
        moduleId: 2,
        spaceId: 1,
        field: {
          fieldId: 9,
          key: 'stage',
          name: 'Stage',
          type: 'text',
          required: false,
          config: {},
          position: 1,
          builtIn: false,
        },
      },
    });
    spec
      .given([])
      .when(field)
      .then([
        {
          op: 'index',
          collection: READ_MODELS.recordVersions,
          index: {
            name: 'fields__stage__valid',
            paths: [
              'tenant',
              'status',
              'moduleId',
              'fields.stage',
              'id',
              'validFromPosition',
              'validToPosition',
            ],
          },
          position: field.position,
        },
        {
          op: 'index',
          collection: READ_MODELS.recordVersions,
          index: {
            name: 'fields__stage__during',
            paths: ['tenant', 'status', 'moduleId'],
            interval: { from: 'validFromPosition', to: 'validToPosition', then: ['fields.stage'] },
          },
          position: field.position,
        },
      ]);
    const renamedModule = log.record('module-acme.2', {
      type: 'ModuleUpdated',
      data: { moduleId: 2, name: 'Deals' },
    });
    spec.given([]).when(renamedModule).then([]);
  });
});
