import { API_VERSION } from '../../contracts/api/index';
import { request } from 'node:http';
import {
  ADMIN_TOKEN,
  json,
  startPlatform,
  type TestPlatform,
  type Entity,
  type Page,
} from '../support/platform';

let platform: TestPlatform;

/** fetch drops a custom Host header, so tenancy tests speak HTTP through node:http. */
function statusWithHost(host: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const url = new URL(platform.url);
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        headers: { Host: host, Authorization: `Bearer ${ADMIN_TOKEN}` },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.once('error', reject);
    req.end();
  });
}

/**
 * The first vertical slice end to end over real HTTP: command → events → projection → read model → query API.
 * Run once per read-store adapter (`env` picks it).
 */
export function recordsSlice(env: () => Record<string, string>): void {
  let spaceId: number;
  let moduleId: number;

  beforeAll(async () => {
    platform = await startPlatform({ MIN_POSITION_TIMEOUT_MS: '2000', ...env() });
    const space = await json<Entity>(await platform.call('POST', '/space', { body: { name: 'Sales' } }));
    spaceId = space.id;
    const module = await json<Entity>(
      await platform.call('POST', '/module', { body: { spaceId, name: 'Deals' } }),
    );
    moduleId = module.id;
    // The fields the records below write to (a record's values must fit its module's fields).
    const fields = [
      { key: 'amount', type: 'number' },
      { key: 'stage', type: 'select', config: { options: ['lead', 'customer'] } },
      { key: 'a', type: 'number' },
      { key: 'b', type: 'text' },
      ...Array.from({ length: 50 }, (_, index) => ({ key: `f${index}`, type: 'number' })),
    ];
    for (const field of fields) {
      const response = await platform.call('POST', '/field', {
        body: { moduleId, name: field.key, ...field },
      });
      expect(response.status).toBe(201);
    }
  });

  afterAll(async () => {
    await platform.stop();
  });

  /**
   * GET that retries while the read models are still behind this process's writes (504): this suite keeps
   * the wait short (MIN_POSITION_TIMEOUT_MS) to test the 504, and a burst of writes on a real server may
   * need longer.
   */
  async function readWhenVisible(path: string): Promise<Response> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const response = await platform.call('GET', path);
      if (response.status !== 504 || Date.now() > deadline) return response;
      await response.arrayBuffer();
    }
  }

  async function createRecord(name: string, fields: Record<string, unknown> = {}): Promise<Entity> {
    const response = await platform.call('POST', '/record', { body: { moduleId, name, fields } });
    expect(response.status).toBe(201);
    return json<Entity>(response);
  }

  async function recordCount(): Promise<number> {
    return (await json<Page>(await platform.call('GET', `/record?filter=moduleId=${moduleId}&limit=1`))).meta
      .total;
  }

  describe('command → events → projection → read model → query API', () => {
    test('a created record is readable at once, with X-Position, Location, ETag and X-Version', async () => {
      const response = await platform.call('POST', '/record', {
        body: { moduleId, name: 'Acme deal', fields: { amount: 1200, stage: 'lead' } },
      });
      expect(response.status).toBe(201);
      expect(response.headers.get('x-position')).toMatch(/^\d+$/);
      expect(response.headers.get('x-version')).toBe(API_VERSION);
      expect(response.headers.get('etag')).toBe('W/"0"');
      const created = await json<Entity>(response);
      expect(response.headers.get('location')).toBe(`/api/record/${created.id}`);

      const read = await platform.call('GET', `/record/${created.id}`);
      expect(read.status).toBe(200);
      expect(read.headers.get('etag')).toBe('W/"0"');
      const record = await json<Entity>(read);
      expect(record).toMatchObject({
        id: created.id,
        moduleId,
        spaceId,
        name: 'Acme deal',
        fields: { amount: 1200, stage: 'lead' },
      });
      expect(typeof record.createdAt).toBe('string');
    });

    test('an update changes only the given values and a null removes a field', async () => {
      const created = await createRecord('Beta', { a: 1, b: 'x' });
      const response = await platform.call('PUT', `/record/${created.id}`, {
        body: { fields: { a: 2, b: null } },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('etag')).toBe('W/"1"');
      const record = await json<Entity>(await platform.call('GET', `/record/${created.id}`));
      expect(record.fields).toEqual({ a: 2 });
      expect(record.name).toBe('Beta');
    });

    test('If-Match with a stale ETag is refused with 412 and changes nothing', async () => {
      const created = await createRecord('Gamma');
      expect(
        (
          await platform.call('PUT', `/record/${created.id}`, {
            body: { name: 'Gamma 2' },
            headers: { 'If-Match': 'W/"0"' },
          })
        ).status,
      ).toBe(200);
      const stale = await platform.call('PUT', `/record/${created.id}`, {
        body: { name: 'Gamma 3' },
        headers: { 'If-Match': 'W/"0"' },
      });
      expect(stale.status).toBe(412);
      expect((await json(stale)).code).toBe('E4120');
      expect((await json<Entity>(await platform.call('GET', `/record/${created.id}`))).name).toBe('Gamma 2');
    });

    test('If-Match with a list of ETags accepts the write when one of them is current', async () => {
      const created = await createRecord('Epsilon');
      const listed = await platform.call('PUT', `/record/${created.id}`, {
        body: { name: 'Epsilon 2' },
        headers: { 'If-Match': '"elsewhere,too", W/"7", "0"' },
      });
      expect(listed.status).toBe(200);
      expect(listed.headers.get('etag')).toBe('W/"1"');
      const noneCurrent = await platform.call('PUT', `/record/${created.id}`, {
        body: { name: 'Epsilon 3' },
        headers: { 'If-Match': 'W/"0", W/"001"' },
      });
      expect(noneCurrent.status).toBe(412);
      expect((await json<Entity>(await platform.call('GET', `/record/${created.id}`))).name).toBe(
        'Epsilon 2',
      );
    });

    test('a deleted record is gone from reads and lists', async () => {
      const created = await createRecord('Delta');
      expect((await platform.call('DELETE', `/record/${created.id}`)).status).toBe(200);
      expect((await platform.call('GET', `/record/${created.id}`)).status).toBe(404);
      const page = await json<Page>(await platform.call('GET', `/record?filter=id=${created.id}`));
      expect(page.items).toEqual([]);
      expect((await platform.call('DELETE', `/record/${created.id}`)).status).toBe(404);
    });

    test('lists take filter, order, offset and limit and report meta', async () => {
      const names = ['List A', 'List B', 'List C', 'List D'];
      for (const name of names) await createRecord(name);
      const page = await json<Page>(
        await platform.call(
          'GET',
          `/record?filter=${encodeURIComponent('name~List %;moduleId=' + moduleId)}&order=name;DESC&offset=1&limit=2`,
        ),
      );
      expect(page.items.map((item) => item.name)).toEqual(['List C', 'List B']);
      expect(page.meta).toEqual({ total: 4, offset: 1, limit: 2 });
      const either = await json<Page>(
        await platform.call(
          'GET',
          `/record?filter=${encodeURIComponent('name=(List A|List D)')}&order=name;ASC`,
        ),
      );
      expect(either.items.map((item) => item.name)).toEqual(['List A', 'List D']);
    });

    test("spaces and modules list and read; module items are that module's records", async () => {
      const spaces = await json<Page>(await platform.call('GET', '/space'));
      expect(spaces.items.some((space) => space.id === spaceId && space.name === 'Sales')).toBe(true);
      const module = await json<Entity>(await platform.call('GET', `/module/${moduleId}`));
      expect(module).toMatchObject({ id: moduleId, spaceId, name: 'Deals' });
      const record = await createRecord('Item');
      const items = await json<Page>(
        await platform.call('GET', `/module/${moduleId}/item?filter=id=${record.id}`),
      );
      expect(items.items.map((item) => item.id)).toEqual([record.id]);
      expect((await platform.call('GET', `/module/${moduleId}/item/${record.id}`)).status).toBe(200);
    });

    test('a record of a missing module is refused and nothing is written', async () => {
      const before = await recordCount();
      const response = await platform.call('POST', '/record', { body: { moduleId: 999999, name: 'Orphan' } });
      expect(response.status).toBe(400);
      expect((await json(response)).message).toContain('module 999999 does not exist');
      expect(await recordCount()).toBe(before);
    });
  });

  describe('Idempotency-Key', () => {
    test('a repeated POST appends nothing and answers as the first time', async () => {
      const before = await recordCount();
      const first = await platform.call('POST', '/record', {
        body: { moduleId, name: 'Once' },
        headers: { 'Idempotency-Key': 'key-1' },
      });
      const second = await platform.call('POST', '/record', {
        body: { moduleId, name: 'Once' },
        headers: { 'Idempotency-Key': 'key-1' },
      });
      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      const [a, b] = [await json<Entity>(first), await json<Entity>(second)];
      expect(b).toEqual(a);
      expect(second.headers.get('x-position')).toBe(first.headers.get('x-position'));
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(await recordCount()).toBe(before + 1);
    });

    test('the same key with another body is refused', async () => {
      await platform.call('POST', '/record', {
        body: { moduleId, name: 'One' },
        headers: { 'Idempotency-Key': 'key-2' },
      });
      const reused = await platform.call('POST', '/record', {
        body: { moduleId, name: 'Other' },
        headers: { 'Idempotency-Key': 'key-2' },
      });
      expect(reused.status).toBe(422);
      expect((await json(reused)).error).toBe('idempotency_key_reused');
    });
  });

  describe('authentication and tenancy', () => {
    test('no token is 401, a wrong token is 401, X-Authorization works', async () => {
      const anonymous = await fetch(`${platform.api}/record`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="records-platform"');
      expect(
        (await fetch(`${platform.api}/record`, { headers: { Authorization: 'Bearer rpt_wrong' } })).status,
      ).toBe(401);
      expect(
        (await fetch(`${platform.api}/record`, { headers: { Authorization: 'Basic abc' } })).status,
      ).toBe(401);
      expect(
        (await fetch(`${platform.api}/record`, { headers: { 'X-Authorization': `Bearer ${ADMIN_TOKEN}` } }))
          .status,
      ).toBe(200);
    });

    test('a token of one system is worthless on another', async () => {
      expect(await statusWithHost('acme.localhost', '/api/record')).toBe(401);
      expect(await statusWithHost('test.localhost', '/api/record')).toBe(200);
    });

    test('a subdomain that is no valid system name is refused', async () => {
      expect(await statusWithHost('bad_name!.localhost', '/api/record')).toBe(404);
    });
  });

  describe('bad input gets a clear 4xx and writes nothing', () => {
    const cases: Array<{
      name: string;
      method: string;
      path: string;
      body?: unknown;
      rawBody?: string;
      headers?: Record<string, string>;
      status: number;
      code: string;
      mentions: string;
    }> = [
      {
        name: 'malformed JSON',
        method: 'POST',
        path: '/record',
        rawBody: '{"moduleId": 1,',
        headers: { 'Content-Type': 'application/json' },
        status: 400,
        code: 'E4004',
        mentions: 'malformed JSON',
      },
      {
        name: 'wrong type',
        method: 'POST',
        path: '/record',
        body: { moduleId: 'one', name: 5 },
        status: 400,
        code: 'E4001',
        mentions: 'moduleId',
      },
      {
        name: 'unknown body key',
        method: 'POST',
        path: '/record',
        body: { moduleId: 1, name: 'x', colour: 'red' },
        status: 400,
        code: 'E4001',
        mentions: 'colour',
      },
      {
        name: 'not JSON',
        method: 'POST',
        path: '/record',
        rawBody: 'name=x',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        status: 415,
        code: 'E4150',
        mentions: 'application/json',
      },
      {
        name: 'oversize body',
        method: 'POST',
        path: '/record',
        rawBody: JSON.stringify({ moduleId: 1, name: 'x'.repeat(2_000_000) }),
        headers: { 'Content-Type': 'application/json' },
        status: 413,
        code: 'E4130',
        mentions: 'limit',
      },
      {
        name: 'unknown filter field',
        method: 'GET',
        path: `/record?filter=${encodeURIComponent('colour=red')}`,
        status: 400,
        code: 'E4003',
        mentions: 'unknown field "colour"',
      },
      {
        name: 'filter syntax error',
        method: 'GET',
        path: `/record?filter=${encodeURIComponent('name==x')}`,
        status: 400,
        code: 'E4002',
        mentions: 'position 4',
      },
      {
        name: 'huge limit',
        method: 'GET',
        path: '/record?limit=1000000',
        status: 400,
        code: 'E4001',
        mentions: 'limit must be at most 1000',
      },
      {
        name: 'non-integer id',
        method: 'GET',
        path: '/record/abc',
        status: 400,
        code: 'E4001',
        mentions: 'recordId',
      },
      {
        name: 'bad If-Match',
        method: 'PUT',
        path: '/record/1',
        body: { name: 'x' },
        headers: { 'If-Match': 'nonsense' },
        status: 412,
        code: 'E4120',
        mentions: 'If-Match',
      },
    ];

    test.each(cases)(
      '$name → $status $code',
      async ({ method, path, body, rawBody, headers, status, code, mentions }) => {
        const before = await recordCount();
        const response = await platform.call(method, path, {
          ...(body !== undefined && { body }),
          ...(rawBody !== undefined && { rawBody }),
          ...(headers && { headers }),
        });
        expect(response.status).toBe(status);
        const error = await json(response);
        expect(error.code).toBe(code);
        expect(String(error.message)).toContain(mentions);
        expect(typeof error.requestId).toBe('string');
        expect(response.headers.get('x-version')).toBe(API_VERSION);
        expect(await recordCount()).toBe(before);
      },
    );

    test('an unknown route is a JSON 404', async () => {
      const response = await platform.call('GET', '/nothing-here');
      expect(response.status).toBe(404);
      expect((await json(response)).code).toBe('E4040');
    });
  });

  describe('concurrency', () => {
    test('50 concurrent updates of one record: none lost, each applied or refused with 409/412', async () => {
      const record = await createRecord('Contended');
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          platform.call('PUT', `/record/${record.id}`, { body: { fields: { [`f${index}`]: index } } }),
        ),
      );
      const applied = responses
        .map((response, index) => ({ status: response.status, index }))
        .filter(({ status }) => status === 200);
      for (const response of responses) expect([200, 409, 412]).toContain(response.status);
      const final = await json<Entity>(await readWhenVisible(`/record/${record.id}`));
      const fields = final.fields as Record<string, number>;
      for (const { index } of applied) expect(fields[`f${index}`]).toBe(index);
      expect(Object.keys(fields)).toHaveLength(applied.length);
      expect(final.updatedAt).toBeDefined();
    });

    test('50 concurrent If-Match updates with the same ETag: exactly one wins, the rest get 412', async () => {
      const record = await createRecord('Raced');
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          platform.call('PUT', `/record/${record.id}`, {
            body: { name: `winner ${index}` },
            headers: { 'If-Match': 'W/"0"' },
          }),
        ),
      );
      const statuses = responses.map((response) => response.status);
      expect(statuses.filter((status) => status === 200)).toHaveLength(1);
      expect(statuses.filter((status) => status === 412)).toHaveLength(49);
    });
  });

  describe('operations', () => {
    test('HEAD answers like GET without a body', async () => {
      const record = await createRecord('Headed');
      const head = await platform.call('HEAD', `/record/${record.id}`);
      expect(head.status).toBe(200);
      expect(head.headers.get('etag')).toBe('W/"0"');
      expect(Number(head.headers.get('content-length'))).toBeGreaterThan(0);
      expect(await head.text()).toBe('');
    });

    test('health, readiness and metrics', async () => {
      const health = await fetch(`${platform.url}/healthz`);
      expect(health.status).toBe(200);
      expect(health.headers.get('x-version')).toBe(API_VERSION);
      const ready = await json(await fetch(`${platform.url}/readyz`));
      expect(ready.status).toBe('ready');
      const metrics = await (await fetch(`${platform.url}/metrics`)).text();
      expect(metrics).toMatch(/projection_lag_positions\{projection="records",version="1"\} \d+/);
      expect(metrics).toMatch(
        /projection_visible_lag_seconds\{quantile="0.99",projection="records"\} [0-9.e-]+/,
      );
    });

    test('API calls are metered per system and credential and readable through /usage', async () => {
      const before = await json<{ total: number }>(await platform.call('GET', '/usage'));
      await platform.call('GET', '/space');
      await platform.call('GET', '/space');
      const after = await json<{ total: number; items: Array<{ credential: string; calls: number }> }>(
        await platform.call('GET', '/usage'),
      );
      expect(after.total).toBe(before.total + 3);
      expect(after.items.some((row) => row.credential.startsWith('token:'))).toBe(true);
    });
  });

  describe('read-your-writes', () => {
    test('X-Min-Position up to the last write is served at once; a position never reached times out with 504', async () => {
      const created = await platform.call('POST', '/record', { body: { moduleId, name: 'Positioned' } });
      const position = created.headers.get('x-position')!;
      const id = (await json<Entity>(created)).id;
      const read = await platform.call('GET', `/record/${id}`, { headers: { 'X-Min-Position': position } });
      expect(read.status).toBe(200);
      const started = Date.now();
      const future = await platform.call('GET', `/record/${id}`, {
        headers: { 'X-Min-Position': String(BigInt(position) + 1_000_000n) },
      });
      expect(future.status).toBe(504);
      expect((await json(future)).code).toBe('E5040');
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    });

    test('a malformed X-Min-Position is a 400', async () => {
      const response = await platform.call('GET', '/record', { headers: { 'X-Min-Position': '12abc' } });
      expect(response.status).toBe(400);
    });
  });
}
