import type { Request } from 'express';
import { mayReadMetrics } from '../../infra/http/app';
import { startPlatform, type TestPlatform } from '../support/platform';

/** `/metrics` is protected by default: a bearer token when METRICS_TOKEN is set, else this host only. */
jest.setTimeout(60_000);

const METRICS_TOKEN = 'metrics-token-0123456789abcdefghij';

describe('with METRICS_TOKEN', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startPlatform({ METRICS_TOKEN });
  });
  afterAll(() => platform.stop());

  const scrape = (headers: Record<string, string> = {}) => fetch(`${platform.url}/metrics`, { headers });

  test('refused without the token, with a wrong one, or with the token in another scheme', async () => {
    const attempts: Record<string, string>[] = [
      {},
      { Authorization: 'Bearer wrong-token-0123456789abcdefghijkl' },
      { Authorization: `Bearer ${METRICS_TOKEN}x` },
      { Authorization: `Basic ${Buffer.from(`metrics:${METRICS_TOKEN}`).toString('base64')}` },
      { Authorization: METRICS_TOKEN },
    ];
    for (const headers of attempts) {
      const refused = await scrape(headers);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer /);
      const body = (await refused.json()) as Record<string, unknown>;
      expect(body).toMatchObject({
        error: 'unauthorized',
        message: expect.stringContaining('METRICS_TOKEN'),
      });
      expect(JSON.stringify(body)).not.toContain('projection_lag');
    }
  });

  test('served with the token, as Prometheus scrapes it', async () => {
    const served = await scrape({ Authorization: `Bearer ${METRICS_TOKEN}` });
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await served.text()).toContain('projection_lag_positions');
  });

  test("the API's own credentials do not open it", async () => {
    expect((await platform.call('GET', '/../metrics')).status).not.toBe(200);
    const admin = await fetch(`${platform.url}/metrics`, {
      headers: { Authorization: 'Bearer rpt_test-admin-token-0123456789abcdef' },
    });
    expect(admin.status).toBe(401);
  });
});

describe('without METRICS_TOKEN', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startPlatform();
  });
  afterAll(() => platform.stop());

  test('served to a direct connection from this host', async () => {
    const served = await fetch(`${platform.url}/metrics`);
    expect(served.status).toBe(200);
    expect(await served.text()).toContain('projection_lag_positions');
  });

  test('refused through a proxy on this host (a forwarding header), which may relay anyone', async () => {
    const proxied: Record<string, string>[] = [
      { 'X-Forwarded-For': '203.0.113.9' },
      { Forwarded: 'for=203.0.113.9' },
    ];
    for (const headers of proxied) {
      const refused = await fetch(`${platform.url}/metrics`, { headers });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ message: expect.stringContaining('METRICS_TOKEN') });
    }
  });
});

test('without a token only loopback connections may read; with one, only the token, from anywhere', () => {
  const request = (remoteAddress: string | undefined, headers: Record<string, string> = {}) =>
    ({ socket: { remoteAddress }, headers }) as unknown as Pick<Request, 'socket' | 'headers'>;
  for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1'])
    expect(mayReadMetrics(request(address), undefined)).toBe(true);
  for (const address of ['10.0.0.5', '192.168.1.2', '::ffff:10.0.0.5', 'fe80::1', '172.17.0.1', undefined])
    expect(mayReadMetrics(request(address), undefined)).toBe(false);
  const bearer = { authorization: `Bearer ${METRICS_TOKEN}` };
  expect(mayReadMetrics(request('10.0.0.5', bearer), METRICS_TOKEN)).toBe(true);
  expect(
    mayReadMetrics(request('10.0.0.5', { authorization: `bearer ${METRICS_TOKEN}` }), METRICS_TOKEN),
  ).toBe(true);
  expect(mayReadMetrics(request('127.0.0.1'), METRICS_TOKEN)).toBe(false);
  expect(mayReadMetrics(request('10.0.0.5', { authorization: 'Bearer ' }), METRICS_TOKEN)).toBe(false);
});
