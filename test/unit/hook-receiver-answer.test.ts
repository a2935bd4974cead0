import express from 'express';
import fc from 'fast-check';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { HookResponse } from '../../contracts/integrator';
import { responseHeaderProblem } from '../../contracts/hook-response-headers';
import { createHookReceiver } from '../../command-api/hooks/http-receiver';
import type { HookIntake, OpenHook } from '../../command-api/hooks/intake';
import { createLogger } from '../../infra/logging';

/**
 * The receiver sends whatever response a run made, even one kept in an event from before header values were
 * checked: headers a hook may not answer are dropped, the sandbox is always there, and it never answers 500.
 */
describe('the receiver answers a stored response', () => {
  let server: Server;
  let stored: HookResponse;

  beforeAll(async () => {
    const intake: HookIntake = {
      open: async () => ({}) as OpenHook,
      receive: async () => stored,
    };
    const receiver = createHookReceiver({ intake, logger: createLogger('silent'), trustedProxies: '' });
    const app = express();
    app.use(receiver.router);
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  /**
   * The headers as sent, by lower-case name (repeats joined as Node joins them): read from the raw list into an
   * object without a prototype, since Node's `headers` cannot hold one named `__proto__`.
   */
  function headersOf(raw: readonly string[]): Record<string, unknown> {
    const headers: Record<string, string> = Object.create(null) as Record<string, string>;
    for (let index = 0; index < raw.length; index += 2) {
      const name = raw[index]!.toLowerCase();
      const value = raw[index + 1]!;
      headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
    }
    return headers;
  }

  function get(): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
    const { port } = server.address() as AddressInfo;
    return new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: `/hook/${'a'.repeat(32)}`, agent: false },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: headersOf(res.rawHeaders), body }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  test('any stored headers: the good ones as they are, the others dropped, the sandbox always; never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            name: fc.oneof(
              fc.constantFrom(
                'Set-Cookie',
                'content-length',
                'Content-Security-Policy',
                'X-Content-Type-Options',
              ),
              fc.stringMatching(/^X-[A-Za-z0-9-]{1,12}$/),
              fc.string({ unit: 'binary', maxLength: 12 }),
            ),
            value: fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constant('a\r\nSet-Cookie: b=c')),
          }),
          { maxLength: 6 },
        ),
        fc.string({ unit: 'binary' }),
        async (headers, body) => {
          stored = { status: 200, headers, body };
          const answer = await get();
          expect(answer.status).toBe(200);
          expect(answer.body).toBe(Buffer.from(body, 'utf8').toString('utf8'));
          expect(answer.headers['set-cookie']).toBeUndefined();
          expect(answer.headers['content-security-policy']).toBe('sandbox');
          expect(answer.headers['x-content-type-options']).toBe('nosniff');
          const kept = headers.filter((header) => responseHeaderProblem(header.name, header.value) === null);
          for (const header of kept)
            if (
              !/^content-type$/i.test(header.name) &&
              !kept.some(
                (later) => later !== header && later.name.toLowerCase() === header.name.toLowerCase(),
              )
            )
              expect(answer.headers[header.name.toLowerCase()]).toBe(header.value);
        },
      ),
      { numRuns: 200 },
    );
  });

  test('a stored Content-Type is answered with the charset of the body', async () => {
    stored = {
      status: 201,
      headers: [{ name: 'Content-Type', value: 'text/html;charset=iso-8859-1' }],
      body: 'é',
    };
    const answer = await get();
    expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(answer.body).toBe('é');
  });
});
