import fc from 'fast-check';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardedHttp, isNonPublicAddress, MAX_RESPONSE_BYTES } from '../../infra/outbound/guarded-http';
import { OutboundError } from '../../infra/outbound/port';

describe('SSRF guard: which addresses are not public', () => {
  test.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.20.0.1', true],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['::1', true],
    ['fe80::1', true],
    ['fd00::1', true],
    ['::ffff:127.0.0.1', true],
    ['not-an-ip', true],
    ['93.184.216.34', false],
    ['8.8.8.8', false],
    ['2606:4700:4700::1111', false],
  ])('%s → %s', (address, expected) => {
    expect(isNonPublicAddress(address)).toBe(expected);
  });
});

describe('guarded outbound HTTP', () => {
  let server: Server;
  let port: number;
  const received: Array<{ url: string; body: string }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push({ url: req.url ?? '', body });
        if (req.url === '/redirect') {
          res.writeHead(302, { location: 'http://169.254.169.254/latest' });
          res.end();
        } else if (req.url === '/big') {
          res.end('x'.repeat(MAX_RESPONSE_BYTES + 1000));
        } else if (req.url === '/slow') {
          // never answers
        } else if (req.url === '/trickle') {
          // Never idle, never done: a byte every 20 ms.
          res.writeHead(200, { 'content-length': '100000' });
          const timer = setInterval(() => res.write('x'), 20);
          res.on('close', () => clearInterval(timer));
        } else if (req.url === '/endless') {
          res.writeHead(200);
          const more = () => {
            while (!res.destroyed && res.write(Buffer.alloc(16 * 1024, 'e')));
          };
          res.on('drain', more);
          more();
        } else if (req.url === '/cut') {
          res.writeHead(200, { 'content-length': '1000' });
          res.write('the beginning');
          setTimeout(() => res.destroy(), 20);
        } else {
          res.end('thanks');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  test('refuses a host that resolves to a private address, before connecting', async () => {
    const http = guardedHttp({ allowNonPublic: false, timeoutMs: 2000, resolve: async () => ['10.0.0.5'] });
    await expect(http.postJson('https://hooks.example.com/x', {})).rejects.toMatchObject({
      reason: 'refused-address',
    });
    await expect(
      guardedHttp({ allowNonPublic: false, timeoutMs: 2000 }).postJson(`http://127.0.0.1:${port}/x`, {}),
    ).rejects.toBeInstanceOf(OutboundError);
    expect(received).toEqual([]);
  });

  test('connects to the address it checked (pinned), posts JSON, and returns the answer', async () => {
    // `hooks.invalid` cannot resolve through DNS: the call reaches the server only through the pinned address.
    const http = guardedHttp({ allowNonPublic: true, timeoutMs: 2000, resolve: async () => ['127.0.0.1'] });
    const answer = await http.postJson(`http://hooks.invalid:${port}/hook`, { a: 1 });
    expect(answer).toMatchObject({ status: 200, body: 'thanks' });
    expect(received.at(-1)).toEqual({ url: '/hook', body: '{"a":1}' });
  });

  test("any header a user computes is sent as it is or refused as the call's own fault (invalid-request), never thrown by node", async () => {
    const http = guardedHttp({ allowNonPublic: true, timeoutMs: 2000 });
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 20 }),
        fc.string({ unit: 'binary', maxLength: 40 }),
        async (name, value) => {
          const call = http.request({
            method: 'GET',
            url: `http://127.0.0.1:${port}/h`,
            headers: { [name]: value },
          });
          const outcome = await call.then(
            (answer) => answer.status,
            (error: unknown) => error,
          );
          if (typeof outcome === 'number') expect(outcome).toBe(200);
          else expect(outcome).toMatchObject({ name: 'OutboundError', reason: 'invalid-request' });
        },
      ),
      { numRuns: 150 },
    );
    await expect(
      http.request({ method: 'GET', url: `http://127.0.0.1:${port}/h`, headers: { 'x-price': '€' } }),
    ).rejects.toMatchObject({ reason: 'invalid-request', message: expect.stringContaining('x-price') });
    await expect(http.request({ method: 'GET', url: 'not an address' })).rejects.toMatchObject({
      reason: 'invalid-request',
    });
  });

  test('returns a redirect without following it, and cuts long answers', async () => {
    const http = guardedHttp({ allowNonPublic: true, timeoutMs: 2000 });
    expect((await http.postJson(`http://127.0.0.1:${port}/redirect`, {})).status).toBe(302);
    expect(received.filter((request) => request.url === '/latest')).toEqual([]);
    expect((await http.postJson(`http://127.0.0.1:${port}/big`, {})).body).toHaveLength(MAX_RESPONSE_BYTES);
  });

  test('a server that trickles its answer meets the deadline of the whole call', async () => {
    const http = guardedHttp({ allowNonPublic: true, timeoutMs: 300 });
    await expect(http.postJson(`http://127.0.0.1:${port}/trickle`, {})).rejects.toMatchObject({
      reason: 'timeout',
    });
  });

  test('an endless answer is cut at the limit without being read to its end', async () => {
    const http = guardedHttp({ allowNonPublic: true, timeoutMs: 60_000 });
    const answer = await http.postJson(`http://127.0.0.1:${port}/endless`, {});
    expect(answer).toMatchObject({ status: 200, body: 'e'.repeat(MAX_RESPONSE_BYTES) });
  });

  test('an answer cut short by the server is unreachable, not a hang', async () => {
    const http = guardedHttp({ allowNonPublic: true, timeoutMs: 60_000 });
    await expect(http.postJson(`http://127.0.0.1:${port}/cut`, {})).rejects.toMatchObject({
      reason: 'unreachable',
    });
  });

  test('gives up after the timeout, and says when a host is unreachable', async () => {
    const http = guardedHttp({ allowNonPublic: true, timeoutMs: 300 });
    await expect(http.postJson(`http://127.0.0.1:${port}/slow`, {})).rejects.toMatchObject({
      reason: 'timeout',
    });
    await expect(http.postJson('http://127.0.0.1:9/closed', {})).rejects.toMatchObject({
      reason: 'unreachable',
    });
    await expect(
      guardedHttp({ allowNonPublic: true, timeoutMs: 300, resolve: async () => [] }).postJson(
        'http://nowhere.invalid/',
        {},
      ),
    ).rejects.toMatchObject({ reason: 'unreachable' });
  });
});
