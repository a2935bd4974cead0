import fc from 'fast-check';
import { MAX_RENDERED_PROMPT_CHARS } from '../../contracts/ai-prompt';
import { startFakeOpenAi, type FakeChatRequest, type FakeOpenAi } from '../support/fake-openai';
import { json, startPlatform, type Entity, type TestPlatform } from '../support/platform';

/**
 * A model's numbers are untrusted input, and spending needs a right that says so. Through real HTTP against a
 * loopback model that answers any usage and any Retry-After: never a 500, never a wait past AI_TIMEOUT_MS,
 * never more charged than a call reserved, never a reservation left held; read-only rights spend nothing; a
 * prompt whose references expand past the cap is refused before any model is asked.
 */
const AI_TIMEOUT_MS = 1_000;
let fake: FakeOpenAi;
let platform: TestPlatform;
let moduleId: number;
let transformId: number;
let longTransformId: number;
let digestFieldId: number;
let summaryFieldId: number;
let descriptionKey: string;
let recordId: number;

async function call(method: string, path: string, body?: unknown, token?: string) {
  const response = await platform.call(method, path, {
    ...(body !== undefined && { body }),
    ...(token !== undefined && { headers: { Authorization: `Bearer ${token}` } }),
  });
  return { status: response.status, body: await json<Entity>(response) };
}

const balance = async () =>
  (await call('GET', '/ai/balance')).body as unknown as { tokens: number; spent: number; reserved: number };

/** What the platform reserves for a request (its characters at 3 a token, 8 a message, its output limit). */
function estimateOf(request: FakeChatRequest): number {
  const characters = request.messages.reduce((sum, message) => sum + message.content.length, 0);
  return Math.ceil(characters / 3) + 8 * request.messages.length + (request.max_tokens ?? 0);
}

/** A whole completion, as the fake's raw reply, with any `usage` at all. */
function completionWith(usage: unknown) {
  return {
    status: 200,
    body: {
      id: 'chatcmpl-x',
      object: 'chat.completion',
      created: 1,
      model: 'test-model',
      choices: [
        { index: 0, message: { role: 'assistant', content: '{"value":"ok"}' }, finish_reason: 'stop' },
      ],
      ...(usage !== undefined && { usage }),
    },
  };
}

const preview = (token?: string, description = 'a deal') =>
  call(
    'POST',
    `/column-data-transform/${transformId}/preview`,
    { prompt: `SUMMARY: {{${descriptionKey}}}`, preview: { [descriptionKey]: description } },
    token,
  );

beforeAll(async () => {
  fake = await startFakeOpenAi();
  platform = await startPlatform({
    AI_URL: fake.baseUrl,
    AI_API_KEY: 'test-key',
    AI_MODEL: 'test-model',
    AI_TIMEOUT_MS: String(AI_TIMEOUT_MS),
    AI_EXECUTE_WAIT_MS: '5000',
  });
  const space = (await call('POST', '/space', { name: 'Sales' })).body;
  moduleId = (await call('POST', '/module', { spaceId: space.id, name: 'Leads' })).body.id;
  const description = (await call('POST', '/field', { moduleId, name: 'Description', type: 'long_text' }))
    .body;
  descriptionKey = String(description.key);
  summaryFieldId = (await call('POST', '/field', { moduleId, name: 'Summary', type: 'text' })).body.id;
  const created = await call('POST', '/ai/column-data-transform', {
    name: 'Summarise',
    moduleId,
    fieldId: summaryFieldId,
    prompt: `SUMMARY: {{${descriptionKey}}}`,
  });
  expect(created.status).toBe(201);
  transformId = created.body.id;
  expect((await call('POST', '/ai/balance/top-up', { tokens: 10_000_000 })).status).toBe(201);
  recordId = (
    await call('POST', '/record', {
      moduleId,
      name: 'Long',
      fields: { [descriptionKey]: 'x'.repeat(10_000) },
    })
  ).body.id;
});
afterAll(async () => {
  await platform.stop();
  await fake.close();
});
beforeEach(() => {
  fake.mode = 'normal';
  fake.chatReplies.length = 0;
  fake.chatReply = undefined;
});

/** Any number a model could report, and things that are no number. */
const anyCount = fc.oneof(
  fc.integer({ min: -2_000_000, max: 2_000_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(1e308, -1e308, 1_000_000, 0.5, -1, 'NaN', '12', '', null, true, {}),
);
const anyUsage = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.record({ prompt_tokens: anyCount, completion_tokens: anyCount, total_tokens: anyCount }),
  fc.record({ prompt_tokens: anyCount }, { requiredKeys: [] }),
);

describe("the model's usage", () => {
  test('any usage: the preview answers, charges a whole number within its reservation, and holds nothing after', async () => {
    await fc.assert(
      fc.asyncProperty(anyUsage, async (usage) => {
        const before = await balance();
        fake.chatReplies.push(completionWith(usage));
        const answered = await preview();
        expect([usage, answered.status]).toEqual([usage, 201]);
        const after = await balance();
        const charged = after.spent - before.spent;
        expect(answered.body.tokens).toBe(charged);
        expect(Number.isSafeInteger(charged)).toBe(true);
        expect(charged).toBeGreaterThanOrEqual(0);
        expect(charged).toBeLessThanOrEqual(estimateOf(fake.chatRequests.at(-1)!));
        expect(after.reserved).toBe(0);
        expect(after.tokens).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 40 },
    );
  });

  test('reproduction: 1,000,000 reported tokens charge what was reserved, the balance stays above zero', async () => {
    const before = await balance();
    fake.chatReplies.push(
      completionWith({ prompt_tokens: 1_000_000, completion_tokens: 0, total_tokens: 1 }),
    );
    const answered = await preview();
    expect(answered.status).toBe(201);
    const after = await balance();
    expect(after.spent - before.spent).toBe(estimateOf(fake.chatRequests.at(-1)!));
    expect(after).toMatchObject({ reserved: 0 });
  });
});

describe("the model's Retry-After", () => {
  const anyRetryAfter = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.integer({ min: -10, max: 100_000 }).map(String),
    fc.constantFrom('3600', '1e308', 'NaN', '-1', '0x10', ' 1', 'Fri, 31 Dec 9999 23:59:59 GMT', '0.2'),
    fc
      .date({ min: new Date(2000, 0, 1), max: new Date(2200, 0, 1), noInvalidDate: true })
      .map((date) => date.toUTCString()),
  );

  test('any Retry-After: the preview answers within AI_TIMEOUT_MS (plus slack), never a 500, nothing held', async () => {
    await fc.assert(
      fc.asyncProperty(anyRetryAfter, async (retryAfter) => {
        fake.chatReplies.push(
          { status: 429, headers: { 'retry-after': retryAfter }, body: { error: { message: 'slow down' } } },
          completionWith({ prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 }),
        );
        const started = Date.now();
        const answered = await preview();
        expect([retryAfter, [201, 503, 504].includes(answered.status)]).toEqual([retryAfter, true]);
        expect(Date.now() - started).toBeLessThan(AI_TIMEOUT_MS + 1_500);
        expect((await balance()).reserved).toBe(0);
      }),
      { numRuns: 12 },
    );
  });

  test('reproduction: Retry-After 3600 is a 503 at once, not an hour of waiting; nothing spent', async () => {
    const before = await balance();
    fake.chatReplies.push({
      status: 429,
      headers: { 'retry-after': '3600' },
      body: { error: { message: 'slow down' } },
    });
    const started = Date.now();
    const answered = await preview();
    expect(answered.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(AI_TIMEOUT_MS);
    expect(await balance()).toMatchObject({ spent: before.spent, reserved: 0 });
  });
});

describe('spending needs a right that says so', () => {
  test('read-only rights get 403 from the preview and GET /field/generate, and nothing is asked or spent', async () => {
    const readOnly = String(
      (
        await call('POST', '/auth/1/token', {
          name: 'reader',
          permissions: { columnDataTransform: ['read'], field: ['read'], record: ['read'] },
        })
      ).body.token,
    );
    const before = await balance();
    const asked = fake.chatRequests.length;
    expect((await preview(readOnly)).status).toBe(403);
    expect((await call('GET', `/field/generate/${summaryFieldId}`, undefined, readOnly)).status).toBe(403);
    expect(fake.chatRequests.length).toBe(asked);
    expect((await balance()).spent).toBe(before.spent);

    const writer = String(
      (
        await call('POST', '/auth/1/token', {
          name: 'writer',
          permissions: {
            columnDataTransform: ['read', 'update'],
            field: ['read'],
            record: ['read', 'update'],
          },
        })
      ).body.token,
    );
    fake.chatReply = () => '{"value":"ok"}';
    expect((await preview(writer)).status).toBe(201);
    expect((await call('GET', `/field/generate/${summaryFieldId}`, undefined, writer)).status).toBe(200);
  });
});

describe('the rendered prompt is bounded', () => {
  // 30 references to a 10,000-character value: 300,000 characters once filled in.
  const longPrompt = () => `SUMMARY: ${`{{${descriptionKey}}} `.repeat(30)}`;

  beforeAll(async () => {
    digestFieldId = (await call('POST', '/field', { moduleId, name: 'Digest', type: 'text' })).body.id;
    const created = await call('POST', '/ai/column-data-transform', {
      name: 'Repeat',
      moduleId,
      fieldId: digestFieldId,
      prompt: longPrompt(),
    });
    expect(created.status).toBe(201);
    longTransformId = created.body.id;
  });

  test('a preview, an execute and a generation whose prompt would pass the cap ask nothing and say why', async () => {
    const asked = fake.chatRequests.length;
    const refused = await call('POST', `/column-data-transform/${transformId}/preview`, {
      prompt: longPrompt(),
      preview: { [descriptionKey]: 'x'.repeat(10_000) },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain(`longer than ${MAX_RENDERED_PROMPT_CHARS} characters`);

    const executed = await call('POST', `/column-data-transform/${longTransformId}/execute`, {
      ids: [recordId],
    });
    expect(executed.status).toBe(201);
    expect(executed.body).toMatchObject({ status: 'finished', failed: 1 });
    const [item] = executed.body.items as Array<{ status: string; reason: string; tokens: number }>;
    expect(item).toMatchObject({ status: 'failed', tokens: 0 });
    expect(item!.reason).toContain(`longer than ${MAX_RENDERED_PROMPT_CHARS} characters`);

    // The field's transform guides its generated values.
    const generated = await call('GET', `/field/generate/${digestFieldId}?recordId=${recordId}`);
    expect(generated.status).toBe(400);
    expect(generated.body.message).toContain(`longer than ${MAX_RENDERED_PROMPT_CHARS} characters`);
    expect(fake.chatRequests.length).toBe(asked);
  });
});
