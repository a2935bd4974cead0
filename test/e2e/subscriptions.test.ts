import { callHost } from '../support/host-call';
import {
  filesHolding,
  json,
  startPlatform,
  type Entity,
  type Page,
  type TestPlatform,
} from '../support/platform';

jest.setTimeout(60_000);

/** Outgoing subscriptions as a resource, over HTTP: the secret shown once, validation, rights, history. */
describe('subscriptions', () => {
  let platform: TestPlatform;
  let moduleId: number;
  const SECRET = /^whsec_[A-Za-z0-9+/=]{40,}$/;
  const valid = {
    name: 'Open orders',
    url: 'https://receiver.example/hooks',
    events: ['record.created', 'record.updated'],
  };

  beforeAll(async () => {
    platform = await startPlatform();
    const space = await json<Entity>(await platform.call('POST', '/space', { body: { name: 'Shop' } }));
    const module = await json<Entity>(
      await platform.call('POST', '/module', { body: { spaceId: space.id, name: 'Orders' } }),
    );
    moduleId = module.id;
    const field = await platform.call('POST', '/field', {
      body: { moduleId, name: 'Status', key: 'status', type: 'text' },
    });
    expect(field.status).toBe(201);
  });
  afterAll(() => platform.stop());

  async function create(body: Record<string, unknown> = {}): Promise<Entity & { secret: string }> {
    const response = await platform.call('POST', '/subscription', { body: { ...valid, ...body } });
    const answer = await json<Entity & { secret: string }>(response);
    expect({ status: response.status, answer }).toEqual({ status: 201, answer });
    return answer;
  }

  async function refusal(method: string, path: string, body: unknown): Promise<string> {
    const response = await platform.call(method, path, { body });
    const text = await response.text();
    expect({ status: response.status, text }).toEqual({ status: 400, text });
    return text;
  }

  test('a created subscription answers its signing secret once; reads and lists never show it', async () => {
    const created = await create({
      filter: `moduleId=${moduleId};status=open`,
      headers: { 'X-Team': 'ops' },
    });
    expect(created.secret).toMatch(SECRET);
    expect(created).toMatchObject({
      ...valid,
      filter: `moduleId=${moduleId};status=open`,
      headerNames: ['X-Team'],
      active: true,
      disabledReason: null,
      previousSecretExpiresAt: null,
    });
    const read = await platform.call('GET', `/subscription/${created.id}`);
    expect(read.status).toBe(200);
    expect(read.headers.get('etag')).toBeTruthy();
    const body = await read.text();
    expect(body).not.toContain(created.secret.slice(6));
    expect(body).not.toContain('secret"');
    expect(JSON.parse(body)).toMatchObject({ id: created.id, name: 'Open orders', active: true });
    const list = await platform.call('GET', '/subscription');
    expect(await list.text()).not.toContain(created.secret.slice(6));
  });

  test('a repeated create with the same Idempotency-Key answers the same subscription and secret', async () => {
    const call = () =>
      platform.call('POST', '/subscription', { body: valid, headers: { 'Idempotency-Key': 'sub-once' } });
    const first = await json<Entity & { secret: string }>(await call());
    const again = await call();
    expect(again.status).toBe(201);
    expect(await json(again)).toMatchObject({ id: first.id, secret: first.secret });
  });

  test('lists take the list language', async () => {
    const paused = await create({ name: 'Paused one', active: false });
    const page = await json<Page>(await platform.call('GET', '/subscription?filter=active=false'));
    expect(page.items.map((item) => item.id)).toEqual([paused.id]);
    const named = await json<Page>(
      await platform.call('GET', `/subscription?filter=${encodeURIComponent('name~Paused%')}&limit=1`),
    );
    expect(named.items).toHaveLength(1);
    expect((await platform.call('GET', '/subscription?filter=nope=1')).status).toBe(400);
  });

  test('an update changes what it names; active false disables it, true enables it', async () => {
    const created = await create();
    const updated = await platform.call('PUT', `/subscription/${created.id}`, {
      body: { name: 'Renamed', events: ['record.deleted'], active: false },
    });
    expect(updated.status).toBe(200);
    expect(await json(updated)).toMatchObject({
      name: 'Renamed',
      events: ['record.deleted'],
      url: valid.url,
      active: false,
      disabledReason: 'set inactive',
    });
    const enabled = await json(
      await platform.call('PUT', '/subscription', { body: { id: created.id, active: true, filter: '' } }),
    );
    expect(enabled).toMatchObject({ active: true, disabledReason: null, filter: null });
    expect(enabled).not.toHaveProperty('secret');
  });

  test('header values are write-only: sealed in the events and stores, never answered; names show', async () => {
    const API_KEY = 'key-3f9a1c77e2b04d5a';
    const ROTATED_KEY = 'key-8d20b6e1a9c34f71';
    const created = await create({ headers: { 'X-Api-Key': API_KEY, 'X-Team': 'ops' } });
    expect(created).toMatchObject({ headerNames: ['X-Api-Key', 'X-Team'] });
    expect(created).not.toHaveProperty('headers');
    const put = (body: Record<string, unknown>) =>
      platform.call('PUT', `/subscription/${created.id}`, { body });
    // The same headers again change nothing; other values change them, {} removes them.
    expect((await put({ headers: { 'X-Api-Key': API_KEY, 'X-Team': 'ops' } })).status).toBe(200);
    const changed = await put({ headers: { 'X-Api-Key': ROTATED_KEY, 'X-Team': 'ops' } });
    expect(await json(changed)).toMatchObject({ headerNames: ['X-Api-Key', 'X-Team'] });
    const cleared = await put({ headers: {} });
    expect(await json(cleared)).toMatchObject({ headerNames: [] });
    expect((await put({ headers: {} })).status).toBe(200);

    const history = await platform.call('GET', `/subscription/${created.id}/history`);
    const historyText = await history.text();
    const entries = (JSON.parse(historyText) as Page<{ type: string; data: Record<string, unknown> }>).items;
    expect(entries.map((entry) => [entry.type, entry.data])).toEqual([
      ['SubscriptionChanged', { subscriptionId: created.id, headerNames: [] }],
      ['SubscriptionChanged', { subscriptionId: created.id, headerNames: ['X-Api-Key', 'X-Team'] }],
      ['SubscriptionCreated', expect.objectContaining({ headerNames: ['X-Api-Key', 'X-Team'] })],
    ]);
    const answers = [
      JSON.stringify(created),
      historyText,
      await (await platform.call('GET', `/subscription/${created.id}`)).text(),
      await (await platform.call('GET', '/subscription')).text(),
    ];
    for (const key of [API_KEY, ROTATED_KEY]) {
      for (const answer of answers) expect(answer).not.toContain(key);
      // The event store and the read models, raw: the names are there, the values are not.
      expect(filesHolding(platform.dataDir, key)).toEqual([]);
    }
    expect(filesHolding(platform.dataDir, 'X-Api-Key')).not.toEqual([]);
  });

  test('bad input is a 400 that names what is wrong', async () => {
    const unknown = await refusal('POST', '/subscription', {
      ...valid,
      events: ['record.created', 'record.exploded', 'space.renamed'],
    });
    expect(unknown).toContain('record.exploded');
    expect(unknown).toContain('space.renamed');
    expect(await refusal('POST', '/subscription', { ...valid, filter: 'status=(open' })).toMatch(/filter/i);
    expect(await refusal('POST', '/subscription', { ...valid, filter: 'nosuchfield=1' })).toContain(
      'nosuchfield',
    );
    for (const url of [
      'http://127.0.0.1:8080/x',
      'http://localhost/x',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/x',
      'http://10.1.2.3/x',
      'http://192.168.0.10/x',
      'http://[fe80::1]/x',
      'http://metadata.google.internal/x',
      'http://localhost./x',
      'http://2130706433/x',
    ])
      expect(await refusal('POST', '/subscription', { ...valid, url })).toContain('public address');
    expect(await refusal('POST', '/subscription', { ...valid, url: 'ftp://receiver.example/x' })).toContain(
      'http',
    );
    for (const [name, problem] of [
      ['Host', 'hop-by-hop'],
      ['Content-Length', 'hop-by-hop'],
      ['Transfer-Encoding', 'hop-by-hop'],
      ['webhook-signature', 'signature'],
      ['Bad Header', 'letters'],
    ] as const)
      expect(await refusal('POST', '/subscription', { ...valid, headers: { [name]: 'x' } })).toContain(
        problem,
      );
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, index) => [`X-H${index}`, 'v']));
    expect(await refusal('POST', '/subscription', { ...valid, headers: many })).toContain('at most 20');
    expect(
      await refusal('POST', '/subscription', { ...valid, headers: { 'X-Long': 'v'.repeat(1025) } }),
    ).toContain('1024');
    expect(await refusal('POST', '/subscription', { ...valid, name: 'n'.repeat(201) })).toContain('name');
    expect(await refusal('POST', '/subscription', { ...valid, events: [] })).toContain('event type');
    expect(await refusal('POST', '/subscription', { ...valid, secret: 'whsec_mine' })).toContain('secret');
    const created = await create();
    expect(await refusal('PUT', `/subscription/${created.id}`, { url: 'http://127.0.0.2/' })).toContain(
      'public address',
    );
    for (const id of ['01', '+1', '1.0', '0x1'])
      expect((await platform.call('GET', `/subscription/${id}`)).status).toBe(400);
    expect((await platform.call('GET', '/subscription/999999')).status).toBe(404);
  });

  test('rotation answers a new secret once; the read shows until when the previous one signs', async () => {
    const created = await create();
    const before = Date.now();
    const rotated = await platform.call('POST', `/subscription/${created.id}/secret`, {
      body: { overlapMinutes: 60 },
    });
    expect(rotated.status).toBe(200);
    const answer = await json<Entity & { secret: string; previousSecretExpiresAt: string }>(rotated);
    expect(answer.secret).toMatch(SECRET);
    expect(answer.secret).not.toBe(created.secret);
    const expiresIn = Date.parse(answer.previousSecretExpiresAt) - before;
    expect(expiresIn).toBeGreaterThan(59 * 60_000);
    expect(expiresIn).toBeLessThan(61 * 60_000);
    const read = await platform.call('GET', `/subscription/${created.id}`);
    const text = await read.text();
    expect(JSON.parse(text)).toMatchObject({ previousSecretExpiresAt: answer.previousSecretExpiresAt });
    for (const secret of [created.secret, answer.secret]) expect(text).not.toContain(secret.slice(6));
    // Without a body the overlap is a day; beyond a week is refused.
    const daily = await json<{ previousSecretExpiresAt: string }>(
      await platform.call('POST', `/subscription/${created.id}/secret`),
    );
    expect(Date.parse(daily.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23 * 3600_000);
    expect(
      await refusal('POST', `/subscription/${created.id}/secret`, { overlapMinutes: 7 * 24 * 60 + 1 }),
    ).toContain('overlapMinutes');
  });

  test('delete, then history: every change with who made it, no secret, and a 404 for the subscription', async () => {
    const created = await create();
    await platform.call('POST', `/subscription/${created.id}/secret`);
    const deleted = await platform.call('DELETE', `/subscription/${created.id}`);
    expect(deleted.status).toBe(200);
    expect(await json(deleted)).toEqual({ id: created.id, deleted: true });
    expect((await platform.call('GET', `/subscription/${created.id}`)).status).toBe(404);
    expect((await platform.call('DELETE', `/subscription/${created.id}`)).status).toBe(404);
    const history = await platform.call('GET', `/subscription/${created.id}/history`);
    const text = await history.text();
    expect(history.status).toBe(200);
    const page = JSON.parse(text) as Page<Record<string, unknown>>;
    expect(page.items.map((item) => item.type)).toEqual([
      'SubscriptionDeleted',
      'SubscriptionSecretRotated',
      'SubscriptionCreated',
    ]);
    expect(page.items[2]).toMatchObject({ userId: '1', data: { name: valid.name, url: valid.url } });
    expect(text).not.toContain('sealed');
    expect(text).not.toContain(created.secret.slice(6));
    expect((await platform.call('GET', '/subscription/987654/history')).status).toBe(404);
  });

  test('a token without subscription rights is refused; one with them is let in', async () => {
    const subscription = await create();
    const tokenWith = async (permissions: Record<string, string[]>) => {
      const answer = await platform.call('POST', '/auth/1/token', { body: { name: 'narrow', permissions } });
      expect(answer.status).toBe(201);
      return String((await json(answer)).token);
    };
    const records = await tokenWith({ record: ['create', 'read', 'update', 'delete'] });
    const as = (token: string) => ({ headers: { Authorization: `Bearer ${token}` } });
    for (const [method, path, body] of [
      ['GET', '/subscription'],
      ['GET', `/subscription/${subscription.id}`],
      ['GET', `/subscription/${subscription.id}/history`],
      ['POST', '/subscription', valid],
      ['PUT', `/subscription/${subscription.id}`, { name: 'x' }],
      ['POST', `/subscription/${subscription.id}/secret`],
      ['DELETE', `/subscription/${subscription.id}`],
    ] as const) {
      const answer = await platform.call(method, path, { ...as(records), ...(body && { body }) });
      expect({ method, path, status: answer.status }).toEqual({ method, path, status: 403 });
    }
    const readOnly = await tokenWith({ subscription: ['read'] });
    expect((await platform.call('GET', `/subscription/${subscription.id}`, as(readOnly))).status).toBe(200);
    expect(
      (await platform.call('POST', `/subscription/${subscription.id}/secret`, as(readOnly))).status,
    ).toBe(403);
  });

  test("one system never sees another's subscriptions", async () => {
    const mine = await create({ name: 'test-only subscription' });
    const provisioned = await platform.call('POST', '/system', {
      body: { system: 'acme', adminEmail: 'owner@acme.example' },
    });
    expect(provisioned.status).toBe(201);
    const acmeToken = String((await json(provisioned)).token);
    const acme = (method: string, path: string, body?: unknown) =>
      callHost(platform.url, 'acme.localhost', acmeToken, method, path, body);
    for (const [method, path, body] of [
      ['GET', `/subscription/${mine.id}`],
      ['GET', `/subscription/${mine.id}/history`],
      ['PUT', `/subscription/${mine.id}`, { name: 'taken' }],
      ['POST', `/subscription/${mine.id}/secret`],
      ['DELETE', `/subscription/${mine.id}`],
    ] as const) {
      const answer = await acme(method, path, body);
      expect({ method, path, status: answer.status }).toEqual({ method, path, status: 404 });
    }
    const list = await acme('GET', '/subscription');
    expect(JSON.parse(list.text)).toMatchObject({ items: [], meta: { total: 0 } });
    expect(list.text).not.toContain('test-only');
  });
});

describe('subscription settings of the deployment', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startPlatform({ SUBSCRIPTIONS_PER_SYSTEM: '2', OUTBOUND_ALLOW_PRIVATE: 'true' });
  });
  afterAll(() => platform.stop());

  test('OUTBOUND_ALLOW_PRIVATE lets a URL name a private address; SUBSCRIPTIONS_PER_SYSTEM caps a system', async () => {
    const body = { name: 'Local', url: 'http://127.0.0.1:9999/hooks', events: ['label.created'] };
    for (let n = 0; n < 2; n++)
      expect((await platform.call('POST', '/subscription', { body })).status).toBe(201);
    const third = await platform.call('POST', '/subscription', { body });
    expect(third.status).toBe(409);
    expect(await third.text()).toContain('SUBSCRIPTIONS_PER_SYSTEM');
    // A repeat of a create that reached the cap answers as the first time, secret included.
    expect((await platform.call('DELETE', '/subscription/2')).status).toBe(200);
    const keyed = () =>
      platform.call('POST', '/subscription', { body, headers: { 'Idempotency-Key': 'at-the-cap' } });
    const first = await keyed();
    expect(first.status).toBe(201);
    const repeated = await keyed();
    expect(repeated.status).toBe(201);
    expect(await repeated.json()).toEqual(await first.json());
    expect((await platform.call('POST', '/subscription', { body })).status).toBe(409);
    // A deleted one makes room again.
    expect((await platform.call('DELETE', '/subscription/1')).status).toBe(200);
    expect((await platform.call('POST', '/subscription', { body })).status).toBe(201);
    expect((await platform.call('POST', '/subscription', { body })).status).toBe(409);
  });
});
