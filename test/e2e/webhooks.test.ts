import { existsSync, readdirSync } from 'node:fs';
import { FILE_FIELDS } from '../support/hook-requests';
import { join } from 'node:path';
import { json, startPlatform, type Entity, type Page, type TestPlatform } from '../support/platform';
import { polling } from '../support/eventually';

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

  function createHookStatus(body: Record<string, unknown>): Promise<Response> {
    return platform.call('POST', '/webhook', { body: { name: 'Orders', ...body } });
  }

  const runsOf = async (scenarioId: number) =>
    json<Page<Record<string, unknown>>>(await platform.call('GET', `/scenario/${scenarioId}/run`));

  function send(key: string, init: RequestInit & { query?: string } = {}): Promise<Response> {
    return fetch(`${platform.url}/hook/${key}${init.query ?? ''}`, init);
  }

  const eventually = polling(10_000);

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
      () => runsOf(scenarioId),
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
      () => runsOf(scenarioId),
      (page) => page.items[0]?.status === 'failed',
    );
    expect(runs.items[0]).toMatchObject({ status: 'failed', failedStep: 0 });
    expect(String(runs.items[0]!.error)).toContain('name');
  });

  test('set variables, JSON parse and create, and a filter: a run that does not pass ends there, successfully', async () => {
    const hook = await createHook();
    const { id: scenarioId } = await json<Entity>(
      await platform.call('POST', '/scenario', {
        body: {
          name: 'Large orders',
          webhookId: hook.id,
          steps: [
            { kind: 'jsonParse', name: 'order', text: { expr: 'payload' } },
            {
              kind: 'setVariables',
              variables: [
                { name: 'total', value: { expr: '$sum($vars.order.lines.amount)' } },
                { name: 'customer', value: { expr: '$vars.order.customer' } },
              ],
            },
            {
              kind: 'jsonCreate',
              name: 'summary',
              value: { expr: '{"customer": $vars.customer, "total": $vars.total}' },
            },
            { kind: 'webhookResponse', status: 200, body: { expr: '$vars.summary' } },
            { kind: 'filter', label: 'Large', condition: { expr: '$vars.total >= 100' } },
            { kind: 'createRecord', moduleId, name: { expr: '"Large order of " & $vars.customer' } },
          ],
        },
      }),
    );
    const order = (customer: string, amounts: number[]) =>
      JSON.stringify({ customer, lines: amounts.map((amount) => ({ amount })) });
    for (const [customer, amounts, total] of [
      ['Ada', [60, 70], 130],
      ['Bob', [5, 10], 15],
    ] as const) {
      const answer = await send(hook.key, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ payload: order(customer, [...amounts]) }),
      });
      expect({ status: answer.status, body: await answer.text() }).toEqual({
        status: 200,
        body: JSON.stringify({ customer, total }),
      });
    }
    const runs = await eventually(
      () => runsOf(scenarioId),
      (page) => page.items.length === 2 && page.items.every((run) => run.status === 'succeeded'),
    );
    expect(runs.items.map((run) => run.status)).toEqual(['succeeded', 'succeeded']);
    const adas = await eventually(
      async () =>
        json<Page>(
          await platform.call('GET', `/record?filter=${encodeURIComponent('name=Large order of Ada')}`),
        ),
      (page) => page.items.length > 0,
    );
    expect(adas.items).toHaveLength(1);
    const bobs = await platform.call(
      'GET',
      `/record?filter=${encodeURIComponent('name=Large order of Bob')}`,
    );
    expect((await json<Page>(bobs)).items).toHaveLength(0);
    // Bob's run stopped at the filter: five steps, each with its output and how long it took.
    const bob = runs.items.find((run) => run.operations === 5)!;
    const detail = await json<{ steps: Array<{ kind: string; output: unknown; durationMs: number }> }>(
      await platform.call('GET', `/scenario/${scenarioId}/run/${String(bob.id)}`),
    );
    expect(detail.steps.map((step) => [step.kind, step.output])).toEqual([
      ['jsonParse', { customer: 'Bob', lines: [{ amount: 5 }, { amount: 10 }] }],
      ['setVariables', { total: 15, customer: 'Bob' }],
      ['jsonCreate', '{"customer":"Bob","total":15}'],
      ['webhookResponse', expect.objectContaining({ status: 200 })],
      ['filter', { passed: false }],
    ]);
    for (const step of detail.steps) expect(step.durationMs).toBeGreaterThanOrEqual(0);
  });

  test('an iterator makes a record per line, its aggregator gathers them, a router answers by size', async () => {
    const hook = await createHook();
    const steps = [
      { kind: 'iterator', array: { expr: 'lines' } },
      { kind: 'filter', condition: { expr: '$item.qty > 0' } },
      { kind: 'createRecord', moduleId, name: { expr: 'order & " line " & $item.sku' } },
      { kind: 'aggregator', name: 'skus', value: { expr: '$item.sku' } },
      {
        kind: 'router',
        routes: [
          {
            label: 'Several',
            filter: { expr: '$count($vars.skus) > 1' },
            steps: [{ kind: 'webhookResponse', status: 201, body: { expr: '{"lines": $vars.skus}' } }],
          },
          {
            label: 'One',
            filter: { expr: '$count($vars.skus) <= 1' },
            steps: [{ kind: 'webhookResponse', status: 200, body: 'one line' }],
          },
        ],
      },
    ];
    const missingModule = await platform.call('POST', '/scenario', {
      body: {
        name: 'Lines',
        webhookId: hook.id,
        steps: [{ kind: 'router', routes: [{ steps: [{ kind: 'createRecord', moduleId: 999_999 }] }] }],
      },
    });
    expect(missingModule.status).toBe(400);
    expect(await missingModule.text()).toContain('steps.0.routes.0.steps.0.moduleId');
    const { id: scenarioId } = await json<Entity>(
      await platform.call('POST', '/scenario', { body: { name: 'Lines', webhookId: hook.id, steps } }),
    );
    const post = (body: unknown) =>
      send(hook.key, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const several = await post({
      order: 'L-1',
      lines: [
        { sku: 'a', qty: 1 },
        { sku: 'b', qty: 0 },
        { sku: 'c', qty: 3 },
      ],
    });
    expect({ status: several.status, body: await several.json() }).toEqual({
      status: 201,
      body: { lines: ['a', 'c'] },
    });
    const one = await post({ order: 'L-2', lines: [{ sku: 'z', qty: 1 }] });
    expect({ status: one.status, body: await one.text() }).toEqual({ status: 200, body: 'one line' });

    for (const name of ['L-1 line a', 'L-1 line c', 'L-2 line z']) {
      const found = await eventually(
        async () =>
          json<Page>(await platform.call('GET', `/record?filter=${encodeURIComponent(`name=${name}`)}`)),
        (page) => page.items.length > 0,
      );
      expect({ name, records: found.items.length }).toEqual({ name, records: 1 });
    }
    const runs = await eventually(
      () => runsOf(scenarioId),
      (page) => page.items.length === 2 && page.items.every((run) => run.status === 'succeeded'),
    );
    const first = runs.items.find((run) => run.operations === 9)!;
    const detail = await json<{ steps: Array<{ index: number; path: string; kind: string }> }>(
      await platform.call('GET', `/scenario/${scenarioId}/run/${String(first.id)}`),
    );
    expect(detail.steps.map((step) => `${step.path} ${step.kind}`)).toEqual([
      '0 iterator',
      '1[0] filter',
      '2[0] createRecord',
      '1[1] filter',
      '1[2] filter',
      '2[2] createRecord',
      '3 aggregator',
      '4 router',
      '4.0.0 webhookResponse',
    ]);
  });

  test("record steps act with the scenario owner's rights, as of now; the history names the scenario", async () => {
    const as = (token: string, method: string, path: string, body?: unknown) =>
      platform.call(method, path, {
        headers: { Authorization: `Bearer ${token}` },
        ...(body !== undefined && { body }),
      });
    const owner = await json<Entity>(
      await platform.call('POST', '/user', {
        body: {
          email: 'scenario-owner@example.com',
          name: 'Owner',
          permissions: {
            webhook: ['create', 'read'],
            scenario: ['create', 'read'],
            record: ['read'],
            label: ['read'],
          },
        },
      }),
    );
    const token = String(
      (
        await json<Record<string, unknown>>(
          await platform.call('POST', `/auth/${owner.id}/token`, { body: { name: 'hooks' } }),
        )
      ).token,
    );
    const record = await json<Entity>(
      await platform.call('POST', '/record', { body: { moduleId, name: 'Before' } }),
    );
    const label = await json<Entity>(await platform.call('POST', '/label', { body: { name: 'Touched' } }));
    const hook = await json<Entity & { key: string }>(await as(token, 'POST', '/webhook', { name: 'Owned' }));
    const created = await as(token, 'POST', '/scenario', {
      name: 'Rename',
      webhookId: hook.id,
      steps: [
        { kind: 'getRecord', recordId: { expr: 'id' } },
        { kind: 'updateRecord', recordId: { expr: 'id' }, name: { expr: '$step(0).name & " → " & to' } },
        { kind: 'addRecordLabel', recordId: { expr: 'id' }, labelId: label.id },
        {
          kind: 'webhookResponse',
          status: 200,
          body: { expr: '{"name": $step(1).name, "labels": $step(2).labelIds}' },
        },
      ],
    });
    expect(created.status).toBe(201);
    const scenario = await json<Entity>(created);
    expect(scenario.ownerId).toBe(owner.id);
    const call = async (to: string) => {
      const answer = await send(hook.key, { query: `?id=${record.id}&to=${encodeURIComponent(to)}` });
      return { status: answer.status, body: await answer.text() };
    };

    // The owner may read records but not change them: the run stops at the update, nothing changed.
    expect(await call('After')).toEqual({ status: 500, body: 'Scenario failed to complete.' });
    const failed = await eventually(
      () => runsOf(scenario.id),
      (page) => page.items[0]?.status === 'failed',
    );
    expect(String(failed.items[0]!.error)).toBe(
      `step 1 (updateRecord): the scenario's owner (user ${owner.id}) may not update record`,
    );

    // Given the right, the next run may: the rights are read when the step runs.
    expect(
      (
        await platform.call('PUT', `/user/${owner.id}`, {
          body: {
            permissions: {
              webhook: ['create', 'read'],
              scenario: ['create', 'read'],
              record: ['read', 'update'],
              label: ['read'],
            },
          },
        })
      ).status,
    ).toBe(200);
    expect(await call('After')).toEqual({
      status: 200,
      body: JSON.stringify({ name: 'Before → After', labels: [label.id] }),
    });
    const history = await eventually(
      async () =>
        json<Page<{ type: string; userId: string | null; credentialId?: string | null }>>(
          await platform.call('GET', `/record/${record.id}/history`),
        ),
      (page) => page.items.some((entry) => entry.type === 'RecordLabelled'),
    );
    const byScenario = history.items.filter((entry) => entry.credentialId === `scenario:${scenario.id}`);
    expect(byScenario.map((entry) => [entry.type, entry.userId])).toEqual([
      ['RecordLabelled', String(owner.id)],
      ['RecordUpdated', String(owner.id)],
    ]);
  });

  test('remove a label, delete a record; a record id that is not one, or a deleted record, fails the run with why', async () => {
    const record = await json<Entity>(
      await platform.call('POST', '/record', { body: { moduleId, name: 'Doomed' } }),
    );
    const label = await json<Entity>(await platform.call('POST', '/label', { body: { name: 'Doomed' } }));
    expect((await platform.call('POST', `/record/${record.id}/label/${label.id}`)).status).toBe(200);
    const hook = await createHook();
    const { id: scenarioId } = await json<Entity>(
      await platform.call('POST', '/scenario', {
        body: {
          name: 'Clean up',
          webhookId: hook.id,
          steps: [
            { kind: 'removeRecordLabel', recordId: { expr: 'id' }, labelId: label.id },
            { kind: 'deleteRecord', recordId: { expr: 'id' } },
            { kind: 'webhookResponse', status: 200, body: { expr: '[$step(0), $step(1)]' } },
          ],
        },
      }),
    );
    const answer = await send(hook.key, { query: `?id=${record.id}` });
    expect({ status: answer.status, body: await answer.json() }).toEqual({
      status: 200,
      body: [
        { recordId: record.id, labelIds: [] },
        { recordId: record.id, deleted: true },
      ],
    });
    expect(
      (await platform.call('GET', `/record/${record.id}`, { headers: { 'X-Min-Position': '0' } })).status,
    ).toBe(404);
    for (const [id, reason] of [
      ['abc', 'recordId must be a positive integer, got "abc"'],
      ['0', 'recordId must be a positive integer, got "0"'],
      // Deleted now: as through the API, it is not found.
      [String(record.id), 'record not found'],
    ] as const) {
      expect((await send(hook.key, { query: `?id=${id}` })).status).toBe(500);
      const runs = await eventually(
        () => runsOf(scenarioId),
        (page) => page.items.some((run) => String(run.error).includes(reason)),
      );
      expect(runs.items.map((run) => String(run.error))).toContainEqual(
        `step 0 (removeRecordLabel): ${reason}`,
      );
    }
  });

  test('a search step finds records with the list language; a filter that does not parse fails the run', async () => {
    const space = await json<Entity>(await platform.call('POST', '/space', { body: { name: 'Searched' } }));
    const module = await json<Entity>(
      await platform.call('POST', '/module', { body: { spaceId: space.id, name: 'Customers' } }),
    );
    let last = 0;
    for (const name of ['Ada', 'Bob', 'Ada']) {
      const created = await platform.call('POST', '/record', { body: { moduleId: module.id, name } });
      last = Number(created.headers.get('x-position'));
    }
    // The step reads the read models: let them take the records in first.
    expect(
      (await platform.call('GET', '/record?limit=1', { headers: { 'X-Min-Position': String(last) } })).status,
    ).toBe(200);
    const hook = await createHook();
    const { id: scenarioId } = await json<Entity>(
      await platform.call('POST', '/scenario', {
        body: {
          name: 'Look up',
          webhookId: hook.id,
          steps: [
            {
              kind: 'searchRecords',
              moduleId: module.id,
              filter: { expr: '"name=" & who' },
              order: 'id',
              limit: 5,
            },
            {
              kind: 'webhookResponse',
              status: 200,
              body: { expr: '{"total": $step(0).total, "names": [$step(0).items.name]}' },
            },
          ],
        },
      }),
    );
    const answer = await send(hook.key, { query: '?who=Ada' });
    expect({ status: answer.status, body: await answer.json() }).toEqual({
      status: 200,
      body: { total: 2, names: ['Ada', 'Ada'] },
    });
    expect((await send(hook.key, { query: `?who=${encodeURIComponent('(unclosed')}` })).status).toBe(500);
    const runs = await eventually(
      () => runsOf(scenarioId),
      (page) => page.items.some((run) => run.status === 'failed'),
    );
    expect(String(runs.items.find((run) => run.status === 'failed')!.error)).toMatch(
      /^step 0 \(searchRecords\): /,
    );
  });

  test('a scenario exported with its hook imports as a new one, its module ids remapped', async () => {
    const space = await json<Entity>(await platform.call('POST', '/space', { body: { name: 'Elsewhere' } }));
    const target = await json<Entity>(
      await platform.call('POST', '/module', { body: { spaceId: space.id, name: 'Imported orders' } }),
    );
    const hook = await createHook({ ipRestrictions: '127.0.0.1, ::1', maxResults: 5 });
    const created = await platform.call('POST', '/scenario', {
      body: {
        name: 'Portable',
        webhookId: hook.id,
        sequential: true,
        steps: [
          {
            kind: 'router',
            routes: [
              { filter: { expr: 'n' }, steps: [{ kind: 'createRecord', moduleId, name: { expr: 'n' } }] },
            ],
          },
          { kind: 'webhookResponse', status: 200, body: 'stored' },
        ],
      },
    });
    const { id: scenarioId } = await json<Entity>(created);
    const exported = await json<Record<string, unknown>>(
      await platform.call('GET', `/scenario/${scenarioId}/export`),
    );
    expect(exported).toMatchObject({
      format: 'records-platform/scenario',
      version: 1,
      scenario: { id: scenarioId, name: 'Portable', sequential: true },
      webhook: { id: hook.id, name: 'Orders', ipRestrictions: '127.0.0.1, ::1', maxResults: 5 },
      references: { moduleIds: [moduleId], labelIds: [] },
    });

    // A module that does not exist here is refused, and nothing is created.
    const hooksBefore = (
      await json<Page>(
        await platform.call('GET', '/webhook?limit=1', {
          headers: { 'X-Min-Position': created.headers.get('x-position')! },
        }),
      )
    ).meta.total;
    const refused = await platform.call('POST', '/scenario/import', {
      body: { document: exported, moduleIds: { [String(moduleId)]: 999_999 } },
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('no module 999999');
    const imported = await platform.call('POST', '/scenario/import', {
      body: { document: exported, moduleIds: { [String(moduleId)]: target.id } },
    });
    expect(imported.status).toBe(201);
    const { scenario, webhook } = await json<{ scenario: Entity; webhook: Entity & { key: string } }>(
      imported,
    );
    expect(scenario).toMatchObject({
      name: 'Portable',
      status: 'inactive',
      webhookId: webhook.id,
      sequential: true,
    });
    expect(webhook).toMatchObject({ name: 'Orders', ipRestrictions: '127.0.0.1, ::1', maxResults: 5 });
    expect(webhook.key).not.toBe(hook.key);
    expect(JSON.stringify(scenario.steps)).toContain(`"moduleId":${target.id}`);
    // The refused attempt made no hook; the import made one.
    const hooksAfter = await json<Page>(
      await platform.call('GET', '/webhook?limit=1', {
        headers: { 'X-Min-Position': imported.headers.get('x-position')! },
      }),
    );
    expect(hooksAfter.meta.total).toBe(hooksBefore + 1);

    expect((await platform.call('POST', `/scenario/${scenario.id}/activate`, { body: {} })).status).toBe(200);
    const answer = await send(webhook.key, { query: '?n=Imported-1' });
    expect({ status: answer.status, body: await answer.text() }).toEqual({ status: 200, body: 'stored' });
    const found = await eventually(
      async () =>
        json<Page<{ moduleId: number }>>(
          await platform.call('GET', `/record?filter=${encodeURIComponent('name=Imported-1')}`),
        ),
      (page) => page.items.length > 0,
    );
    expect(found.items.map((record) => record.moduleId)).toEqual([target.id]);

    // Its own export is the same document, but for its ids.
    const again = await json<Record<string, unknown>>(
      await platform.call('GET', `/scenario/${scenario.id}/export`, { headers: { 'X-Min-Position': '0' } }),
    );
    expect(again).toMatchObject({ references: { moduleIds: [target.id], labelIds: [] } });
    expect((again.scenario as Record<string, unknown>).name).toBe('Portable');
  });

  test('a reusable data structure validates the requests of the hooks bound to it, as it is now', async () => {
    const order = {
      name: 'Order',
      fields: [
        { name: 'number', type: 'text', required: true },
        {
          name: 'customer',
          type: 'collection',
          required: true,
          fields: [
            { name: 'email', type: 'text', required: true },
            { name: 'vip', type: 'boolean' },
          ],
        },
        {
          name: 'lines',
          type: 'array',
          items: { type: 'collection', fields: [{ name: 'qty', type: 'number', required: true }] },
        },
      ],
    };
    const created = await platform.call('POST', '/data-structure', { body: order });
    expect(created.status).toBe(201);
    const structure = await json<Entity>(created);
    expect(structure).toMatchObject({ name: 'Order', fields: order.fields });

    expect((await createHookStatus({ dataStructureId: 999_999 })).status).toBe(400);
    const hook = await createHook({ dataStructureId: structure.id });
    expect(hook).toMatchObject({ dataStructureId: structure.id });
    const post = (body: unknown) =>
      send(hook.key, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const good = {
      number: 'A-1',
      customer: { email: 'ada@example.com', vip: 'true' },
      lines: [{ qty: '2' }],
    };
    expect((await post(good)).status).toBe(200);
    const bad = await post({ customer: { vip: 'maybe' }, lines: [{ qty: 'x' }, {}] });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toBe(
      "The data does not match the hook's data structure: number: is required; customer.email: is required; customer.vip: must be true or false; lines.0.qty: must be a number; lines.1.qty: is required",
    );

    // Changed, it applies to the next request at once; its history has both versions.
    const changed = await platform.call('PUT', `/data-structure/${structure.id}`, {
      body: { fields: [...order.fields, { name: 'currency', type: 'text', required: true }] },
    });
    expect(changed.status).toBe(200);
    const refused = await post(good);
    expect({ status: refused.status, text: await refused.text() }).toEqual({
      status: 400,
      text: "The data does not match the hook's data structure: currency: is required",
    });
    const listed = await json<Page<Entity>>(
      await platform.call('GET', `/data-structure?filter=${encodeURIComponent(`id=${structure.id}`)}`, {
        headers: { 'X-Min-Position': changed.headers.get('x-position')! },
      }),
    );
    expect(listed.items.map((item) => (item.fields as unknown[]).length)).toEqual([4]);

    // Shapes a structure may not have are refused with where.
    const deep = (depth: number): Record<string, unknown> =>
      depth === 0
        ? { name: 'leaf', type: 'text' }
        : { name: `level${depth}`, type: 'collection', fields: [deep(depth - 1)] };
    for (const [fields, reason] of [
      [[deep(9)], 'nest at most 8 deep'],
      [
        [
          { name: 'a', type: 'text' },
          { name: 'a', type: 'number' },
        ],
        '"a" is there twice',
      ],
      [[{ name: 'list', type: 'array' }], 'an array says what its items are'],
      [[{ name: 'x', type: 'text', fields: [] }], 'only a collection has fields'],
      [[{ name: 'x', type: 'money' }], 'type'],
    ] as const) {
      const answer = await platform.call('POST', '/data-structure', { body: { name: 'Bad', fields } });
      const { message } = await json<{ message: string }>(answer);
      expect({ status: answer.status, message }).toEqual({
        status: 400,
        message: expect.stringContaining(reason),
      });
    }

    // Deleted, it validates nothing (as no structure would).
    expect((await platform.call('DELETE', `/data-structure/${structure.id}`)).status).toBe(200);
    expect((await post({})).status).toBe(200);
  });

  test("an export carries the hook's reusable data structure; the import makes it anew and binds it", async () => {
    const structure = await json<Entity>(
      await platform.call('POST', '/data-structure', {
        body: { name: 'Ping', fields: [{ name: 'ping', type: 'text', required: true }] },
      }),
    );
    const hook = await createHook({ dataStructureId: structure.id });
    const created = await platform.call('POST', '/scenario', {
      body: {
        name: 'Pong',
        webhookId: hook.id,
        steps: [{ kind: 'webhookResponse', status: 200, body: 'pong' }],
      },
    });
    const { id: scenarioId } = await json<Entity>(created);
    const exported = await json<Record<string, unknown>>(
      await platform.call('GET', `/scenario/${scenarioId}/export`, {
        headers: { 'X-Min-Position': created.headers.get('x-position')! },
      }),
    );
    expect(exported.dataStructures).toEqual([
      { id: structure.id, name: 'Ping', fields: [{ name: 'ping', type: 'text', required: true }] },
    ]);

    const withoutIt = await platform.call('POST', '/scenario/import', {
      body: { document: { ...exported, dataStructures: [] } },
    });
    expect(withoutIt.status).toBe(400);
    const imported = await json<{ scenario: Entity; webhook: Entity & { key: string } }>(
      await platform.call('POST', '/scenario/import', { body: { document: exported, active: true } }),
    );
    const newStructureId = imported.webhook.dataStructureId as number;
    expect(newStructureId).not.toBe(structure.id);
    const copy = await json<Entity>(
      await platform.call('GET', `/data-structure/${newStructureId}`, { headers: { 'X-Min-Position': '0' } }),
    );
    expect(copy).toMatchObject({ name: 'Ping', fields: [{ name: 'ping', type: 'text', required: true }] });
    expect((await send(imported.webhook.key, { query: '?ping=1' })).status).toBe(200);
    expect((await send(imported.webhook.key)).status).toBe(400);
  });

  test('a pattern that would backtrack for ever runs in linear time; one that cannot is refused when saved', async () => {
    const hook = await createHook();
    const refused = await platform.call('POST', '/scenario', {
      body: {
        name: 'Backreference',
        webhookId: hook.id,
        steps: [{ kind: 'setVariable', name: 'twice', value: { expr: '$contains(text, /(a+)\\1/)' } }],
      },
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('cannot be matched in linear time');
    await platform.call('POST', '/scenario', {
      body: {
        name: 'Nested quantifiers',
        webhookId: hook.id,
        steps: [
          { kind: 'setVariable', name: 'matches', value: { expr: '$contains(text, /^(a+)+$/)' } },
          { kind: 'webhookResponse', status: 200, body: { expr: '{"matches": $vars.matches}' } },
        ],
      },
    });
    const started = Date.now();
    const answer = await send(hook.key, { query: `?text=${'a'.repeat(10_000)}!` });
    expect({ status: answer.status, body: await answer.json() }).toEqual({
      status: 200,
      body: { matches: false },
    });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test("the integrator's lag and runs are on /metrics", async () => {
    const scrape = async () => (await fetch(`${platform.url}/metrics`)).text();
    const value = (text: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
    const metrics = await eventually(scrape, (text) => value(text, 'integrator_lag_positions') === 0);
    expect(value(metrics, 'integrator_lag_positions')).toBe(0);
    expect(value(metrics, 'integrator_runs_started')).toBeGreaterThanOrEqual(2);
    const finished = await eventually(scrape, (text) => value(text, 'integrator_runs_finished') >= 2);
    expect(value(finished, 'integrator_runs_finished')).toBeLessThanOrEqual(
      value(finished, 'integrator_runs_started'),
    );
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

  test('a refusal after the rate check is logged as a warning with the answer; earlier refusals are not', async () => {
    const hook = await createHook({
      queueCapacity: 1,
      dataStructure: { fields: [{ name: 'order', type: 'text', required: true }] },
    });
    const wrongData = await send(hook.key, { query: '?total=3' });
    expect(wrongData.status).toBe(400);
    const wrongType = await send(hook.key, {
      method: 'POST',
      headers: { 'Content-Type': 'application/xml' },
      body: '<order/>',
    });
    expect(wrongType.status).toBe(415);
    expect((await send(hook.key, { query: '?order=A' })).status).toBe(200);
    expect((await send(hook.key, { query: '?order=B' })).status).toBe(400);
    // Refused before it counted: not logged (an unknown hook has no log; a refused address could flood one).
    await platform.call('PUT', `/webhook/${hook.id}`, { body: { ipRestrictions: '203.0.113.1' } });
    expect((await send(hook.key, { query: '?order=C' })).status).toBe(403);
    const logs = await eventually(
      async () =>
        json<Page<Record<string, unknown>>>(
          await platform.call('GET', `/webhook/${hook.id}/log?order=loggedAt;ASC`),
        ),
      (page) => page.meta.total === 4,
    );
    expect(logs.items.map((entry) => [entry.status, entry.responseStatus])).toEqual([
      ['warning', 400],
      ['warning', 415],
      ['success', 200],
      ['warning', 400],
    ]);
    const detail = await json<Record<string, unknown>>(
      await platform.call('GET', `/webhook/${hook.id}/log/${String(logs.items[3]!.id)}`),
    );
    expect(detail.response).toEqual({ status: 400, headers: [], body: 'Queue is full.' });
    expect(detail.request).toMatchObject({ method: 'GET', query: { order: 'B' } });
    const warnings = await json<Page>(
      await platform.call('GET', `/webhook/${hook.id}/log?filter=status=warning`),
    );
    expect(warnings.meta.total).toBe(3);
  });

  test('files of a refused request are not kept; those of an accepted one are, with the request', async () => {
    const blobCount = () => {
      const root = join(platform.dataDir, 'blobs');
      return existsSync(root)
        ? readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length
        : 0;
    };
    const hook = await createHook({
      dataStructure: {
        fields: [
          { name: 'order', type: 'text', required: true },
          {
            name: 'doc',
            type: 'collection',
            fields: FILE_FIELDS,
          },
        ],
      },
    });
    const form = (withOrder: boolean) => {
      const body = new FormData();
      if (withOrder) body.append('order', 'F-1');
      body.append('doc', new Blob(['%PDF-1.7 tiny'], { type: 'application/pdf' }), 'order.pdf');
      return body;
    };
    const before = blobCount();
    expect((await send(hook.key, { method: 'POST', body: form(false) })).status).toBe(400);
    expect(blobCount()).toBe(before);
    expect((await send(hook.key, { method: 'POST', body: form(true) })).status).toBe(200);
    expect(blobCount()).toBe(before + 1);
  });

  test("a file a hook received is attached to a record as an upload would be; another system's is refused", async () => {
    const structure = await json<Entity>(
      await platform.call('POST', '/data-structure', {
        body: {
          name: 'With a document',
          fields: [
            {
              name: 'doc',
              type: 'collection',
              required: true,
              fields: FILE_FIELDS,
            },
          ],
        },
      }),
    );
    const hook = await createHook({ dataStructureId: structure.id });
    const record = await json<Entity>(
      await platform.call('POST', '/record', { body: { moduleId, name: 'Filed' } }),
    );
    const { id: scenarioId } = await json<Entity>(
      await platform.call('POST', '/scenario', {
        body: {
          name: 'File it',
          webhookId: hook.id,
          steps: [
            { kind: 'attachRecordFile', recordId: { expr: 'id' }, file: { expr: 'doc' } },
            { kind: 'webhookResponse', status: 200, body: { expr: '$step(0)' } },
          ],
        },
      }),
    );
    const form = new FormData();
    form.append('id', String(record.id));
    form.append('doc', new Blob(['%PDF-1.7 tiny'], { type: 'application/pdf' }), 'order.pdf');
    const answer = await send(hook.key, { method: 'POST', body: form });
    expect(answer.status).toBe(200);
    const attached = await json<{ fileId: number; name: string; contentType: string; size: number }>(answer);
    expect(attached).toMatchObject({
      recordId: record.id,
      name: 'order.pdf',
      contentType: 'application/pdf',
      size: 13,
    });
    const content = await platform.call('GET', `/record/${record.id}/file/${attached.fileId}/content`, {
      headers: { 'X-Min-Position': '0' },
    });
    expect({ status: content.status, body: await content.text() }).toEqual({
      status: 200,
      body: '%PDF-1.7 tiny',
    });

    // A reference the scenario makes up, to a key outside this system's part of the store, is refused.
    const forged = await platform.call('PUT', `/scenario/${scenarioId}`, {
      body: {
        steps: [
          {
            kind: 'attachRecordFile',
            recordId: { expr: 'id' },
            file: { name: 'x.pdf', mime: 'application/pdf', size: 13, blobKey: 'other-system/secret' },
          },
        ],
      },
    });
    expect(forged.status).toBe(200);
    const again = new FormData();
    again.append('id', String(record.id));
    again.append('doc', new Blob(['%PDF-1.7 tiny'], { type: 'application/pdf' }), 'order.pdf');
    expect((await send(hook.key, { method: 'POST', body: again })).status).toBe(200);
    const runs = await eventually(
      () => runsOf(scenarioId),
      (page) => page.items.some((run) => run.status === 'failed'),
    );
    expect(String(runs.items.find((run) => run.status === 'failed')!.error)).toBe(
      'step 0 (attachRecordFile): the file must be one a hook of this system received: {name, mime, size, blobKey}',
    );
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

  test("the log's receipt times keep the rate: no second of them holds more than 30", async () => {
    const hook = await createHook();
    // About 300 a second for 1.5 s, in bursts: the accepted ones straddle several windows.
    const sent: Promise<Response>[] = [];
    for (let burst = 0; burst < 30; burst++) {
      for (let n = 0; n < 15; n++) sent.push(send(hook.key));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const accepted = (await Promise.all(sent)).filter((answer) => answer.status === 200).length;
    expect(accepted).toBeGreaterThanOrEqual(30);
    const logs = await eventually(
      async () =>
        json<Page<{ loggedAt: string }>>(
          await platform.call('GET', `/webhook/${hook.id}/log?order=loggedAt;ASC&limit=500`),
        ),
      (page) => page.meta.total === accepted,
    );
    const times = logs.items.map((entry) => Date.parse(entry.loggedAt));
    for (let start = 0, end = 0; end < times.length; end++) {
      while (times[end]! - times[start]! >= 1000) start++;
      expect(end - start + 1).toBeLessThanOrEqual(30);
    }
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

  describe('queues, schedules and the clock', () => {
    const HOUR = 3_600_000;
    const scheduler = () => platform.running.services.integratorScheduler!;
    const queueOf = async (webhookId: number) =>
      json<Page<Record<string, unknown>>>(await platform.call('GET', `/webhook/${webhookId}/queue`));
    const recordsNamed = async (name: string) =>
      json<Page>(await platform.call('GET', `/record?filter=${encodeURIComponent(`name=${name}`)}`));

    /** Runs the slot of `at` (once the scenario is in the read model the scheduler looks in) until `runs` exist. */
    async function runSlot(
      at: Date,
      scenarioId: number,
      runs: number,
    ): Promise<Page<Record<string, unknown>>> {
      return eventually(
        async () => {
          await scheduler().runDue(at);
          return runsOf(scenarioId);
        },
        (page) => page.meta.total >= runs && page.items.every((run) => run.status !== 'running'),
      );
    }

    test('a scheduled scenario takes up to Maximum number of results per slot, in arrival order, and removes them', async () => {
      const hook = await createHook({ maxResults: 2 });
      for (const n of [1, 2, 3]) expect((await send(hook.key, { query: `?n=Slot-${n}` })).status).toBe(200);
      const { id: scenarioId } = await json<Entity>(
        await platform.call('POST', '/scenario', {
          body: {
            name: 'Hourly',
            webhookId: hook.id,
            schedule: { kind: 'interval', minutes: 60 },
            steps: [{ kind: 'createRecord', moduleId, name: { expr: 'n' } }],
          },
        }),
      );
      const at = new Date();
      const first = await runSlot(at, scenarioId, 2);
      expect(first.items.map((run) => run.trigger)).toEqual(['scheduled', 'scheduled']);
      const left = await eventually(
        () => queueOf(hook.id),
        (page) => page.meta.total === 1,
      );
      expect(left.items[0]).toMatchObject({ failedRuns: 0, lastError: null });
      expect((await recordsNamed('Slot-1')).items).toHaveLength(1);
      expect((await recordsNamed('Slot-2')).items).toHaveLength(1);
      expect((await recordsNamed('Slot-3')).items).toHaveLength(0);
      // The same slot again runs nothing; the next one takes the rest.
      await scheduler().runDue(at);
      expect((await runsOf(scenarioId)).meta.total).toBe(2);
      await runSlot(new Date(at.getTime() + HOUR), scenarioId, 3);
      expect((await recordsNamed('Slot-3')).items).toHaveLength(1);
      expect(
        (
          await eventually(
            () => queueOf(hook.id),
            (page) => page.meta.total === 0,
          )
        ).meta.total,
      ).toBe(0);
      const scenario = await json<Record<string, unknown>>(
        await platform.call('GET', `/scenario/${scenarioId}`),
      );
      expect(scenario).toMatchObject({ status: 'active', consecutiveErrors: 0 });
      expect(typeof scenario.lastScheduledRunAt).toBe('string');
    });

    test('three failed scheduled runs in a row deactivate the scenario; the item stays queued with its attempts', async () => {
      const hook = await createHook();
      expect((await send(hook.key, { query: '?n=1' })).status).toBe(200);
      const { id: scenarioId } = await json<Entity>(
        await platform.call('POST', '/scenario', {
          body: {
            name: 'Breaks',
            webhookId: hook.id,
            schedule: { kind: 'interval', minutes: 60 },
            steps: [{ kind: 'createRecord', moduleId, name: { expr: 'missing' } }],
          },
        }),
      );
      const start = Date.now();
      for (const attempt of [1, 2, 3])
        await runSlot(new Date(start + (attempt - 1) * HOUR), scenarioId, attempt);
      const runs = await runsOf(scenarioId);
      expect(runs.items.map((run) => [run.attempt, run.status])).toEqual([
        [3, 'failed'],
        [2, 'failed'],
        [1, 'failed'],
      ]);
      expect(String(runs.items[0]!.error)).toContain('name');
      expect(runs.items[0]!.id).toMatch(/~3$/);
      const third = await platform.call('GET', `/scenario/${scenarioId}/run/${String(runs.items[0]!.id)}`);
      expect(await json(third)).toMatchObject({ attempt: 3, status: 'failed', trigger: 'scheduled' });
      const scenario = await eventually(
        async () => json<Record<string, unknown>>(await platform.call('GET', `/scenario/${scenarioId}`)),
        (read) => read.status === 'inactive',
      );
      expect(scenario).toMatchObject({ status: 'inactive', consecutiveErrors: 3 });
      expect(String(scenario.deactivatedBecause)).toMatch(
        /^3 scheduled runs failed in a row; the last: run [0-9a-f-]+~3$/,
      );
      // Deactivated: a later slot runs nothing, and the request is still there with what happened to it.
      await scheduler().runDue(new Date(start + 3 * HOUR));
      expect((await runsOf(scenarioId)).meta.total).toBe(3);
      const queue = await eventually(
        () => queueOf(hook.id),
        (page) => page.items[0]?.failedRuns === 3,
      );
      expect(queue.meta.total).toBe(1);
      expect(String(queue.items[0]!.lastError)).toContain('name');
    });

    test('an instant scenario bound to a hook with a queue runs what was queued, in order, once', async () => {
      const hook = await createHook();
      for (const n of [1, 2, 3]) expect((await send(hook.key, { query: `?n=Drain-${n}` })).status).toBe(200);
      const { id: scenarioId } = await json<Entity>(
        await platform.call('POST', '/scenario', {
          body: {
            name: 'Catch up',
            webhookId: hook.id,
            steps: [{ kind: 'createRecord', moduleId, name: { expr: 'n' } }],
          },
        }),
      );
      await eventually(
        () => queueOf(hook.id),
        (page) => page.meta.total === 0,
      );
      const runs = await eventually(
        () => runsOf(scenarioId),
        (page) => page.meta.total === 3 && page.items.every((run) => run.status === 'succeeded'),
      );
      expect(runs.items.map((run) => run.trigger)).toEqual(['instant', 'instant', 'instant']);
      for (const n of [1, 2, 3]) expect((await recordsNamed(`Drain-${n}`)).items).toHaveLength(1);
    });

    test('a sequential scenario switched on runs what was queued before the requests that follow, in arrival order', async () => {
      const space = await json<Entity>(await platform.call('POST', '/space', { body: { name: 'Sequence' } }));
      const { id: sequenceModule } = await json<Entity>(
        await platform.call('POST', '/module', { body: { spaceId: space.id, name: 'Arrivals' } }),
      );
      const hook = await createHook();
      const { id: scenarioId } = await json<Entity>(
        await platform.call('POST', '/scenario', {
          body: {
            name: 'In order',
            webhookId: hook.id,
            active: false,
            sequential: true,
            steps: [{ kind: 'createRecord', moduleId: sequenceModule, name: { expr: 'n' } }],
          },
        }),
      );
      const queued = Array.from({ length: 8 }, (_, i) => `Queued-${i}`);
      for (const n of queued) expect((await send(hook.key, { query: `?n=${n}` })).status).toBe(200);
      expect(
        (await platform.call('POST', `/scenario/${scenarioId}/activate`, { body: {} })).status,
      ).toBeLessThan(300);
      // Straight after the switch, while the queue is still being worked.
      const following = Array.from({ length: 8 }, (_, i) => `After-${i}`);
      for (const n of following) expect((await send(hook.key, { query: `?n=${n}` })).status).toBe(200);
      const records = await eventually(
        async () =>
          json<Page<{ id: number; name: string }>>(
            await platform.call('GET', `/module/${sequenceModule}/item?limit=100`),
          ),
        (page) => page.items.length >= 16,
      );
      const inCreationOrder = [...records.items].sort((a, b) => a.id - b.id).map((record) => record.name);
      expect(inCreationOrder).toEqual([...queued, ...following]);
    });

    test('120 hours without a scenario deactivate a hook (at the injected instant), and it then answers 410', async () => {
      const hook = await createHook();
      const later = new Date(Date.now() + 121 * HOUR);
      const read = await eventually(
        async () => {
          await scheduler().sweep(later);
          return json<Record<string, unknown>>(await platform.call('GET', `/webhook/${hook.id}`));
        },
        (webhook) => webhook.status === 'deactivated',
      );
      expect(read.status).toBe('deactivated');
      const answer = await send(hook.key);
      expect(answer.status).toBe(410);
    });

    test('log entries older than the retention are removed by the sweep', async () => {
      const hook = await createHook();
      expect((await send(hook.key)).status).toBe(200);
      await eventually(
        async () => json<Page>(await platform.call('GET', `/webhook/${hook.id}/log`)),
        (page) => page.meta.total === 1,
      );
      await scheduler().sweep(new Date(Date.now() + 73 * HOUR));
      const logs = await eventually(
        async () => json<Page>(await platform.call('GET', `/webhook/${hook.id}/log`)),
        (page) => page.meta.total === 0,
      );
      expect(logs.meta.total).toBe(0);
    });
  });
});
