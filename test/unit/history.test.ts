import type { RecordedEvent } from '../../contracts/events/envelope';
import { streamName } from '../../contracts/streams';
import { auditProjection, fieldHistoryProjection } from '../../projections/read-models/history';
import { EventLog, projectionSpec, TEST_TENANT } from '../support/given-when-then';

const log = new EventLog();
const record = streamName('record', TEST_TENANT, 31);
const created = log.record(record, {
  type: 'RecordCreated',
  data: { recordId: 31, moduleId: 12, spaceId: 7, name: 'Deal', fields: { stage: 'lead' } },
});
const updated = log.record(
  record,
  {
    type: 'RecordUpdated',
    data: { recordId: 31, changes: [{ field: 'fields.stage', from: 'lead', to: 'won' }] },
  },
  { actor: { userId: '2', credentialId: 'token-2', clientId: 'client-9' } },
);
const user = log.record(streamName('user', TEST_TENANT, 2), {
  type: 'UserRegistered',
  data: {
    userId: 2,
    email: 'ana@example.com',
    name: 'Ana',
    role: 'member',
    passwordHash: 'scrypt$1$2$3$salt$hash',
  },
});

function actor(event: RecordedEvent): Record<string, unknown> {
  return {
    tenant: TEST_TENANT,
    at: event.metadata.occurredAt,
    position: Number(event.position),
    userId: event.metadata.actor.userId,
    credentialId: event.metadata.actor.credentialId ?? null,
    clientId: event.metadata.actor.clientId ?? null,
  };
}

function auditDoc(event: RecordedEvent): Record<string, unknown> {
  return {
    id: `${TEST_TENANT}.${event.id}`,
    eventId: event.id,
    type: event.type,
    category: 'record',
    streamId: record,
    revision: Number(event.revision),
    commandId: event.metadata.commandId,
    correlationId: event.metadata.correlationId,
    ...actor(event),
    data: event.data,
  };
}

describe('audit projection', () => {
  test('one document per event: which, where, by whom, in which command, with the data', () => {
    projectionSpec(auditProjection)
      .given([created])
      .when(updated)
      .thenDocuments('audit', [auditDoc(created), auditDoc(updated)]);
    expect(auditDoc(updated)).toMatchObject({ userId: '2', credentialId: 'token-2', clientId: 'client-9' });
  });

  test('identity events are audited without their data (it holds password and token hashes)', () => {
    projectionSpec(auditProjection)
      .given([])
      .when(user)
      .thenDocuments('audit', [
        expect.not.objectContaining({ data: expect.anything() }) as Record<string, unknown>,
      ]);
    projectionSpec(auditProjection)
      .given([])
      .when(user)
      .thenDocuments('audit', [
        expect.objectContaining({ type: 'UserRegistered', category: 'user' }) as Record<string, unknown>,
      ]);
  });

  test('replaying an event changes nothing', () => {
    projectionSpec(auditProjection).given([created, updated]).when(updated).thenNothingChanges();
  });
});

describe('field history projection', () => {
  test("a creation's values are changes from null; an update's changes are kept with their actor", () => {
    projectionSpec(fieldHistoryProjection)
      .given([created])
      .when(updated)
      .thenDocuments('field_history', [
        {
          id: `${TEST_TENANT}.${created.id}.0`,
          recordId: 31,
          moduleId: 12,
          field: 'name',
          from: null,
          to: 'Deal',
          ...actor(created),
        },
        {
          id: `${TEST_TENANT}.${created.id}.1`,
          recordId: 31,
          moduleId: 12,
          field: 'fields.stage',
          from: null,
          to: 'lead',
          ...actor(created),
        },
        {
          id: `${TEST_TENANT}.${updated.id}.0`,
          recordId: 31,
          field: 'fields.stage',
          from: 'lead',
          to: 'won',
          ...actor(updated),
        },
      ]);
  });

  test('other record events leave no field history', () => {
    const labelled = log.record(record, { type: 'RecordLabelled', data: { recordId: 31, labelId: 4 } });
    projectionSpec(fieldHistoryProjection).given([created]).when(labelled).thenNothingChanges();
  });
});
