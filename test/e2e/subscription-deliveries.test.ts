import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { Webhook } from 'standardwebhooks';
import { isNonPublicAddress } from '../../infra/outbound/guarded-http';
import { callHost } from '../support/host-call';
import { polling } from '../support/eventually';
import { json, startPlatform, type Entity, type TestPlatform } from '../support/platform';
import { startWebhookReceiver, type Received, type WebhookReceiver } from '../support/webhook-receiver';

jest.setTimeout(90_000);

const eventually = polling(15_000);

/** Outgoing deliveries end to end: a subscriber on loopback, the platform in this process on embedded stores. */
describe('subscription deliveries', () => {
  let platform: TestPlatform;
  let receiver: WebhookReceiver;
  let moduleId: number;
  let otherModuleId: number;
  let path = 0;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    platform = await startPlatform({
      OUTBOUND_ALLOW_PRIVATE: 'true',
      // Two retries a fifth of a second apart: the whole schedule in well under a second.
      DELIVERY_RETRY_DELAYS_MS: '200,200',
      DELIVERY_TIMEOUT_MS: '1500',
      DELIVERY_SUBSCRIPTION_CONCURRENCY: '2',
    });
    const space = await json<Entity>(await platform.call('POST', '/space', { body: { name: 'Shop' } }));
    moduleId = (
      await json<Entity>(
        await platform.call('POST', '/module', { body: { spaceId: space.id, name: 'Orders' } }),
      )
    ).id;
    otherModuleId = (
      await json<Entity>(
        await platform.call('POST', '/module', { body: { spaceId: space.id, name: 'Notes' } }),
      )
    ).id;
    for (const module of [moduleId, otherModuleId])
      expect(
        (
          await platform.call('POST', '/field', {
            body: { moduleId: module, name: 'Status', key: 'status', type: 'text' },
          })
        ).status,
      ).toBe(201);
  });
  afterAll(async () => {
    await platform.stop();
    await receiver.close();
  });

  /** A fresh path on the receiver, so each test reads only its own deliveries. */
  const newPath = () => `/hook-${++path}`;

  async function subscribe(body: Record<string, unknown>): Promise<Entity & { secret: string }> {
    const response = await platform.call('POST', '/subscription', {
      body: { name: 'Test', events: ['record.created', 'record.updated', 'record.deleted'], ...body },
    });
    const answer = await json<Entity & { secret: string }>(response);
    expect({ status: response.status, answer }).toEqual({ status: 201, answer });
    return answer;
  }

  async function createRecord(name: string, fields: Record<string, unknown> = {}, module = moduleId) {
    const response = await platform.call('POST', '/record', { body: { moduleId: module, name, fields } });
    expect(response.status).toBe(201);
    return json<Entity & { position?: string }>(response);
  }

  async function update(recordId: number, fields: Record<string, unknown>) {
    expect((await platform.call('PUT', `/record/${recordId}`, { body: { fields } })).status).toBe(200);
  }

  const events = (received: readonly Received[]) =>
    received.map(
      (request) =>
        JSON.parse(request.body) as {
          id: string;
          type: string;
          system: string;
          position: string;
          data: Record<string, unknown>;
        },
    );

  interface AttemptView {
    eventId: string;
    status: string;
    attempt: number;
    responseStatus: number | null;
    responseBody: string;
    latencyMs: number;
    error: string | null;
    replayId: string | null;
  }

  async function log(
    subscriptionId: number,
    query = '',
  ): Promise<{ items: AttemptView[]; next: string | null }> {
    const response = await platform.call('GET', `/subscription/${subscriptionId}/delivery${query}`);
    expect(response.status).toBe(200);
    return json(response);
  }

  test('record changes arrive signed as Standard Webhooks says, with the extra headers, in order', async () => {
    const at = newPath();
    const subscription = await subscribe({ url: receiver.url(at), headers: { 'X-Team': 'ops' } });
    const record = await createRecord('Order 1', { status: 'open' });
    await update(record.id, { status: 'paid' });
    expect((await platform.call('DELETE', `/record/${record.id}`)).status).toBe(200);
    const received = await receiver.waitFor(at, 3);
    const verifier = new Webhook(subscription.secret);
    for (const request of received) {
      // The library of the receiver's language verifies the signature (and the timestamp's freshness).
      expect(() => verifier.verify(request.body, request.headers)).not.toThrow();
      expect(request.headers['x-team']).toBe('ops');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['webhook-id']).toBe(JSON.parse(request.body).id);
    }
    const delivered = events(received);
    expect(delivered.map((event) => event.type)).toEqual([
      'record.created',
      'record.updated',
      'record.deleted',
    ]);
    expect(delivered[0]).toMatchObject({
      system: 'test',
      data: { recordId: record.id, moduleId, name: 'Order 1', fields: { status: 'open' } },
    });
    expect(delivered[1]!.data).toEqual({
      recordId: record.id,
      changes: [{ field: 'fields.status', from: 'open', to: 'paid' }],
    });
    const positions = delivered.map((event) => BigInt(event.position));
    expect([...positions].sort((a, b) => (a < b ? -1 : 1))).toEqual(positions);
    // A tampered body fails verification.
    expect(() =>
      verifier.verify(received[0]!.body.replace('Order 1', 'Order 2'), received[0]!.headers),
    ).toThrow();
  });

  test('the filter sees the record as it is after the event', async () => {
    const at = newPath();
    await subscribe({ url: receiver.url(at), filter: `moduleId=${moduleId};status=open` });
    const closed = await createRecord('Closed', { status: 'closed' });
    await createRecord('Elsewhere', { status: 'open' }, otherModuleId);
    const open = await createRecord('Open', { status: 'open' });
    await update(closed.id, { status: 'open' });
    await update(open.id, { status: 'closed' });
    const received = await receiver.waitFor(at, 2);
    // Time for anything that should not come to come.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const delivered = events(receiver.received(at));
    // Two records: each in its own order, the two side by side.
    expect(delivered.map((event) => [event.type, event.data.recordId]).sort()).toEqual(
      [
        ['record.created', open.id],
        ['record.updated', closed.id],
      ].sort(),
    );
    expect(received.length).toBe(2);
  });

  test('a failing receiver is retried on the schedule; every attempt is in the log with its answer', async () => {
    const at = newPath();
    let calls = 0;
    receiver.answer(at, () =>
      ++calls <= 2 ? { status: 503, body: 'x'.repeat(5000) } : { status: 200, body: 'thanks' },
    );
    const subscription = await subscribe({ url: receiver.url(at), events: ['record.created'] });
    await createRecord('Retried');
    const received = await receiver.waitFor(at, 3);
    expect(new Set(received.map((request) => request.headers['webhook-id'])).size).toBe(1);
    const attempts = await eventually(
      async () => (await log(subscription.id)).items,
      (items) => items.length === 3,
    );
    expect(attempts.map((attempt) => [attempt.attempt, attempt.status, attempt.responseStatus])).toEqual([
      [3, 'delivered', 200],
      [2, 'retrying', 503],
      [1, 'retrying', 503],
    ]);
    expect(attempts[0]!.responseBody).toBe('thanks');
    // The first kilobyte of a long answer, no more.
    expect(attempts[1]!.responseBody).toBe('x'.repeat(1024));
    expect(attempts[1]!.error).toContain('503');
    const delivered = await log(subscription.id, '?status=delivered&limit=1');
    expect(delivered.items).toHaveLength(1);
    const paged = await log(subscription.id, '?limit=2');
    expect(paged.items).toHaveLength(2);
    expect(paged.next).not.toBeNull();
    const rest = await log(subscription.id, `?limit=2&before=${encodeURIComponent(paged.next!)}`);
    expect(rest.items.map((attempt) => attempt.attempt)).toEqual([1]);
  });

  test('redelivery of one event, and a replay from a position, deliver again with the same webhook-id', async () => {
    const at = newPath();
    const subscription = await subscribe({ url: receiver.url(at), events: ['record.created'] });
    const first = await createRecord('First');
    await createRecord('Second');
    const received = await receiver.waitFor(at, 2);
    const [one, two] = events(received);
    const redelivered = await platform.call(
      'POST',
      `/subscription/${subscription.id}/delivery/${one!.id}/redeliver`,
    );
    expect(redelivered.status).toBe(202);
    const again = await receiver.waitFor(at, 3);
    expect(events(again)[2]!.id).toBe(one!.id);
    const replay = await platform.call('POST', `/subscription/${subscription.id}/replay`, {
      body: { from: one!.position },
    });
    expect(replay.status).toBe(202);
    const { id: replayId } = await json<{ id: string }>(replay);
    const replayed = events(await receiver.waitFor(at, 5)).slice(3);
    // Two records' events: in order within each record, side by side across them.
    expect(replayed.map((event) => event.id).sort()).toEqual([one!.id, two!.id].sort());
    const replays = await eventually(
      async () =>
        json<{ items: Array<{ id: string; status: string; queued: number }> }>(
          await platform.call('GET', `/subscription/${subscription.id}/replay`),
        ),
      (list) => list.items.find((item) => item.id === replayId)?.status === 'finished',
    );
    expect(replays.items.find((item) => item.id === replayId)).toMatchObject({
      status: 'finished',
      queued: 2,
    });
    expect(
      (await log(subscription.id)).items.filter((attempt) => attempt.replayId === replayId),
    ).toHaveLength(2);
    expect(first.id).toBe(one!.data.recordId);
  });

  test('a replay from a time delivers what happened from then on', async () => {
    const at = newPath();
    const subscription = await subscribe({ url: receiver.url(at), events: ['record.created'] });
    await createRecord('Before');
    await receiver.waitFor(at, 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const from = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await createRecord('After');
    await receiver.waitFor(at, 2);
    expect(
      (await platform.call('POST', `/subscription/${subscription.id}/replay`, { body: { from } })).status,
    ).toBe(202);
    const all = events(await receiver.waitFor(at, 3));
    expect(all.map((event) => event.data.name)).toEqual(['Before', 'After', 'After']);
  });

  test('a receiver that keeps failing disables its subscription; enabling it delivers what it missed', async () => {
    const at = newPath();
    receiver.answer(at, { status: 500, body: 'down' });
    const subscription = await subscribe({
      url: receiver.url(at),
      events: ['record.created', 'record.updated'],
    });
    const record = await createRecord('While failing');
    const disabled = await eventually(
      async () => json<Entity>(await platform.call('GET', `/subscription/${subscription.id}`)),
      (read) => read.active === false,
    );
    expect(disabled.active).toBe(false);
    expect(disabled.disabledReason).toMatch(/every delivery failed since .*answered 500/);
    const triedWhileUp = receiver.received(at).length;
    expect(triedWhileUp).toBe(3);
    // Missed while it was off: an update of the held record, and a new record.
    await update(record.id, { status: 'later' });
    const missed = await createRecord('While off');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received(at)).toHaveLength(triedWhileUp);
    receiver.answer(at, { status: 204 });
    expect(
      (await platform.call('PUT', `/subscription/${subscription.id}`, { body: { active: true } })).status,
    ).toBe(200);
    const delivered = events(await receiver.waitFor(at, triedWhileUp + 3)).slice(triedWhileUp);
    const ofRecord = delivered
      .filter((event) => event.data.recordId === record.id)
      .map((event) => event.type);
    expect(ofRecord).toEqual(['record.created', 'record.updated']);
    expect(delivered.some((event) => event.data.recordId === missed.id)).toBe(true);
  });

  test('a receiver that hangs holds only its own subscription: another gets its deliveries at once', async () => {
    const slow = newPath();
    const fast = newPath();
    receiver.answer(slow, 'hang');
    await subscribe({ url: receiver.url(slow), events: ['record.created'] });
    await subscribe({ url: receiver.url(fast), events: ['record.created'] });
    const started = Date.now();
    for (let index = 0; index < 6; index++) await createRecord(`Busy ${index}`);
    await receiver.waitFor(fast, 6, 5_000);
    // Well within one attempt's deadline (1.5 s) of the hanging receiver: nobody waited for it.
    expect(Date.now() - started).toBeLessThan(1_500);
    receiver.answer(slow, { status: 200 });
  });

  test('redirects are not followed: they are failed attempts that say so', async () => {
    const at = newPath();
    receiver.answer(at, { status: 302, headers: { location: receiver.url('/elsewhere') } });
    const subscription = await subscribe({ url: receiver.url(at), events: ['record.created'] });
    await createRecord('Redirected');
    const attempts = await eventually(
      async () => (await log(subscription.id)).items,
      (items) => items.length >= 1,
    );
    expect(attempts.at(-1)).toMatchObject({ responseStatus: 302, status: 'retrying' });
    expect(attempts.at(-1)!.error).toContain('redirect');
    expect(receiver.received('/elsewhere')).toHaveLength(0);
  });

  test('a receiver that answers without end costs one attempt: the first kilobyte is read, the rest is not', async () => {
    const at = newPath();
    receiver.answer(at, 'flood');
    const subscription = await subscribe({ url: receiver.url(at), events: ['record.created'] });
    await createRecord('Flooded');
    const attempts = await eventually(
      async () => (await log(subscription.id)).items,
      (items) => items.length >= 1,
    );
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({
      status: 'delivered',
      responseStatus: 200,
      responseBody: 'y'.repeat(1024),
    });
  });

  test('without OUTBOUND_ALLOW_PRIVATE a name that resolves to a private address is refused at delivery', async () => {
    const name = hostname();
    const addresses = await lookup(name, { all: true }).catch(() => []);
    // The machine's own name resolves to a loopback or private address here (CI's machine is this one).
    expect(addresses.length).toBeGreaterThan(0);
    expect(addresses.every(({ address }) => isNonPublicAddress(address))).toBe(true);
    const guarded = await startPlatform({ DELIVERY_RETRY_DELAYS_MS: '60000' });
    try {
      const at = newPath();
      const url = receiver.url(at).replace('127.0.0.1', name);
      const created = await guarded.call('POST', '/subscription', {
        body: { name: 'Inside', url, events: ['record.created'] },
      });
      // Not a literal private address: accepted when saved, refused by the SSRF guard when it resolves.
      expect(created.status).toBe(201);
      const { id } = await json<Entity>(created);
      const space = await json<Entity>(await guarded.call('POST', '/space', { body: { name: 'S' } }));
      const module = await json<Entity>(
        await guarded.call('POST', '/module', { body: { spaceId: space.id, name: 'M' } }),
      );
      expect(
        (await guarded.call('POST', '/record', { body: { moduleId: module.id, name: 'R' } })).status,
      ).toBe(201);
      const attempts = await eventually(
        async () =>
          (await json<{ items: AttemptView[] }>(await guarded.call('GET', `/subscription/${id}/delivery`)))
            .items,
        (items) => items.length >= 1,
      );
      expect(attempts[0]).toMatchObject({ status: 'retrying', responseStatus: null });
      expect(attempts[0]!.error).toMatch(/^refused-address: .*private or reserved address/);
      expect(receiver.received(at)).toHaveLength(0);
    } finally {
      await guarded.stop();
    }
  });

  test('a subscriber in one system never gets another system’s events', async () => {
    const provisioned = await platform.call('POST', '/system', {
      body: { system: 'acme', adminEmail: 'owner@acme.example' },
    });
    expect(provisioned.status).toBe(201);
    const acmeToken = String((await json(provisioned)).token);
    const acme = (method: string, route: string, body?: unknown) =>
      callHost(platform.url, 'acme.localhost', acmeToken, method, route, body);
    const at = newPath();
    const ours = newPath();
    expect(
      (
        await acme('POST', '/subscription', {
          name: 'Acme',
          url: receiver.url(at),
          events: ['record.created'],
        })
      ).status,
    ).toBe(201);
    await subscribe({ url: receiver.url(ours), events: ['record.created'] });
    const acmeSpace = JSON.parse((await acme('POST', '/space', { name: 'Acme space' })).text) as Entity;
    const acmeModule = JSON.parse(
      (await acme('POST', '/module', { spaceId: acmeSpace.id, name: 'Acme' })).text,
    ) as Entity;
    expect((await acme('POST', '/record', { moduleId: acmeModule.id, name: 'Acme record' })).status).toBe(
      201,
    );
    await createRecord('Test record');
    const theirs = await receiver.waitFor(at, 1);
    const mine = await receiver.waitFor(ours, 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(events(receiver.received(at)).map((event) => [event.system, event.data.name])).toEqual([
      ['acme', 'Acme record'],
    ]);
    expect(events(receiver.received(ours)).map((event) => [event.system, event.data.name])).toEqual([
      ['test', 'Test record'],
    ]);
    expect(theirs.length + mine.length).toBe(2);
  });

  test('a replay from the start finds every kind of change where the log keeps it', async () => {
    const at = newPath();
    const every = [
      'record.created',
      'record.updated',
      'record.deleted',
      'record.restored',
      'record.erased',
      'record.labelled',
      'record.unlabelled',
      'field.created',
      'field.updated',
      'field.deleted',
      'module.created',
      'module.updated',
      'module.deleted',
      'space.created',
      'space.updated',
      'space.deleted',
      'label.created',
      'label.updated',
      'label.deleted',
    ];
    const space = await json<Entity>(await platform.call('POST', '/space', { body: { name: 'Everything' } }));
    await platform.call('PUT', `/space/${space.id}`, { body: { name: 'Everything, renamed' } });
    const module = await json<Entity>(
      await platform.call('POST', '/module', { body: { spaceId: space.id, name: 'All' } }),
    );
    await platform.call('PUT', `/module/${module.id}`, { body: { name: 'All, renamed' } });
    const field = await json<Entity>(
      await platform.call('POST', '/field', {
        body: { moduleId: module.id, name: 'Size', key: 'size', type: 'text' },
      }),
    );
    await platform.call('PUT', `/field/${field.id}`, { body: { name: 'Length' } });
    const label = await json<Entity>(await platform.call('POST', '/label', { body: { name: 'Hot' } }));
    await platform.call('PUT', `/label/${label.id}`, { body: { name: 'Hotter' } });
    const record = await createRecord('Everything', { size: 'L' }, module.id);
    await update(record.id, { size: 'XL' });
    await platform.call('POST', `/record/${record.id}/label/${label.id}`);
    await platform.call('DELETE', `/record/${record.id}/label/${label.id}`);
    await platform.call('DELETE', `/record/${record.id}`);
    await platform.call('POST', `/record/${record.id}/restore`);
    await platform.call('POST', `/record/${record.id}/erase`, { body: { reason: 'every kind' } });
    await platform.call('DELETE', `/field/${field.id}`);
    await platform.call('DELETE', `/label/${label.id}`);
    await platform.call('DELETE', `/record/${record.id}`);
    await platform.call('DELETE', `/module/${module.id}`);
    await platform.call('DELETE', `/space/${space.id}`);
    // Subscribed only now: what it gets is the replay's.
    const subscription = await subscribe({ url: receiver.url(at), events: every });
    expect(
      (await platform.call('POST', `/subscription/${subscription.id}/replay`, { body: { from: '0' } }))
        .status,
    ).toBe(202);
    const types = await eventually(
      async () => new Set(events(receiver.received(at)).map((event) => event.type)),
      (seen) => every.every((type) => seen.has(type)),
    );
    expect([...types].sort()).toEqual([...every].sort());
  });

  test('the log keeps an attempt for three days; the scheduler’s sweep forgets older ones and finished replays', async () => {
    const at = newPath();
    const subscription = await subscribe({ url: receiver.url(at), events: ['record.created'] });
    const record = await createRecord('Kept for a while');
    const [delivered] = events(await receiver.waitFor(at, 1));
    expect(delivered!.data.recordId).toBe(record.id);
    const replayed = await platform.call('POST', `/subscription/${subscription.id}/replay`, {
      body: { from: delivered!.position },
    });
    const { id: replayId } = await json<{ id: string }>(replayed);
    await receiver.waitFor(at, 2);
    const replays = async () =>
      (
        await json<{ items: Array<{ id: string; status: string }> }>(
          await platform.call('GET', `/subscription/${subscription.id}/replay`),
        )
      ).items;
    await eventually(replays, (items) =>
      items.some((item) => item.id === replayId && item.status === 'finished'),
    );
    await eventually(
      async () => (await log(subscription.id)).items,
      (items) => items.length === 2,
    );
    const sweep = (hoursLater: number) =>
      platform.running.services.integratorScheduler!.sweep(new Date(Date.now() + hoursLater * 3_600_000));
    await sweep(71);
    expect((await log(subscription.id)).items).toHaveLength(2);
    expect((await sweep(73)).expiredAttempts).toBeGreaterThanOrEqual(2);
    expect((await log(subscription.id)).items).toEqual([]);
    expect(await replays()).toEqual([]);
  });

  test('bad requests are a 400 or 404 that says what is wrong', async () => {
    const subscription = await subscribe({ url: receiver.url(newPath()) });
    for (const from of ['yesterday', '-1', '1.5', '', 12])
      expect(
        (await platform.call('POST', `/subscription/${subscription.id}/replay`, { body: { from } })).status,
      ).toBe(400);
    const missing = await platform.call(
      'POST',
      `/subscription/${subscription.id}/delivery/00000000-0000-4000-8000-000000000000/redeliver`,
    );
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('delivery log');
    const shouted = await platform.call(
      'POST',
      `/subscription/${subscription.id}/delivery/00000000-0000-4000-8000-00000000000A/redeliver`,
    );
    expect(shouted.status).toBe(400);
    expect((await platform.call('GET', `/subscription/${subscription.id}/delivery?status=lost`)).status).toBe(
      400,
    );
    expect((await platform.call('GET', `/subscription/${subscription.id}/delivery?limit=1000`)).status).toBe(
      400,
    );
    expect((await platform.call('GET', '/subscription/999999/delivery')).status).toBe(404);
    expect((await platform.call('POST', '/subscription/999999/replay', { body: { from: '1' } })).status).toBe(
      404,
    );
  });
});
