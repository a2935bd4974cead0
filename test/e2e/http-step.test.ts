import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { json, startPlatform, type Entity, type Page, type TestPlatform } from '../support/platform';

/**
 * The HTTP request step against a real server on loopback (the platform started with OUTBOUND_ALLOW_PRIVATE,
 * as private addresses are refused otherwise: see the last test). Each call goes through a webhook whose
 * scenario answers with the step's output, or fails with why.
 */
describe('HTTP request step', () => {
  let platform: TestPlatform;
  let guarded: TestPlatform;
  let service: Server;
  let base: string;
  const received: Array<{ method: string; url: string; headers: Record<string, unknown>; body: string }> = [];

  beforeAll(async () => {
    service = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
        const path = new URL(req.url!, 'http://x').pathname;
        if (path === '/json')
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"n":[1,2]}');
        else if (path === '/echo') res.writeHead(201, { 'content-type': 'application/json' }).end(body);
        else if (path === '/text') res.writeHead(200, { 'content-type': 'text/plain' }).end('plain words');
        else if (path === '/binary')
          res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0, 1, 2, 255]));
        else if (path === '/redirect') res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
        else if (path === '/bad-json')
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"cut":');
        else if (path === '/slow') setTimeout(() => res.writeHead(200).end('late'), 3_000).unref();
        else if (path === '/huge') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          const chunk = Buffer.alloc(64 * 1024, 'a');
          let sent = 0;
          const pump = (): void => {
            while (sent < 200 && res.write(chunk)) sent += 1;
            if (sent >= 200) res.end();
            else res.once('drain', pump);
          };
          pump();
        } else res.writeHead(404, { 'content-type': 'text/plain' }).end('no such thing');
      });
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
    platform = await startPlatform({ OUTBOUND_ALLOW_PRIVATE: 'true' });
    guarded = await startPlatform();
  });
  afterAll(async () => {
    await platform.stop();
    await guarded.stop();
    service.closeAllConnections();
    await new Promise((resolve) => service.close(resolve));
  });

  /** A hook whose scenario makes the call, then answers with its output. */
  async function hookCalling(
    on: TestPlatform,
    step: Record<string, unknown>,
  ): Promise<{ key: string; scenarioId: number }> {
    const hook = await json<Entity & { key: string }>(
      await on.call('POST', '/webhook', { body: { name: 'Calls' } }),
    );
    const scenario = await on.call('POST', '/scenario', {
      body: {
        name: 'Calls',
        webhookId: hook.id,
        steps: [
          { kind: 'httpRequest', ...step },
          { kind: 'webhookResponse', status: 200, body: { expr: '$step(0)' } },
        ],
      },
    });
    expect(scenario.status).toBe(201);
    return { key: hook.key, scenarioId: (await json<Entity>(scenario)).id };
  }

  async function call(on: TestPlatform, step: Record<string, unknown>, query = '') {
    const { key, scenarioId } = await hookCalling(on, step);
    const started = Date.now();
    const answer = await fetch(`${on.url}/hook/${key}${query}`);
    const text = await answer.text();
    const elapsedMs = Date.now() - started;
    if (answer.status === 200)
      return { output: JSON.parse(text) as Record<string, unknown>, error: undefined, elapsedMs };
    expect({ status: answer.status, text }).toEqual({ status: 500, text: 'Scenario failed to complete.' });
    for (let tries = 0; ; tries++) {
      const runs = await json<Page<{ status: string; error: string | null }>>(
        await on.call('GET', `/scenario/${scenarioId}/run`),
      );
      if (runs.items[0]?.status === 'failed')
        return { output: {} as Record<string, unknown>, error: runs.items[0].error!, elapsedMs };
      if (tries > 100) throw new Error('the run did not fail');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  test('a JSON answer is parsed, with its status and headers', async () => {
    const { output } = await call(platform, { url: { expr: `"${base}/json?order=" & order` } }, '?order=A-1');
    expect(output).toMatchObject({ status: 200, body: { ok: true, n: [1, 2] }, bytes: 21 });
    expect((output.headers as Record<string, string>)['content-type']).toBe('application/json');
    expect(received.at(-1)).toMatchObject({ method: 'GET', url: '/json?order=A-1' });
  });

  test('a mapped body goes as JSON with its type, mapped headers with it', async () => {
    const { output } = await call(
      platform,
      {
        method: 'POST',
        url: `${base}/echo`,
        headers: [{ name: 'X-Order', value: { expr: 'order' } }],
        body: { expr: '{"order": order, "lines": [1, 2]}' },
      },
      '?order=B-2',
    );
    expect(output).toMatchObject({ status: 201, body: { order: 'B-2', lines: [1, 2] } });
    expect(received.at(-1)!.headers).toMatchObject({
      'x-order': 'B-2',
      'content-type': 'application/json; charset=utf-8',
    });
  });

  test('text stays text, other types come as base64', async () => {
    expect((await call(platform, { url: `${base}/text` })).output.body).toBe('plain words');
    expect((await call(platform, { url: `${base}/binary` })).output.body).toEqual({
      encoding: 'base64',
      data: Buffer.from([0, 1, 2, 255]).toString('base64'),
    });
    expect((await call(platform, { url: `${base}/json`, parse: 'text' })).output.body).toBe(
      '{"ok":true,"n":[1,2]}',
    );
  });

  test('a redirect is answered, not followed', async () => {
    const { output } = await call(platform, { url: `${base}/redirect` });
    expect(output).toMatchObject({ status: 302 });
    expect((output.headers as Record<string, string>).location).toBe('http://169.254.169.254/');
  });

  test('an HTTP error fails the run unless the step takes it', async () => {
    expect((await call(platform, { url: `${base}/missing` })).error).toBe(
      `step 0 (httpRequest): GET ${base}/missing answered 404: no such thing`,
    );
    expect((await call(platform, { url: `${base}/missing`, failOnHttpError: false })).output).toMatchObject({
      status: 404,
      body: 'no such thing',
    });
  });

  test('a slow, huge, unparsable or unreachable answer fails the run at once, with why', async () => {
    const slow = await call(platform, { url: `${base}/slow`, timeoutMs: 300 });
    expect(slow.error).toBe(
      `step 0 (httpRequest): GET ${base}/slow: 127.0.0.1:${new URL(base).port} did not answer within 300 ms`,
    );
    expect(slow.elapsedMs).toBeLessThan(2_500);
    const huge = await call(platform, { url: `${base}/huge`, maxResponseBytes: 100_000 });
    expect(huge.error).toBe(`step 0 (httpRequest): GET ${base}/huge: the answer is longer than 100000 bytes`);
    expect((await call(platform, { url: `${base}/bad-json` })).error).toMatch(/the answer is not JSON/);
    expect((await call(platform, { url: 'http://127.0.0.1:1/' })).error).toMatch(/ECONNREFUSED/);
    expect((await call(platform, { url: { expr: 'nothing' } })).error).toBe(
      'step 0 (httpRequest): the URL must be an http(s) address, got null',
    );
    expect((await call(platform, { url: 'file:///etc/passwd' })).error).toMatch(/only http\(s\) addresses/);
    // And the integrator goes on serving.
    expect((await call(platform, { url: `${base}/json` })).output).toMatchObject({ status: 200 });
  });

  test('by default private, loopback and link-local addresses are refused', async () => {
    for (const url of [
      `${base}/json`,
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/',
      'http://10.0.0.1/',
    ])
      expect((await call(guarded, { url })).error).toMatch(/private or reserved address/);
  });

  test('a configuration out of bounds is refused when the scenario is saved', async () => {
    const hook = await json<Entity>(await platform.call('POST', '/webhook', { body: { name: 'Bounds' } }));
    for (const step of [
      { kind: 'httpRequest', url: base, timeoutMs: 60_000 },
      { kind: 'httpRequest', url: base, maxResponseBytes: 10_000_000 },
      { kind: 'httpRequest', url: base, method: 'TRACE' },
      { kind: 'httpRequest', url: base, headers: [{ name: 'Bad Name', value: 'x' }] },
    ])
      expect(
        (
          await platform.call('POST', '/scenario', {
            body: { name: 'Bounds', webhookId: hook.id, steps: [step] },
          })
        ).status,
      ).toBe(400);
  });
});
