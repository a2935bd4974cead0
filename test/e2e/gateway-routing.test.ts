import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPERATIONS } from '../../contracts/api/index';
import { API_BASE } from '../../infra/http/operations';
import { describeContract } from '../support/adapter-report';
import { nginxBinary, startGateway, type Gateway } from '../support/gateway';

/**
 * The compose gateway's routing alone (nginx with `infra/docker/gateway.nginx.conf`, two loopback stand-ins
 * for the APIs that say who answered): reads go to the query API, writes and the sign-in routes, whatever
 * their method, to the command API. The production-stack test runs the real services behind it.
 */
jest.setTimeout(30_000);

const nginx = nginxBinary();

describeContract(
  'gateway routing',
  'nginx',
  nginx
    ? { kind: 'real-server', where: nginx }
    : { kind: 'skipped', reason: 'nginx not installed (apt-get install nginx-light)' },
  () => {
    const stubs: Server[] = [];
    let gateway: Gateway;
    let dir: string;

    /** An upstream that answers who it is, with the method, path and body it got. */
    async function stub(side: string): Promise<number> {
      const server = createServer((req, res) => {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (chunk: string) => (body += chunk));
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ side, method: req.method, url: req.url, body }));
        });
      });
      stubs.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return (server.address() as AddressInfo).port;
    }

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gateway-'));
      gateway = await startGateway(nginx!, dir, {
        query_api: [await stub('query')],
        command_api: [await stub('command')],
      });
    });

    afterAll(async () => {
      await gateway?.stop();
      await Promise.all(stubs.map((server) => new Promise((resolve) => server.close(resolve))));
      rmSync(dir, { recursive: true, force: true });
    });

    const through = async (method: string, path: string, body?: string) => {
      const response = await fetch(`${gateway.url}${path}`, {
        method,
        redirect: 'manual',
        ...(body !== undefined && {
          body,
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            origin: 'https://appleid.apple.com',
          },
        }),
      });
      return (await response.json()) as { side: string; method: string; url: string; body: string };
    };

    test('reads go to the query API, writes and the GETs that write to the command API', async () => {
      expect((await through('GET', '/api/space/1')).side).toBe('query');
      expect((await through('POST', '/api/space', 'name=x')).side).toBe('command');
      expect((await through('GET', '/api/auth/oauth/authorize?client_id=x')).side).toBe('command');
      expect((await through('GET', '/api/auth/apple')).side).toBe('command');
      expect((await through('GET', '/api/auth/google/callback?code=c&state=s')).side).toBe('command');
      expect((await through('GET', '/api/field/generate/5?recordId=3')).side).toBe('command');
      expect((await through('GET', '/api/field/5')).side).toBe('query');
      expect((await through('GET', '/api/system/acme/ai')).side).toBe('command');
      expect((await through('GET', '/api/system/acme/aix')).side).toBe('query');
      expect((await through('GET', '/api/dead-letter?limit=5')).side).toBe('command');
      expect((await through('GET', '/api/dead-letters')).side).toBe('query');
    });

    test('every GET its operation declares served by the command API goes there', async () => {
      const commandGets = OPERATIONS.filter((op) => op.method === 'get' && op.servedByCommandApi);
      expect(commandGets.length).toBeGreaterThan(0);
      for (const op of commandGets) {
        const path = `${API_BASE}${op.path.replace(/\{\w+\}/g, 'x1')}`;
        expect([path, (await through('GET', path)).side]).toEqual([path, 'command']);
      }
    });

    test("Apple's form post to the sign-in callback reaches the command API with its body", async () => {
      const form = 'code=c1&state=s1&user=%7B%22email%22%3A%22mia%40example.com%22%7D';
      expect(await through('POST', '/api/auth/apple/callback', form)).toEqual({
        side: 'command',
        method: 'POST',
        url: '/api/auth/apple/callback',
        body: form,
      });
    });
  },
);
