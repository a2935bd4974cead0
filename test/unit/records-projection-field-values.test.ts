import { streamName } from '../../contracts/streams';
import { fieldValueIndex, recordsProjection } from '../../projections/read-models/records';
import { EventLog, projectionSpec, TEST_TENANT } from '../support/given-when-then';
import { FIELD_TYPES } from '../../contracts/fields';
import { assertChange } from '../../infra/read-store/validation';

const records = projectionSpec(recordsProjection);
const log = new EventLog();
const recordStream = streamName('record', TEST_TENANT, 31);
const moduleStream = streamName('module', TEST_TENANT, 12);

function fieldAdded(fieldId: number, key: string, type: (typeof FIELD_TYPES)[number], config = {}) {
  return log.record(moduleStream, {
    type: 'FieldAdded',
    data: {
      moduleId: 12,
      spaceId: 7,
      field: { fieldId, key, name: key, type, required: false, config, position: fieldId, builtIn: false },
    },
  });
}

const created = log.record(recordStream, {
  type: 'RecordCreated',
  data: {
    recordId: 31,
    moduleId: 12,
    spaceId: 7,
    name: 'ACME',
    fields: { at: '2024-01-01T10:00:00+02:00', when: '2024-01-01T08:00:00Z', note: 'not a time', n: 5 },
  },
});

describe('records projection: date-times as UTC instants', () => {
  test('a created record keeps each date-time value as written and its UTC instant under instants.<key>', () => {
    records
      .given([])
      .when(created)
      .thenDocuments('records', [
        expect.objectContaining({
          fields: created.data.fields,
          instants: { at: '2024-01-01T08:00:00.000Z', when: '2024-01-01T08:00:00.000Z' },
        }),
      ]);
  });

  test('an update sets the new instant, and removes it with the value', () => {
    const updated = log.record(recordStream, {
      type: 'RecordUpdated',
      data: {
        recordId: 31,
        changes: [
          { field: 'fields.at', from: '2024-01-01T10:00:00+02:00', to: '2024-06-01T00:00:00.5-01:30' },
          { field: 'fields.when', from: '2024-01-01T08:00:00Z', to: null },
          { field: 'fields.note', from: 'not a time', to: '2030-01-01T00:00:00Z' },
        ],
      },
    });
    records
      .given([created])
      .when(updated)
      .thenDocuments('records', [
        expect.objectContaining({
          fields: { at: '2024-06-01T00:00:00.5-01:30', note: '2030-01-01T00:00:00Z', n: 5 },
          instants: { at: '2024-06-01T01:30:00.500Z', note: '2030-01-01T00:00:00.000Z' },
        }),
      ]);
  });

  test('a record without date-times has no instants', () => {
    const plain = log.record(streamName('record', TEST_TENANT, 32), {
      type: 'RecordCreated',
      data: { recordId: 32, moduleId: 12, spaceId: 7, name: 'Plain', fields: { n: 1, day: '2024-01-01' } },
    });
    records
      .given([])
      .when(plain)
      .thenDocuments('records', [expect.not.objectContaining({ instants: expect.anything() })]);
  });

  test('an erasure naming a field twice erases it and its instant once, in a patch every store takes', () => {
    const erased = log.record(recordStream, {
      type: 'RecordErased',
      data: { recordId: 31, moduleId: 12, spaceId: 7, reason: 'Art. 17', fields: ['at', 'note', 'at'] },
    });
    const changes = recordsProjection.project(erased, (base) => base);
    for (const change of changes) expect(() => assertChange(change)).not.toThrow();
    records
      .given([created])
      .when(erased)
      .thenDocuments('records', [
        expect.objectContaining({
          name: '[erased]',
          fields: { at: '[erased]', when: created.data.fields.when, note: '[erased]', n: 5 },
          instants: { when: '2024-01-01T08:00:00.000Z' },
        }),
      ]);
  });
});

describe('records projection: an index for each new field of an indexed type', () => {
  test.each(FIELD_TYPES)('FieldAdded of a %s field', (type) => {
    const config =
      type === 'select' || type === 'multi_select'
        ? { options: ['a'] }
        : type === 'relation'
          ? { moduleId: 12 }
          : type === 'button'
            ? { webhookUrl: 'https://example.com/hook' }
            : {};
    const event = fieldAdded(100 + FIELD_TYPES.indexOf(type), `k_${type}`, type, config);
    const index = fieldValueIndex({ key: `k_${type}`, type });
    const indexed = !['long_text', 'checkbox', 'multi_select', 'file', 'button'].includes(type);
    expect(index !== undefined).toBe(indexed);
    records
      .given([])
      .when(event)
      .then(index ? [{ op: 'index', collection: 'records', index, position: event.position }] : []);
    if (index) {
      const path = type === 'datetime' ? `instants.k_${type}` : `fields.k_${type}`;
      expect(index).toEqual({ name: path.replace('.', '__'), paths: ['tenant', 'status', 'moduleId', path] });
    }
  });

  test('other module events change no record', () => {
    const renamed = log.record(moduleStream, {
      type: 'ModuleUpdated',
      data: { moduleId: 12, name: 'Deals' },
    });
    records.given([created]).when(renamed).then([]);
  });
});
