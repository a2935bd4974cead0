import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';
import { callHost } from '../support/host-call';
import { filesHolding, json, startPlatform, type Entity, type TestPlatform } from '../support/platform';

/**
 * The model of a system: set by operator administrators with `PUT /system/{system}/ai`, used by that system's
 * AI routes from the next call, its key sealed and never shown; cleared, the deployment's model (here none).
 */
const SECRET_KEY = 'sk-system-secret-key-that-must-never-leak';
let fake: FakeOpenAi;
let platform: TestPlatform;
let acmeToken: string;

const acme = (method: string, path: string, body?: unknown) =>
  callHost(platform.url, 'acme.localhost', acmeToken, method, path, body);

beforeAll(async () => {
  fake = await startFakeOpenAi();
  platform = await startPlatform();
  const provisioned = await platform.call('POST', '/system', {
    body: { system: 'acme', adminEmail: 'owner@acme.example' },
  });
  acmeToken = String((await json(provisioned)).token);
});
afterAll(async () => {
  await platform.stop();
  await fake.close();
});

/** A transform in acme, and tokens to spend: what a preview needs. */
async function acmeTransform(): Promise<number> {
  const space = JSON.parse((await acme('POST', '/space', { name: 'S' })).text) as Entity;
  const module = JSON.parse((await acme('POST', '/module', { spaceId: space.id, name: 'M' })).text) as Entity;
  const field = JSON.parse(
    (await acme('POST', '/field', { moduleId: module.id, name: 'Summary', type: 'text' })).text,
  ) as Entity;
  await acme('POST', '/ai/balance/top-up', { tokens: 10_000 });
  const transform = JSON.parse(
    (
      await acme('POST', '/ai/column-data-transform', {
        name: 'T',
        moduleId: module.id,
        fieldId: field.id,
        prompt: 'p',
      })
    ).text,
  ) as Entity;
  return transform.id;
}

test('an operator administrator sets a system’s model; the system’s AI routes use it; the key never shows', async () => {
  const transformId = await acmeTransform();
  const preview = () =>
    acme('POST', `/column-data-transform/${transformId}/preview`, { prompt: 'say hi', preview: {} });
  expect((await preview()).status).toBe(501);
  expect(JSON.parse(await platform.call('GET', '/system/acme/ai').then((r) => r.text()))).toEqual({
    system: 'acme',
    source: 'none',
    baseUrl: null,
    model: null,
    hasApiKey: false,
    timeoutMs: null,
  });

  const set = await platform.call('PUT', '/system/acme/ai', {
    body: { baseUrl: fake.baseUrl, model: 'acme-model', apiKey: SECRET_KEY, timeoutMs: 5000 },
  });
  expect(set.status).toBe(200);
  const shown = await set.text();
  expect(JSON.parse(shown)).toEqual({
    system: 'acme',
    source: 'system',
    baseUrl: fake.baseUrl,
    model: 'acme-model',
    hasApiKey: true,
    timeoutMs: 5000,
  });
  expect(shown).not.toContain(SECRET_KEY);

  fake.chatReplies.push(JSON.stringify({ value: 'hello' }));
  const answered = await preview();
  expect(answered.status).toBe(201);
  expect(JSON.parse(answered.text)).toMatchObject({ value: 'hello', model: 'acme-model' });
  expect(fake.chatRequests.at(-1)!.model).toBe('acme-model');

  // The model changes, the key stays when left out.
  await platform.call('PUT', '/system/acme/ai', { body: { baseUrl: fake.baseUrl, model: 'acme-model-2' } });
  fake.chatReplies.push(JSON.stringify({ value: 'again' }));
  expect(JSON.parse((await preview()).text)).toMatchObject({ value: 'again' });
  expect(fake.chatRequests.at(-1)!.model).toBe('acme-model-2');
  expect(await platform.call('GET', '/system/acme/ai').then((r) => json(r))).toMatchObject({
    hasApiKey: true,
  });

  // The other system still has none.
  expect(await platform.call('GET', '/system/test/ai').then((r) => json(r))).toMatchObject({
    source: 'none',
  });
  // The key is stored sealed: it is in no store file as it was given.
  expect(filesHolding(platform.dataDir, SECRET_KEY)).toEqual([]);

  // A system's own deadline: a model slower than it is a 504 (E5041), and nothing is spent.
  await platform.call('PUT', '/system/acme/ai', {
    body: { baseUrl: fake.baseUrl, model: 'acme-model', timeoutMs: 300 },
  });
  const before = JSON.parse((await acme('GET', '/ai/balance')).text) as { spent: number };
  fake.mode = 'slow';
  const started = performance.now();
  const slow = await preview();
  fake.mode = 'normal';
  expect(slow.status).toBe(504);
  expect(JSON.parse(slow.text)).toMatchObject({ code: 'E5041' });
  // Two attempts of 300 ms and a backoff between them: far from the model's 3 s.
  expect(performance.now() - started).toBeLessThan(2500);
  expect(JSON.parse((await acme('GET', '/ai/balance')).text)).toMatchObject({
    spent: before.spent,
    reserved: 0,
  });

  const cleared = await platform.call('DELETE', '/system/acme/ai');
  expect(await json(cleared)).toMatchObject({ source: 'none' });
  expect((await preview()).status).toBe(501);
});

test('only operator administrators; the system must exist; the body is checked', async () => {
  expect((await acme('GET', '/system/acme/ai')).status).toBe(403);
  expect(
    (await acme('PUT', '/system/acme/ai', { baseUrl: 'http://169.254.169.254/v1', model: 'm' })).status,
  ).toBe(403);
  expect((await platform.call('GET', '/system/nowhere/ai')).status).toBe(404);
  expect((await platform.call('GET', '/system/Bad_Name/ai')).status).toBe(400);
  for (const body of [
    {},
    { baseUrl: 'ftp://x', model: 'm' },
    { baseUrl: fake.baseUrl },
    { baseUrl: fake.baseUrl, model: 'm', extra: 1 },
  ])
    expect((await platform.call('PUT', '/system/acme/ai', { body })).status).toBe(400);
});
