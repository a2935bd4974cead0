import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { newSigningSecret } from '../../command-api/subscriptions/commands';
import type { SubscriptionState } from '../../command-api/subscriptions/domain/subscription';
import type { DeliveryStore, NewDelivery, SubscriptionRef } from '../../infra/deliveries/port';
import { createSqliteDeliveryStore } from '../../infra/deliveries/sqlite';
import { createLogger } from '../../infra/logging';
import type { OutboundHttp, OutboundRequest, OutboundResponse } from '../../infra/outbound/port';
import { isSealedValue } from '../../infra/secrets/personal-values';
import { createSealer } from '../../infra/secrets/sealer';
import { Deliverer, revealedPayload, type DelivererOptions } from '../../integrator/deliveries/deliverer';
import { personalDataStore } from '../support/personal-data';
import type { DirectoryEntry } from '../../integrator/deliveries/subscription-directory';
import { polling } from '../support/eventually';

const eventually = polling(5_000, 10);
const sealer = createSealer(randomBytes(32));

/** What the receivers got, and how each answers: its status after its delay. */
interface Receivers extends OutboundHttp {
  readonly calls: OutboundRequest[];
  readonly answered: Array<{ url: string; at: number }>;
  answer(url: string, status: number, delayMs?: number): void;
  /** The most calls to `url` that were under way at once. */
  mostAtOnce(url: string): number;
}

function receivers(): Receivers {
  const answers = new Map<string, { status: number; delayMs: number }>();
  const calls: OutboundRequest[] = [];
  const answered: Array<{ url: string; at: number }> = [];
  const underWay = new Map<string, number>();
  const most = new Map<string, number>();
  const request = async (call: OutboundRequest): Promise<OutboundResponse> => {
    calls.push(call);
    const now = (underWay.get(call.url) ?? 0) + 1;
    underWay.set(call.url, now);
    most.set(call.url, Math.max(now, most.get(call.url) ?? 0));
    const { status, delayMs } = answers.get(call.url) ?? { status: 200, delayMs: 0 };
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    answered.push({ url: call.url, at: Date.now() });
    underWay.set(call.url, underWay.get(call.url)! - 1);
    const raw = Buffer.from(`answer ${status}`);
    return { status, body: raw.toString(), raw, truncated: false, headers: {}, durationMs: delayMs };
  };
  return {
    calls,
    answered,
    answer: (url, status, delayMs = 0) => void answers.set(url, { status, delayMs }),
    mostAtOnce: (url) => most.get(url) ?? 0,
    request,
    postJson: (url, body) => request({ method: 'POST', url, body: JSON.stringify(body) }),
  };
}

function entry(
  tenant: string,
  subscriptionId: number,
  secret: string,
  extra: Partial<SubscriptionState> = {},
) {
  const state: SubscriptionState = {
    status: 'live',
    subscriptionId,
    settings: {
      name: 'Test',
      url: `https://${tenant}.example/${subscriptionId}`,
      events: ['record.created'],
      filter: null,
      headerNames: [],
      sealedHeaders: null,
    },
    active: true,
    disabledReason: null,
    sealedSecret: sealer.seal(secret),
    previousSealedSecret: null,
    previousExpiresAt: null,
    ...extra,
  };
  return { tenant, state, createdAt: 0n, disabledAt: null } satisfies DirectoryEntry;
}

let position = 0n;
function delivery(ref: SubscriptionRef, orderKey: string): NewDelivery {
  position += 1n;
  const eventId = `00000000-0000-4000-8000-${String(position).padStart(12, '0')}`;
  return {
    ...ref,
    orderKey,
    eventId,
    eventType: 'record.created',
    position,
    origin: 'live',
    payload: JSON.stringify({ id: eventId, type: 'record.created', data: { recordId: Number(position) } }),
    dueAt: 0,
  };
}

/** Where the deliverer opens payloads' personal values: the platform's sealing store (none are sealed in most tests). */
const personal = personalDataStore();

describe('the deliverer', () => {
  let store: DeliveryStore;
  let deliverer: Deliverer | undefined;
  const disabled: Array<{ ref: SubscriptionRef; reason: string }> = [];

  beforeEach(() => {
    store = createSqliteDeliveryStore({ path: ':memory:' });
    disabled.length = 0;
  });
  afterEach(async () => {
    await deliverer?.stop();
    await store.close();
  });

  function start(entries: DirectoryEntry[], outbound: Receivers, options: Partial<DelivererOptions> = {}) {
    deliverer = new Deliverer({
      store,
      directory: {
        get: (tenant, id) => entries.find((one) => one.tenant === tenant && one.state.subscriptionId === id),
      },
      outbound,
      sealer,
      logger: createLogger('silent'),
      holder: 'test',
      slots: 4,
      tenantSlots: 2,
      subscriptionSlots: 2,
      timeoutMs: 1_000,
      pollMs: 50,
      disable: async (ref, reason) => void disabled.push({ ref, reason }),
      revealPayload: (payload, tenant) =>
        revealedPayload(payload, tenant, (data, subject) => personal.revealData(data, subject)),
      ...options,
    });
    return deliverer.start();
  }

  test('each delivery is signed for its subscription’s secret, with both secrets while a rotation overlaps', async () => {
    const current = newSigningSecret();
    const previous = newSigningSecret();
    const outbound = receivers();
    const rotated = entry('acme', 1, current, {
      previousSealedSecret: sealer.seal(previous),
      previousExpiresAt: new Date(Date.now() + 60_000).toISOString(),
    });
    const ref = { tenant: 'acme', subscriptionId: 1 };
    await store.enqueue([delivery(ref, 'record-acme.1')]);
    await start([rotated], outbound);
    await eventually(
      () => Promise.resolve(outbound.calls.length),
      (count) => count === 1,
    );
    const [call] = outbound.calls;
    const headers = call!.headers!;
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secret of [current, previous])
      expect(() => new Webhook(secret).verify(String(call!.body), headers)).not.toThrow();
    expect(call!.maxBytes).toBe(1024);
    expect(call!.timeoutMs).toBe(1_000);
  });

  test('a payload is queued with its personal values sealed, sent opened, and erased once its record was', async () => {
    const outbound = receivers();
    const ref = { tenant: 'acme', subscriptionId: 1 };
    // The record's event as the log stores it (name and email sealed under record 41's key).
    await personal.append('record-acme.41', [
      {
        id: '00000000-0000-4000-8000-0000000000a1',
        type: 'RecordCreated',
        schemaVersion: 1,
        data: { recordId: 41, moduleId: 1, spaceId: 1, name: 'Ada', fields: { email: 'ada@x.io', n: 3 } },
        metadata: {
          tenant: 'acme',
          actor: { userId: '1' },
          correlationId: 'c',
          causationId: 'c',
          commandId: 'c',
          occurredAt: new Date().toISOString(),
        },
        sealing: { subject: 'record:acme:41', paths: [['name'], ['fields', 'email']] },
      },
    ]);
    let sealedData: { name: string; fields: { email: string; n: number } } | undefined;
    for await (const stored of personal.sealed.readStream('record-acme.41'))
      sealedData = stored.data as typeof sealedData;
    if (!sealedData) throw new Error('the event was not stored');
    // Sealed (a name of three letters could turn up in any ciphertext by chance: its shape is what is checked).
    expect(isSealedValue(sealedData.name)).toBe(true);
    const sealed = sealedData;
    const queued = (position: bigint, eventId: string): NewDelivery => ({
      ...ref,
      orderKey: 'record-acme.41',
      eventId,
      eventType: 'record.created',
      position,
      origin: 'live',
      payload: JSON.stringify({ id: eventId, type: 'record.created', data: { recordId: 41, ...sealed } }),
      dueAt: 0,
    });
    await store.enqueue([queued(1_000n, '00000000-0000-4000-8000-0000000000b1')]);
    await start([entry('acme', 1, newSigningSecret())], outbound);
    await eventually(
      () => Promise.resolve(outbound.calls.length),
      (count) => count === 1,
    );
    expect(JSON.parse(String(outbound.calls[0]!.body))).toMatchObject({
      data: { recordId: 41, name: 'Ada', fields: { email: 'ada@x.io', n: 3 } },
    });
    await personal.erase('record:acme:41', Date.now());
    await store.enqueue([queued(1_001n, '00000000-0000-4000-8000-0000000000b2')]);
    deliverer!.notify(ref);
    await eventually(
      () => Promise.resolve(outbound.calls.length),
      (count) => count === 2,
    );
    expect(JSON.parse(String(outbound.calls[1]!.body))).toMatchObject({
      data: { recordId: 41, name: '[erased]', fields: { email: '[erased]', n: 3 } },
    });
  });

  test('a system with a long queue to a slow receiver does not hold back another system', async () => {
    const outbound = receivers();
    const busy = entry('busy', 1, newSigningSecret());
    const quiet = entry('quiet', 1, newSigningSecret());
    outbound.answer(busy.state.settings.url, 200, 100);
    const busyRef = { tenant: 'busy', subscriptionId: 1 };
    await store.enqueue(Array.from({ length: 40 }, (_, index) => delivery(busyRef, `record-busy.${index}`)));
    await start([busy, quiet], outbound);
    const started = Date.now();
    await store.enqueue([delivery({ tenant: 'quiet', subscriptionId: 1 }, 'record-quiet.1')]);
    deliverer!.notify({ tenant: 'quiet', subscriptionId: 1 });
    const quietAnswered = await eventually(
      () => Promise.resolve(outbound.answered.find((one) => one.url === quiet.state.settings.url)),
      (found) => found !== undefined,
    );
    // The busy system holds its two slots; the quiet one goes at once, long before the busy queue is worked off
    // (40 deliveries, two at a time, a tenth of a second each: two seconds).
    expect(quietAnswered!.at - started).toBeLessThan(500);
    expect(outbound.answered.filter((one) => one.url === busy.state.settings.url).length).toBeLessThan(20);
    // And the busy one never had more than its system's slots going at once.
    await eventually(
      () => store.queuedCount(busyRef),
      (count) => count === 0,
    );
    expect(outbound.mostAtOnce(busy.state.settings.url)).toBe(2);
  });

  test('failures are retried on the schedule; the last failure of a receiver that never answered disables it', async () => {
    const outbound = receivers();
    const failing = entry('acme', 7, newSigningSecret());
    outbound.answer(failing.state.settings.url, 503);
    const ref = { tenant: 'acme', subscriptionId: 7 };
    await store.enqueue([delivery(ref, 'record-acme.7')]);
    await start([failing], outbound, { schedule: [20, 20] });
    await eventually(
      () => Promise.resolve(disabled.length),
      (count) => count === 1,
    );
    expect(outbound.calls).toHaveLength(3);
    expect(disabled[0]!.ref).toEqual(ref);
    expect(disabled[0]!.reason).toMatch(
      /^every delivery failed since .* \(3 attempts\); the last: answered 503$/,
    );
    const { attempts } = await store.attempts({ ...ref, limit: 10 });
    expect(attempts.map((attempt) => [attempt.attempt, attempt.status])).toEqual([
      [3, 'retrying'],
      [2, 'retrying'],
      [1, 'retrying'],
    ]);
    expect(attempts[0]!.error).toContain('the subscription was disabled');
    // It stays queued for when the subscription is enabled.
    expect(await store.queuedCount(ref)).toBe(1);
  });

  test('a receiver that answers again has the waiting retries made at once', async () => {
    const outbound = receivers();
    const flaky = entry('acme', 8, newSigningSecret());
    outbound.answer(flaky.state.settings.url, 500);
    const ref = { tenant: 'acme', subscriptionId: 8 };
    await store.enqueue([delivery(ref, 'record-acme.a'), delivery(ref, 'record-acme.b')]);
    // The first retry is a minute away: only a receiver's return can bring it forward.
    await start([flaky], outbound, { schedule: [60_000, 60_000] });
    await eventually(
      () => Promise.resolve(outbound.calls.length),
      (count) => count === 2,
    );
    outbound.answer(flaky.state.settings.url, 200);
    await store.enqueue([delivery(ref, 'record-acme.c')]);
    deliverer!.notify(ref);
    await eventually(
      () => store.queuedCount(ref),
      (count) => count === 0,
    );
    expect(outbound.calls).toHaveLength(5);
  });
});
