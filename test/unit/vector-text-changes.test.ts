import type { RecordedEvent } from '../../contracts/events/envelope';
import { textChangeOf } from '../../projections/vectors/vector-projection';

function event(type: string, data: Record<string, unknown>): RecordedEvent {
  return {
    id: 'e1',
    type,
    schemaVersion: 1,
    data,
    metadata: {
      tenant: 'acme',
      actor: { userId: null },
      correlationId: 'c',
      causationId: 'c',
      commandId: 'c',
      occurredAt: '2026-11-26T10:00:00.000Z',
    },
    streamId: 's',
    revision: 0n,
    position: 1n,
    recordedAt: '2026-11-26T10:00:00.000Z',
  };
}

describe('what an event changes of the texts the vectors are made from', () => {
  test('a record event: that record', () => {
    for (const type of [
      'RecordCreated',
      'RecordUpdated',
      'RecordDeleted',
      'RecordRestored',
      'RecordLabelled',
    ])
      expect(textChangeOf(event(type, { recordId: 7, moduleId: 3, labelId: 2 }))).toEqual({
        kind: 'record',
        tenant: 'acme',
        recordId: 7,
      });
  });

  test('a field renamed, removed or reordered: every record of its module', () => {
    const module = { kind: 'module', tenant: 'acme', moduleId: 3 };
    expect(textChangeOf(event('FieldChanged', { moduleId: 3, fieldId: 9, name: 'Shade' }))).toEqual(module);
    expect(textChangeOf(event('FieldRemoved', { moduleId: 3, fieldId: 9 }))).toEqual(module);
    expect(textChangeOf(event('FieldsOrdered', { moduleId: 3, fieldIds: [9, 8] }))).toEqual(module);
  });

  test('a label renamed or deleted: every record with it', () => {
    const label = { kind: 'label', tenant: 'acme', labelId: 2 };
    expect(textChangeOf(event('LabelUpdated', { labelId: 2, name: 'Matte' }))).toEqual(label);
    expect(textChangeOf(event('LabelDeleted', { labelId: 2 }))).toEqual(label);
  });

  test('changes that no text shows: nothing', () => {
    expect(textChangeOf(event('FieldChanged', { moduleId: 3, fieldId: 9, required: true }))).toBeNull();
    expect(textChangeOf(event('FieldAdded', { moduleId: 3, spaceId: 1, field: {} }))).toBeNull();
    expect(textChangeOf(event('LabelUpdated', { labelId: 2, color: '#fff' }))).toBeNull();
    expect(textChangeOf(event('LabelCreated', { labelId: 2, name: 'New' }))).toBeNull();
    expect(textChangeOf(event('ModuleCreated', { moduleId: 3, spaceId: 1, name: 'M' }))).toBeNull();
  });
});
