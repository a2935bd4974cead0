import fc from 'fast-check';
import { REFUSED_RESPONSE_HEADERS } from '../../contracts/hook-response-headers';
import { requestAsHost, type HostAnswer } from '../support/host-call';
import { json, startPlatform, type Entity, type TestPlatform } from '../support/platform';

const BASE_HOST = 'records.test';
const HOOK_HOST = 'hooks.example';

type Answer = HostAnswer;

/** One request to the platform with this Host header. */
function callAs(url: string, host: string, method: string, path: string, body?: string): Promise<Answer> {
  return requestAsHost(url, host, method, path, { agent: false, ...(body !== undefined && { body }) });
}

/** The sandbox every hook answer carries. */
function expectSandboxed(answer: Answer): void {
  expect(answer.headers['content-security-policy']).toBe('sandbox');
  expect(answer.headers['x-content-type-options']).toBe('nosniff');
  expect(answer.headers['set-cookie']).toBeUndefined();
}

/** Webhook responses on a platform whose hooks are published at HOOK_BASE_URL on a host of their own. */
describe('hook answers', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startPlatform({ BASE_HOST, HOOK_BASE_URL: `http://${HOOK_HOST}/hook` });
  });
  afterAll(() => platform.stop());

  async function hookWithScenario(steps: unknown[]): Promise<{ key: string; scenarioId: number }> {
    const hook = await json<Entity & { key: string; url: string }>(
      await platform.call('POST', '/webhook', { body: { name: 'Answers' } }),
    );
    expect(hook.url).toBe(`http://${HOOK_HOST}/hook/${hook.key}`);
    const scenario = await platform.call('POST', '/scenario', {
      body: { name: 'Answer', webhookId: hook.id, steps },
    });
    expect(scenario.status).toBe(201);
    return { key: hook.key, scenarioId: (await json<Entity>(scenario)).id };
  }

  test("the issue's reproduction: a scenario cannot set a cookie, and its page is never served on a system's host", async () => {
    const page = '<html><script>document.title = document.cookie</script></html>';
    const cookie = `rp_session=stolen; Domain=${BASE_HOST}; Path=/`;
    const refused = await platform.call('POST', '/scenario', {
      body: {
        name: 'Cookie jar',
        steps: [
          {
            kind: 'webhookResponse',
            status: 200,
            body: page,
            headers: [
              { name: 'Content-Type', value: 'text/html' },
              { name: 'Set-Cookie', value: cookie },
            ],
          },
        ],
      },
    });
    expect(refused.status).toBe(400);
    const refusal = await json<{ message: string; details: Array<{ path: string }> }>(refused);
    expect(refusal.message).toMatch(/steps\.0\.headers\.1\.name: a Webhook response may not set Set-Cookie/);

    const { key } = await hookWithScenario([
      {
        kind: 'webhookResponse',
        status: 200,
        body: page,
        headers: [{ name: 'Content-Type', value: 'text/html' }],
      },
    ]);
    // Through a system's host (and the base host, and the platform's address): not served, nothing run.
    for (const host of [`test.${BASE_HOST}`, `acme.${BASE_HOST}:8080`, BASE_HOST, '127.0.0.1']) {
      const elsewhere = await callAs(platform.url, host, 'GET', `/hook/${key}`);
      expect(elsewhere.status).toBe(404);
      expect(elsewhere.text).not.toContain('<script>');
      expect(elsewhere.headers['content-type']).toMatch(/^application\/json/);
      expectSandboxed(elsewhere);
    }
    // On the hook host: the page, sandboxed (no script runs, no type sniffed), without a cookie.
    const answer = await callAs(platform.url, `${HOOK_HOST}:80`, 'GET', `/hook/${key}`);
    expect(answer.status).toBe(200);
    expect(answer.text).toBe(page);
    expect(answer.headers['content-type']).toMatch(/^text\/html/);
    expectSandboxed(answer);
  });

  test('every hook answer is sandboxed: Accepted, a refusal, an unknown hook, a failed run', async () => {
    const bare = await json<Entity & { key: string }>(
      await platform.call('POST', '/webhook', { body: { name: 'Bare' } }),
    );
    const accepted = await callAs(platform.url, HOOK_HOST, 'POST', `/hook/${bare.key}`, '{"a":1}');
    expect({ status: accepted.status, text: accepted.text }).toEqual({ status: 200, text: 'Accepted' });
    expectSandboxed(accepted);
    const malformed = await callAs(platform.url, HOOK_HOST, 'POST', `/hook/${bare.key}`, '{"a":');
    expect(malformed.status).toBe(400);
    expectSandboxed(malformed);
    const unknown = await callAs(platform.url, HOOK_HOST, 'GET', `/hook/${'x'.repeat(32)}`);
    expect(unknown.status).toBe(404);
    expectSandboxed(unknown);
    // A computed value a hook may not answer fails the run (500, the run says why), never a crash.
    const { key, scenarioId } = await hookWithScenario([
      { kind: 'webhookResponse', status: 200, headers: [{ name: 'X-Name', value: { expr: 'name' } }] },
    ]);
    const failed = await callAs(
      platform.url,
      HOOK_HOST,
      'GET',
      `/hook/${key}?name=${encodeURIComponent('Zoë ✓')}`,
    );
    expect({ status: failed.status, text: failed.text }).toEqual({
      status: 500,
      text: 'Scenario failed to complete.',
    });
    expectSandboxed(failed);
    const runs = await json<{ items: Array<{ error: string }> }>(
      await platform.call('GET', `/scenario/${scenarioId}/run`),
    );
    expect(runs.items[0]!.error).toMatch(/response header X-Name: a header value is Latin-1/);
    const latin1 = await callAs(
      platform.url,
      HOOK_HOST,
      'GET',
      `/hook/${key}?name=${encodeURIComponent('Zoë')}`,
    );
    expect(latin1.status).toBe(200);
    // Sent as Latin-1 bytes, not UTF-8 ones.
    expect(latin1.headers['x-name']).toBe('Zoë');
  });

  test('any header name and value at save: a 400 with the reason, or answered exactly; never a 500', async () => {
    const { key, scenarioId } = await hookWithScenario([{ kind: 'webhookResponse', status: 200 }]);
    const refusedNames = [...REFUSED_RESPONSE_HEADERS.keys(), 'proxy-authenticate', 'x-accel-redirect'];
    const anyCase = (name: string) =>
      fc
        .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
        .map((upper) => [...name].map((char, index) => (upper[index] ? char.toUpperCase() : char)).join(''));
    const name = fc.oneof(
      fc.stringMatching(/^X-[A-Za-z0-9!#$%&'*+.^_`|~-]{1,20}$/),
      fc.constantFrom(...refusedNames).chain(anyCase),
      fc.string({ unit: 'binary', maxLength: 20 }),
    );
    const value = fc.oneof(
      fc.string({ unit: fc.integer({ min: 0x21, max: 0xff }).map((code) => String.fromCharCode(code)) }),
      fc
        .tuple(fc.string(), fc.constantFrom('\r\n', '\n', '\0', '\x7f'), fc.string())
        .map((parts) => parts.join('')),
      fc.string({ unit: 'binary', minLength: 1 }),
    );
    await fc.assert(
      fc.asyncProperty(name, value, async (headerName, headerValue) => {
        const saved = await platform.call('PUT', `/scenario/${scenarioId}`, {
          body: {
            steps: [
              {
                kind: 'webhookResponse',
                status: 200,
                body: 'ok',
                headers: [{ name: headerName, value: headerValue }],
              },
            ],
          },
        });
        const mustRefuse =
          refusedNames.includes(headerName.toLowerCase()) ||
          /^(proxy|x-accel)-/i.test(headerName) ||
          !/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/.test(headerName) ||
          /[^\t\x20-\x7e\x80-\xff]/.test(headerValue) ||
          /^[ \t]|[ \t]$/.test(headerValue);
        expect(saved.status).toBe(mustRefuse ? 400 : 200);
        if (mustRefuse) {
          const refusal = await json<{ message: string; details: Array<{ path: string }> }>(saved);
          expect(refusal.details.map((detail) => detail.path).join()).toMatch(
            /steps\.0\.headers\.0\.(name|value)/,
          );
          expect(refusal.message.length).toBeGreaterThan(20);
          return;
        }
        let answer = await callAs(platform.url, HOOK_HOST, 'GET', `/hook/${key}`);
        // A hook takes 30 requests a second: wait out the limit.
        while (answer.status === 429) {
          await new Promise((resolve) => setTimeout(resolve, 1000));
          answer = await callAs(platform.url, HOOK_HOST, 'GET', `/hook/${key}`);
        }
        expect(answer.status).toBe(200);
        expect(answer.text).toBe('ok');
        expect(answer.headers[headerName.toLowerCase()]).toBe(headerValue);
        expectSandboxed(answer);
      }),
      { numRuns: 150 },
    );
  }, 60_000);

  test('the same checks on import: a document whose response sets a cookie is refused, nothing made', async () => {
    const { scenarioId } = await hookWithScenario([{ kind: 'webhookResponse', status: 204 }]);
    const exported = await json<{ scenario: { steps: unknown[] } }>(
      await platform.call('GET', `/scenario/${scenarioId}/export`),
    );
    exported.scenario.steps = [
      { kind: 'webhookResponse', status: 200, headers: [{ name: 'set-COOKIE', value: 'a=b' }] },
    ];
    const hooksBefore = await json<{ meta: { total: number } }>(await platform.call('GET', '/webhook'));
    const imported = await platform.call('POST', '/scenario/import', { body: { document: exported } });
    expect(imported.status).toBe(400);
    expect((await json<{ message: string }>(imported)).message).toMatch(/may not set set-COOKIE/);
    const hooksAfter = await json<{ meta: { total: number } }>(await platform.call('GET', '/webhook'));
    expect(hooksAfter.meta.total).toBe(hooksBefore.meta.total);
  });
});

/** The one-process default: no HOOK_BASE_URL, hooks at `http://<BASE_HOST>:<PORT>/hook`. */
describe('hook answers without HOOK_BASE_URL', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startPlatform({ BASE_HOST });
  });
  afterAll(() => platform.stop());

  test("served on the base host (and the platform's own address), never on a system's host", async () => {
    const hook = await json<Entity & { key: string; url: string }>(
      await platform.call('POST', '/webhook', { body: { name: 'Default' } }),
    );
    expect(hook.url).toMatch(new RegExp(`^http://${BASE_HOST.replace('.', '\\.')}:\\d+/hook/${hook.key}$`));
    const { port } = new URL(platform.url);
    for (const host of [`${BASE_HOST}:${port}`, `127.0.0.1:${port}`]) {
      const answer = await callAs(platform.url, host, 'GET', `/hook/${hook.key}`);
      expect({ status: answer.status, text: answer.text }).toEqual({ status: 200, text: 'Accepted' });
      expectSandboxed(answer);
    }
    for (const host of [`test.${BASE_HOST}:${port}`, `TEST.${BASE_HOST.toUpperCase()}`]) {
      const answer = await callAs(platform.url, host, 'GET', `/hook/${hook.key}`);
      expect(answer.status).toBe(404);
      expect(answer.text).not.toBe('Accepted');
      expectSandboxed(answer);
    }
    const queue = await json<{ meta: { total: number } }>(
      await platform.call('GET', `/webhook/${hook.id}/queue`),
    );
    expect(queue.meta.total).toBe(2);
  });
});
