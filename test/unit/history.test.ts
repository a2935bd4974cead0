import type { RecordedEvent } from '../../contracts/events/envelope';
import { positionKey } from '../../contracts/read-models';
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

/** Documents made one per event take their ids from its position, padded so they sort as positions do. */
const paddedPosition = (event: RecordedEvent): string => event.position.toString().padStart(20, '0');

test('position keys sort as positions do, up to the largest 64-bit position', () => {
  const positions = [1n, 9n, 10n, 99n, 100n, 123_456_789n, 2n ** 63n - 1n];
  const keys = positions.map(positionKey);
  expect([...keys].sort()).toEqual(keys);
  expect(new Set(keys.map((key) => key.length))).toEqual(new Set([20]));
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
    id: `${TEST_TENANT}.${paddedPosition(event)}`,
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

  test("a hook request's erasure is audited with who erased it and why (its data holds no personal data)", () => {
    const erased = log.record(streamName('hookRequestErasure', TEST_TENANT, 'r1'), {
      type: 'WebhookRequestErased',
      data: {
        webhookId: 4,
        requestId: 'r1',
        reason: 'Art. 17 request',
        refused: true,
        runs: [],
        queueFailures: false,
      },
    });
    projectionSpec(auditProjection)
      .given([])
      .when(erased)
      .thenDocuments('audit', [
        expect.objectContaining({
          type: 'WebhookRequestErased',
          category: 'hookRequestErasure',
          userId: erased.metadata.actor.userId,
          data: erased.data,
        }) as Record<string, unknown>,
      ]);
  });
});

describe('field history projection', () => {
  test("a creation's values are changes from null; an update's changes are kept with their actor", () => {
    projectionSpec(fieldHistoryProjection)
      .given([created])
      .when(updated)
      .thenDocuments('field_history', [
        {
          id: `${TEST_TENANT}.${paddedPosition(created)}.0`,
          recordId: 31,
          moduleId: 12,
          field: 'name',
          from: null,
          to: 'Deal',
          ...actor(created),
        },
        {
          id: `${TEST_TENANT}.${paddedPosition(created)}.1`,
          recordId: 31,
          moduleId: 12,
          field: 'fields.stage',
          from: null,
          to: 'lead',
          ...actor(created),
        },
        {
          id: `${TEST_TENANT}.${paddedPosition(updated)}.0`,
          recordId: 31,
          field: 'fields.stage',
          from: 'lead',
          to: 'won',
          ...actor(updated),
        },
      ]);
  });

  test('an erasure scrubs what the name and the erased fields were and became; other fields keep theirs', () => {
    const erasedLog = new EventLog();
    const stream = streamName('record', TEST_TENANT, 32);
    const made = erasedLog.record(stream, {
      type: 'RecordCreated',
      data: {
        recordId: 32,
        moduleId: 12,
        spaceId: 7,
        name: 'Ada',
        fields: { email: 'a@x.io', stage: 'lead' },
      },
    });
    const erased = erasedLog.record(stream, {
      type: 'RecordErased',
      data: { recordId: 32, moduleId: 12, spaceId: 7, reason: 'Art. 17', fields: ['email'] },
    });
    const history = projectionSpec(fieldHistoryProjection).given([made]).when(erased);
    history.thenDocuments('field_history', [
      expect.objectContaining({ field: 'name', from: '[erased]', to: '[erased]' }),
      expect.objectContaining({ field: 'fields.email', from: '[erased]', to: '[erased]' }),
      expect.objectContaining({ field: 'fields.stage', from: null, to: 'lead' }),
    ] as unknown as Record<string, unknown>[]);
    projectionSpec(auditProjection)
      .given([made])
      .when(erased)
      .thenDocuments('audit', [
        expect.objectContaining({
          type: 'RecordCreated',
          data: expect.objectContaining({ name: '[erased]', fields: { email: '[erased]', stage: 'lead' } }),
        }),
        expect.objectContaining({
          type: 'RecordErased',
          data: expect.objectContaining({ reason: 'Art. 17' }),
        }),
      ] as unknown as Record<string, unknown>[]);
  });

  test('other record events leave no field history', () => {
    const labelled = log.record(record, { type: 'RecordLabelled', data: { recordId: 31, labelId: 4 } });
    projectionSpec(fieldHistoryProjection).given([created]).when(labelled).thenNothingChanges();
  });
});
