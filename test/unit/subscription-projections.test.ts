import { streamName } from '../../contracts/streams';
import { READ_MODELS } from '../../contracts/read-models';
import { auditProjection } from '../../projections/read-models/history';
import { subscriptionsProjection } from '../../projections/read-models/subscriptions';
import { projectEvent } from '../../projections/projection';
import { EventLog, TEST_TENANT } from '../support/given-when-then';

const SEALED = 'v1.aXY.dGFn.Y2lwaGVy';
const SEALED_NEXT = 'v1.aXYy.dGFnMg.Y2lwaGVyMg';
const SEALED_HEADERS = 'v1.aGRy.dGFn.aGVhZGVycw';
const SEALED_OTHER_HEADERS = 'v1.aGRyMg.dGFnMg.aGVhZGVyczI';
const log = new EventLog();
const stream = streamName('subscription', TEST_TENANT, 5);
const created = log.record(stream, {
  type: 'SubscriptionCreated',
  data: {
    subscriptionId: 5,
    name: 'Orders',
    url: 'https://receiver.example/hooks',
    events: ['record.created'],
    filter: null,
    headerNames: ['X-Api-Key'],
    sealedHeaders: SEALED_HEADERS,
    active: true,
    sealedSecret: SEALED,
    createdAt: '2030-01-01T00:00:00.000Z',
  },
});
const rotated = log.record(stream, {
  type: 'SubscriptionSecretRotated',
  data: {
    subscriptionId: 5,
    sealedSecret: SEALED_NEXT,
    previousSealedSecret: SEALED,
    previousExpiresAt: '2030-01-02T00:00:00.000Z',
  },
});
const headersChanged = log.record(stream, {
  type: 'SubscriptionChanged',
  data: { subscriptionId: 5, headerNames: ['X-Api-Key', 'X-Team'], sealedHeaders: SEALED_OTHER_HEADERS },
});
const disabled = log.record(stream, {
  type: 'SubscriptionDisabled',
  data: { subscriptionId: 5, reason: 'receiver gone' },
});
const identity = (base: string) => base;
/** The text of read-model changes (positions are bigints, which JSON does not know). */
const textOf = (value: unknown): string =>
  JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? item.toString() : item));

test('the subscriptions read model keeps no secret, sealed or not; the previous one shows only as its expiry', () => {
  const changes = [created, rotated, headersChanged, disabled].flatMap((event) =>
    projectEvent(subscriptionsProjection, event, identity),
  );
  expect(textOf(changes)).not.toContain('v1.');
  expect(textOf(changes)).not.toContain('sealed');
  expect(changes[0]).toMatchObject({
    op: 'upsert',
    collection: READ_MODELS.subscriptions,
    doc: {
      subscriptionId: 5,
      name: 'Orders',
      headerNames: ['X-Api-Key'],
      active: true,
      previousSecretExpiresAt: null,
    },
  });
  expect(changes[1]).toMatchObject({ set: { previousSecretExpiresAt: '2030-01-02T00:00:00.000Z' } });
  expect(changes[2]).toMatchObject({ set: { headerNames: ['X-Api-Key', 'X-Team'] } });
  expect(changes[3]).toMatchObject({ set: { active: false, disabledReason: 'receiver gone' } });
});

test("the audit trail shows a subscription's changes without its sealed secrets", () => {
  const [createdEntry] = projectEvent(auditProjection, created, identity);
  const [rotatedEntry] = projectEvent(auditProjection, rotated, identity);
  const [headersEntry] = projectEvent(auditProjection, headersChanged, identity);
  expect(createdEntry).toMatchObject({
    doc: { category: 'subscription', data: { name: 'Orders', headerNames: ['X-Api-Key'] } },
  });
  expect(rotatedEntry).toMatchObject({
    doc: { type: 'SubscriptionSecretRotated', data: { previousExpiresAt: '2030-01-02T00:00:00.000Z' } },
  });
  expect(headersEntry).toMatchObject({
    doc: { data: { subscriptionId: 5, headerNames: ['X-Api-Key', 'X-Team'] } },
  });
  expect(textOf([createdEntry, rotatedEntry, headersEntry])).not.toContain('v1.');
  expect(textOf([createdEntry, rotatedEntry, headersEntry])).not.toContain('sealed');
});
