import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { randomBytes } from 'node:crypto';
import { headersOf, newSigningSecret, sealHeaders } from '../../command-api/subscriptions/commands';
import {
  subscriptionDecider,
  TURNED_OFF_BY_UPDATE,
} from '../../command-api/subscriptions/domain/subscription';
import type { SubscriptionEvent } from '../../contracts/events/subscriptions';
import { PUBLIC_EVENT_TYPE_NAMES } from '../../contracts/public-events';
import {
  FORBIDDEN_SUBSCRIPTION_HEADERS,
  MAX_SUBSCRIPTION_HEADERS,
  subscriptionEventsSchema,
  subscriptionHeadersSchema,
} from '../../contracts/subscriptions';
import { createSealer } from '../../infra/secrets/sealer';
import { deciderSpec } from '../support/given-when-then';

const SEALED = 'v1.aXY.dGFn.Y2lwaGVy';
const SEALED_NEXT = 'v1.aXYy.dGFnMg.Y2lwaGVyMg';
const NOW = new Date('2026-11-27T12:00:00.000Z');
const settings = {
  name: 'Open orders',
  url: 'https://receiver.example/hooks',
  events: ['record.created'],
  filter: 'moduleId=7',
  headerNames: ['X-Team'],
  sealedHeaders: 'v1.aGRy.dGFn.b3Bz',
};
const SEALED_OTHER_HEADERS = 'v1.aGRyMg.dGFnMg.b3BzMg';

describe('subscription decider', () => {
  const spec = deciderSpec(subscriptionDecider);
  const created: SubscriptionEvent = {
    type: 'SubscriptionCreated',
    data: {
      subscriptionId: 3,
      ...settings,
      active: true,
      sealedSecret: SEALED,
      createdAt: NOW.toISOString(),
    },
  };
  const disabled: SubscriptionEvent = {
    type: 'SubscriptionDisabled',
    data: { subscriptionId: 3, reason: 'receiver failing for 3 days' },
  };

  test('create: the sealed secret and the settings, once', () => {
    const state = spec
      .given([])
      .when({
        kind: 'CreateSubscription',
        subscriptionId: 3,
        settings,
        active: true,
        sealedSecret: SEALED,
        now: NOW,
      })
      .then([created]);
    expect(state).toMatchObject({ status: 'live', active: true, sealedSecret: SEALED, settings });
    spec
      .given([created])
      .when({
        kind: 'CreateSubscription',
        subscriptionId: 3,
        settings,
        active: true,
        sealedSecret: SEALED,
        now: NOW,
      })
      .thenThrows('conflict');
  });

  test('update: only what changed; active turns into enabled / disabled', () => {
    spec
      .given([created])
      .when({ kind: 'UpdateSubscription', settings: { name: 'Renamed', url: settings.url } })
      .then([{ type: 'SubscriptionChanged', data: { subscriptionId: 3, name: 'Renamed' } }]);
    spec
      .given([created])
      .when({ kind: 'UpdateSubscription', settings: { events: ['record.created'] }, active: true })
      .thenNothingHappens();
    const state = spec
      .given([created])
      .when({ kind: 'UpdateSubscription', settings: { filter: null }, active: false })
      .then([
        { type: 'SubscriptionChanged', data: { subscriptionId: 3, filter: null } },
        { type: 'SubscriptionDisabled', data: { subscriptionId: 3, reason: TURNED_OFF_BY_UPDATE } },
      ]);
    expect(state.settings.filter).toBeNull();
    spec
      .given([created, disabled])
      .when({ kind: 'UpdateSubscription', settings: {}, active: true })
      .then([{ type: 'SubscriptionEnabled', data: { subscriptionId: 3 } }]);
  });

  test('headers: a different sealed map changes names and map together; clearing removes both', () => {
    const state = spec
      .given([created])
      .when({
        kind: 'UpdateSubscription',
        settings: {},
        headers: { headerNames: ['X-Team'], sealedHeaders: SEALED_OTHER_HEADERS },
      })
      .then([
        {
          type: 'SubscriptionChanged',
          data: { subscriptionId: 3, headerNames: ['X-Team'], sealedHeaders: SEALED_OTHER_HEADERS },
        },
      ]);
    expect(state.settings).toMatchObject({ headerNames: ['X-Team'], sealedHeaders: SEALED_OTHER_HEADERS });
    const cleared = spec
      .given([created])
      .when({ kind: 'UpdateSubscription', settings: {}, headers: { headerNames: [], sealedHeaders: null } })
      .then([
        { type: 'SubscriptionChanged', data: { subscriptionId: 3, headerNames: [], sealedHeaders: null } },
      ]);
    expect(cleared.settings).toMatchObject({ headerNames: [], sealedHeaders: null });
    // No headers in the command (the caller found them equal), or the very sealed text: nothing changes.
    spec.given([created]).when({ kind: 'UpdateSubscription', settings: {} }).thenNothingHappens();
    spec
      .given([created])
      .when({
        kind: 'UpdateSubscription',
        settings: {},
        headers: { headerNames: settings.headerNames, sealedHeaders: settings.sealedHeaders },
      })
      .thenNothingHappens();
  });

  test('rotation keeps the previous secret (sealed) signing until the overlap ends', () => {
    const state = spec
      .given([created])
      .when({ kind: 'RotateSubscriptionSecret', sealedSecret: SEALED_NEXT, overlapMinutes: 90, now: NOW })
      .then([
        {
          type: 'SubscriptionSecretRotated',
          data: {
            subscriptionId: 3,
            sealedSecret: SEALED_NEXT,
            previousSealedSecret: SEALED,
            previousExpiresAt: '2026-11-27T13:30:00.000Z',
          },
        },
      ]);
    expect(state).toMatchObject({
      sealedSecret: SEALED_NEXT,
      previousSealedSecret: SEALED,
      previousExpiresAt: '2026-11-27T13:30:00.000Z',
    });
  });

  test('disable with a reason, enable; repeats change nothing', () => {
    const state = spec
      .given([created])
      .when({ kind: 'DisableSubscription', reason: 'receiver failing for 3 days' })
      .then([disabled]);
    expect(state).toMatchObject({ active: false, disabledReason: 'receiver failing for 3 days' });
    spec
      .given([created, disabled])
      .when({ kind: 'DisableSubscription', reason: 'receiver failing for 3 days' })
      .thenNothingHappens();
    spec.given([created]).when({ kind: 'EnableSubscription' }).thenNothingHappens();
    const enabled = spec
      .given([created, disabled])
      .when({ kind: 'EnableSubscription' })
      .then([{ type: 'SubscriptionEnabled', data: { subscriptionId: 3 } }]);
    expect(enabled).toMatchObject({ active: true, disabledReason: null });
  });

  test('a replay asked for is an event of its range; it changes nothing of the subscription', () => {
    const replayId = '0b7c8a52-3f41-4a8e-9d2c-1f5e6a7b8c9d';
    const state = spec
      .given([created])
      .when({ kind: 'RequestReplay', replayId, after: 41n, until: null, eventId: null })
      .then([
        {
          type: 'SubscriptionReplayRequested',
          data: { subscriptionId: 3, replayId, after: '41', until: null, eventId: null },
        },
      ]);
    expect(state).toMatchObject({ active: true, settings });
    // A redelivery names its one event, and a disabled subscription may be replayed (it waits to be enabled).
    spec
      .given([created, disabled])
      .when({ kind: 'RequestReplay', replayId, after: 9n, until: 10n, eventId: replayId })
      .then([
        {
          type: 'SubscriptionReplayRequested',
          data: { subscriptionId: 3, replayId, after: '9', until: '10', eventId: replayId },
        },
      ]);
    spec
      .given([])
      .when({ kind: 'RequestReplay', replayId, after: 0n, until: null, eventId: null })
      .thenThrows('not_found');
  });

  test('a deleted or unknown subscription is not found', () => {
    const deleted: SubscriptionEvent = { type: 'SubscriptionDeleted', data: { subscriptionId: 3 } };
    spec.given([created]).when({ kind: 'DeleteSubscription' }).then([deleted]);
    for (const history of [[], [created, deleted]])
      for (const command of [
        { kind: 'DeleteSubscription' },
        { kind: 'EnableSubscription' },
        { kind: 'UpdateSubscription', settings: { name: 'x' } },
      ] as const)
        spec.given(history).when(command).thenThrows('not_found');
  });
});

describe('subscription settings validation', () => {
  const known = fc.constantFrom(...PUBLIC_EVENT_TYPE_NAMES);
  const unknownType = fc
    .stringMatching(/^[a-z]{1,10}\.[a-z_]{1,12}$/)
    .filter((type) => !(PUBLIC_EVENT_TYPE_NAMES as readonly string[]).includes(type));

  test('events: catalogue names pass; every unknown one is named in the refusal', () => {
    fc.assert(
      fc.property(fc.uniqueArray(known, { minLength: 1 }), (types) => {
        expect(subscriptionEventsSchema.safeParse(types).success).toBe(true);
      }),
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(known, { maxLength: 5 }),
        fc.uniqueArray(unknownType, { minLength: 1, maxLength: 5 }),
        (good, bad) => {
          const result = subscriptionEventsSchema.safeParse([...good, ...bad]);
          expect(result.success).toBe(false);
          const message = result.error!.issues.map((issue) => issue.message).join('; ');
          for (const type of bad) expect(message).toContain(type);
        },
      ),
    );
  });

  const headerName = fc.stringMatching(/^X-[A-Za-z0-9_-]{1,20}$/);
  const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,100}$/);

  test('headers: up to the cap of plain names pass; forbidden names, control characters and too many are refused', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(headerName, {
          maxLength: MAX_SUBSCRIPTION_HEADERS,
          comparator: (a, b) => a.toLowerCase() === b.toLowerCase(),
        }),
        headerValue,
        (names, value) => {
          const headers = Object.fromEntries(names.map((name) => [name, value]));
          expect(subscriptionHeadersSchema.safeParse(headers).success).toBe(true);
        },
      ),
    );
    const forbidden = fc.oneof(
      fc.constantFrom(...FORBIDDEN_SUBSCRIPTION_HEADERS),
      headerName.map((name) => `webhook-${name.slice(2)}`),
    );
    fc.assert(
      fc.property(forbidden, fc.boolean(), (name, upper) => {
        const shown = upper ? name.toUpperCase() : name;
        const result = subscriptionHeadersSchema.safeParse({ [shown]: 'x' });
        expect(result.success).toBe(false);
        expect(result.error!.issues[0]!.message).toContain(shown);
      }),
    );
    fc.assert(
      fc.property(headerName, fc.constantFrom('\r', '\n', '\0'), (name, control) => {
        expect(subscriptionHeadersSchema.safeParse({ [name]: `a${control}b` }).success).toBe(false);
      }),
    );
    const tooMany = Object.fromEntries(
      Array.from({ length: MAX_SUBSCRIPTION_HEADERS + 1 }, (_, index) => [`X-H${index}`, 'v']),
    );
    expect(subscriptionHeadersSchema.safeParse(tooMany).success).toBe(false);
  });
});

test('a new signing secret is one the Standard Webhooks library signs and verifies with', () => {
  const secret = newSigningSecret();
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  expect(newSigningSecret()).not.toBe(secret);
  const payload = JSON.stringify({ type: 'record.created', data: { id: 1 } });
  const timestamp = new Date();
  const signature = new Webhook(secret).sign('msg_1', timestamp, payload);
  const headers = {
    'webhook-id': 'msg_1',
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': signature,
  };
  expect(new Webhook(secret).verify(payload, headers)).toEqual(JSON.parse(payload));
  expect(() => new Webhook(newSigningSecret()).verify(payload, headers)).toThrow();
});

test('headers are sealed whole, names apart; headersOf opens them for the delivery', () => {
  const sealer = createSealer(randomBytes(32));
  // A value with a space: the sealed text (base64url) can never hold it by chance, as it once held "ops".
  const headers = { 'X-Api-Key': 'key-3f9a1c77e2b04d5a', 'X-Team': 'on-call ops' };
  const sealed = sealHeaders(sealer, headers);
  expect(sealed.headerNames).toEqual(['X-Api-Key', 'X-Team']);
  expect(sealed.sealedHeaders).toMatch(/^v1\./);
  expect(JSON.stringify(sealed)).not.toContain('key-3f9a1c77e2b04d5a');
  expect(JSON.stringify(sealed)).not.toContain('on-call ops');
  expect(headersOf(sealer, { settings: { ...settings, ...sealed } })).toEqual(headers);
  expect(sealHeaders(sealer, {})).toEqual({ headerNames: [], sealedHeaders: null });
  expect(headersOf(sealer, { settings: { ...settings, headerNames: [], sealedHeaders: null } })).toEqual({});
  // Another platform key cannot open them.
  expect(() => headersOf(createSealer(randomBytes(32)), { settings: { ...settings, ...sealed } })).toThrow();
});
