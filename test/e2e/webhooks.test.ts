import { json, startPlatform, type Entity, type Page, type TestPlatform } from '../support/platform';

/** Webhooks end to end over HTTP: management API, receiver, scenario runs, queue and logs. */
describe('incoming webhooks', () => {
  let platform: TestPlatform;
  let moduleId: number;

  beforeAll(async () => {
    platform = await startPlatform();
    const space = await json<Entity>(await platform.call('POST', '/space', { body: { name: 'Shop' } }));
    const module = await json<Entity>(
      await platform.call('POST', '/module', { body: { spaceId: space.id, name: 'Orders' } }),
    );
    moduleId = module.id;
  });
  afterAll(() => platform.stop());

  async function createHook(
    body: Record<string, unknown> = {},
  ): Promise<Entity & { url: string; key: string }> {
    const response = await platform.call('POST', '/webhook', { body: { name: 'Orders', ...body } });
    expect(response.status).toBe(201);
    return json(response);
  }

  function send(key: string, init: RequestInit & { query?: string } = {}): Promise<Response> {
    return fetch(`${platform.url}/hook/${key}${init.query ?? ''}`, init);
  }

  async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 10_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await read();
      if (done(value) || Date.now() > deadline) return value;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  test('a hook gets a 32-character address that the platform serves', async () => {
    const hook = await createHook();
    expect(hook.key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(hook.url).toMatch(new RegExp(`/hook/${hook.key}$`));
    expect(hook).toMatchObject({ status: 'enabled', scenarioId: null, maxResults: 2, queueCapacity: 10_000 });
    const read = await json<Entity>(await platform.call('GET', `/webhook/${hook.id}`));
    expect(read).toMatchObject({ id: hook.id, key: hook.key, name: 'Orders' });
  });

  test('without a scenario a request is accepted into the queue and logged', async () => {
    const hook = await createHook();
    const answer = await send(hook.key, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ order: 'A-1', total: 10 }),
      query: '?order=Q-1',
    });
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('Accepted');
    const queue = await json<Page<Record<string, unknown>> & { capacity: number }>(
      await platform.call('GET', `/webhook/${hook.id}/queue`),
    );
    expect(queue.meta.total).toBe(1);
    expect(queue.capacity).toBe(10_000);
    const logs = await json<Page<Record<string, unknown>>>(
      await platform.call('GET', `/webhook/${hook.id}/log`),
    );
    expect(logs.items).toHaveLength(1);
    expect(logs.items[0]).toMatchObject({ status: 'success', method: 'POST', responseStatus: 200 });
    const detail = await json<Record<string, unknown>>(
      await platform.call('GET', `/webhook/${hook.id}/log/${String(logs.items[0]!.id)}`),
    );
    // The query string wins over the body on a duplicate key.
    expect(detail.bundle).toEqual({ order: 'Q-1', total: 10 });
    expect(detail.request).toMatchObject({ method: 'POST', contentType: 'application/json' });
  });

  test('an instant scenario with a Webhook response answers the caller with it', async () => {
    const hook = await createHook();
    const scenario = await platform.call('POST', '/scenario', {
      body: {
        name: 'Order to record',
        webhookId: hook.id,
        steps: [
          { kind: 'setVariable', name: 'label', value: { expr: '"Order " & order' } },
          { kind: 'createRecord', moduleId, name: { expr: '$vars.label' } },
          {
            kind: 'webhookResponse',
            status: 201,
            body: { expr: '{"made": $vars.label}' },
            headers: [{ name: 'X-Made-By', value: 'scenario' }],
          },
        ],
      },
    });
    expect(scenario.status).toBe(201);
    const { id: scenarioId } = await json<Entity>(scenario);
    const answer = await send(hook.key, { query: '?order=B-7' });
    expect(answer.status).toBe(201);
    expect(answer.headers.get('x-made-by')).toBe('scenario');
    expect(await answer.json()).toEqual({ made: 'Order B-7' });
    const records = await json<Page>(
      await platform.call('GET', `/record?filter=${encodeURIComponent('name=Order B-7')}`),
    );
    expect(records.items).toHaveLength(1);
    const runs = await eventually(
      async () =>
        json<Page<Record<string, unknown>>>(await platform.call('GET', `/scenario/${scenarioId}/run`)),
      (page) => page.items[0]?.status === 'succeeded',
    );
    expect(runs.items[0]).toMatchObject({ status: 'succeeded', operations: 3, responseStatus: 201 });
    const run = await json<Record<string, unknown>>(
      await platform.call('GET', `/scenario/${scenarioId}/run/${String(runs.items[0]!.id)}`),
    );
    expect(run.steps).toHaveLength(3);
  });

  test('a failing run answers 500 "Scenario failed to complete." and shows why', async () => {
    const hook = await createHook();
    const { id: scenarioId } = await json<Entity>(
      await platform.call('POST', '/scenario', {
        body: {
          name: 'Fails',
          webhookId: hook.id,
          steps: [
            { kind: 'createRecord', moduleId, name: { expr: 'missing' } },
            { kind: 'webhookResponse', status: 200, body: 'never' },
          ],
        },
      }),
    );
    const answer = await send(hook.key, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(answer.status).toBe(500);
    expect(await answer.text()).toBe('Scenario failed to complete.');
    const runs = await eventually(
      async () =>
        json<Page<Record<string, unknown>>>(await platform.call('GET', `/scenario/${scenarioId}/run`)),
      (page) => page.items[0]?.status === 'failed',
    );
    expect(runs.items[0]).toMatchObject({ status: 'failed', failedStep: 0 });
    expect(String(runs.items[0]!.error)).toContain('name');
  });

  test('the receiver refuses what the rules refuse, each with its status', async () => {
    const hook = await createHook({
      ipRestrictions: '203.0.113.0/24',
      dataStructure: { fields: [{ name: 'order', type: 'text', required: true }] },
    });
    expect((await send(hook.key)).status).toBe(403);
    await platform.call('PUT', `/webhook/${hook.id}`, { body: { ipRestrictions: '127.0.0.1, ::1' } });
    const invalid = await send(hook.key, { query: '?total=3' });
    expect(invalid.status).toBe(400);
    expect(await invalid.text()).toContain('order: is required');
    expect((await send(hook.key, { query: '?order=X' })).status).toBe(200);
    expect((await send('x'.repeat(32))).status).toBe(404);
    expect((await send('short')).status).toBe(404);
    await platform.call('POST', `/webhook/${hook.id}/disable`);
    expect((await send(hook.key, { query: '?order=X' })).status).toBe(403);
  });

  test('a full queue refuses with 400 "Queue is full." and stays as it is', async () => {
    const hook = await createHook({ queueCapacity: 2 });
    for (const n of [1, 2]) expect((await send(hook.key, { query: `?n=${n}` })).status).toBe(200);
    const full = await send(hook.key, { query: '?n=3' });
    expect(full.status).toBe(400);
    expect(await full.text()).toBe('Queue is full.');
    const queue = await json<Page<Record<string, unknown>>>(
      await platform.call('GET', `/webhook/${hook.id}/queue`),
    );
    expect(queue.meta.total).toBe(2);
    const removed = await platform.call(
      'DELETE',
      `/webhook/${hook.id}/queue/${String(queue.items[0]!.requestId)}`,
    );
    expect(await json(removed)).toEqual({ webhookId: hook.id, removed: 1 });
    expect((await send(hook.key, { query: '?n=4' })).status).toBe(200);
    expect(await json(await platform.call('DELETE', `/webhook/${hook.id}/queue`))).toEqual({
      webhookId: hook.id,
      removed: 2,
    });
  });

  test('more than 30 requests a second to one hook are answered 429 with Retry-After', async () => {
    const hook = await createHook();
    const answers = await Promise.all(Array.from({ length: 40 }, () => send(hook.key)));
    const statuses = answers.map((answer) => answer.status);
    const accepted = statuses.filter((status) => status === 200).length;
    expect(accepted).toBeGreaterThanOrEqual(29);
    expect(accepted).toBeLessThanOrEqual(31);
    const refused = answers.find((answer) => answer.status === 429)!;
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  test('a body over 5 MB is refused before it is read', async () => {
    const hook = await createHook();
    const answer = await send(hook.key, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: 'x'.repeat(5_242_881),
    });
    expect(answer.status).toBe(413);
  });
});
