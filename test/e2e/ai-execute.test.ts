import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeOpenAi, type FakeChatRequest, type FakeOpenAi } from '../support/fake-openai';
import { json, startPlatform, type Entity, type Page, type TestPlatform } from '../support/platform';

/**
 * Executes of saved transforms and validations, and the preview of a transform, against a loopback
 * OpenAI-compatible model: what is written, what is spent, what a second run costs, and every refusal.
 */
let fake: FakeOpenAi;
let platform: TestPlatform;
let leads: Entity;
const keys: Record<string, string> = {};
const fieldIds: Record<string, number> = {};
let lastPosition: string | null = null;

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await platform.call(method, path, { ...(body !== undefined && { body }), headers });
  lastPosition = response.headers.get('x-position') ?? lastPosition;
  return { status: response.status, headers: response.headers, body: await json<Entity>(response) };
}

/** A read that sees every write made so far. */
const read = <T = Entity>(path: string) =>
  platform
    .call('GET', path, lastPosition ? { headers: { 'X-Min-Position': lastPosition } } : {})
    .then(async (response) => ({ status: response.status, body: await json<T>(response) }));

const userText = (request: FakeChatRequest) => request.messages.at(-1)!.content;

/** The fake model: summaries are the text upper-cased, stages are read from the text, verdicts judge length. */
function answer(request: FakeChatRequest): string | undefined {
  const text = userText(request);
  if (text.startsWith('SUMMARY:')) return JSON.stringify({ value: text.slice(8).trim().toUpperCase() });
  if (text.startsWith('STAGE:')) return JSON.stringify({ value: text.includes('signed') ? 'won' : 'maybe' });
  if (text.startsWith('Rule:')) {
    const value = /Value: (.*)/.exec(text)?.[1] ?? '';
    return JSON.stringify({
      valid: value.length > 12,
      reason: value.length > 12 ? 'long enough' : 'too short',
    });
  }
  return undefined;
}

async function record(name: string, description: string): Promise<number> {
  return (
    await call('POST', '/record', { moduleId: leads.id, name, fields: { [keys.Description!]: description } })
  ).body.id;
}

async function transform(body: Record<string, unknown>): Promise<number> {
  const created = await call('POST', '/ai/column-data-transform', { name: 'T', moduleId: leads.id, ...body });
  expect(created.status).toBe(201);
  return created.body.id;
}

const balance = async () => (await read<{ tokens: number; spent: number }>('/ai/balance')).body;

beforeAll(async () => {
  fake = await startFakeOpenAi();
  fake.chatReply = answer;
  platform = await startPlatform({
    AI_URL: fake.baseUrl,
    AI_API_KEY: 'test-key',
    AI_MODEL: 'test-model',
    AI_CONCURRENCY: '4',
    AI_EXECUTE_WAIT_MS: '1500',
  });
  const space = (await call('POST', '/space', { name: 'Sales' })).body;
  leads = (await call('POST', '/module', { spaceId: space.id, name: 'Leads' })).body;
  // Not personal (an item shows no value of a personal field): these tests read the values items show.
  for (const [name, type, config, personal] of [
    ['Description', 'long_text', undefined, false],
    ['Summary', 'text', undefined, false],
    ['Stage', 'select', { options: ['new', 'won', 'lost'] }, false],
    ['Private', 'text', undefined, true],
  ] as const) {
    const field = (
      await call('POST', '/field', { moduleId: leads.id, name, type, personal, ...(config && { config }) })
    ).body;
    keys[name] = String(field.key);
    fieldIds[name] = field.id;
  }
  expect((await call('POST', '/ai/balance/top-up', { tokens: 100_000 })).status).toBe(201);
});
afterAll(async () => {
  await platform.stop();
  await fake.close();
});
beforeEach(() => {
  fake.mode = 'normal';
  fake.chatReplies.length = 0;
  fake.chatDelayMs = 0;
  fake.chatInFlightMax = 0;
});

describe('executing a transform', () => {
  test('each record is rewritten as a record update by the transform, spending what the model reports', async () => {
    const ids = [await record('Acme', 'first deal'), await record('Globex', 'second deal')];
    const transformId = await transform({
      fieldId: fieldIds.Summary,
      prompt: `SUMMARY: {{${keys.Description}}}`,
    });
    const before = await balance();
    const requestsBefore = fake.chatRequests.length;
    const executed = await call('POST', `/column-data-transform/${transformId}/execute`, { ids });
    expect(executed.status).toBe(201);
    expect(executed.body).toMatchObject({
      kind: 'transform',
      entityId: transformId,
      status: 'finished',
      total: 2,
      done: 2,
    });
    const items = executed.body.items as Array<Record<string, unknown>>;
    expect(items.map((item) => [item.recordId, item.status, item.value, item.cached])).toEqual([
      [ids[0], 'done', 'FIRST DEAL', false],
      [ids[1], 'done', 'SECOND DEAL', false],
    ]);
    expect(fake.chatRequests.length - requestsBefore).toBe(2);
    const asked = fake.chatRequests.at(-1)!;
    expect(asked.response_format).toEqual({ type: 'json_object' });
    expect(asked.messages[0]!.content).toMatch(/\{"value"/);

    expect((await read(`/record/${ids[0]}`)).body.fields).toMatchObject({ [keys.Summary!]: 'FIRST DEAL' });
    const history = await read<Page<Record<string, unknown>>>(
      `/audit?filter=streamId=record-test.${ids[0]};type=RecordUpdated`,
    );
    expect(history.body.items.map((entry) => entry.credentialId)).toEqual([`transform:${transformId}`]);

    const spent = items.reduce((sum, item) => sum + Number(item.tokens), 0);
    expect(spent).toBeGreaterThan(0);
    expect((await balance()).spent - before.spent).toBe(spent);
    const usage = await read<{ items: Array<Record<string, unknown>> }>('/ai/usage?group_by=configuration');
    expect(usage.body.items).toContainEqual(
      expect.objectContaining({
        configuration: { kind: 'transform', entityId: transformId },
        calls: 2,
        tokens: spent,
      }),
    );

    // The same again: the answers are kept, the values are there already: nothing spent, nothing written.
    const again = await call('POST', `/column-data-transform/${transformId}/execute`, { ids });
    expect(
      (again.body.items as Array<Record<string, unknown>>).map((item) => [
        item.status,
        item.tokens,
        item.cached,
      ]),
    ).toEqual([
      ['unchanged', 0, true],
      ['unchanged', 0, true],
    ]);
    expect(fake.chatRequests.length - requestsBefore).toBe(2);
    expect((await balance()).spent - before.spent).toBe(spent);

    const metrics = await (await fetch(`${platform.url}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(metrics)?.[1]);
    expect(value('ai_model_calls_total{outcome="answered"}')).toBeGreaterThanOrEqual(2);
    expect(value('ai_model_calls_total{outcome="cached"}')).toBeGreaterThanOrEqual(2);
    expect(value('ai_tokens_spent_total')).toBeGreaterThanOrEqual(spent);
    expect(value('ai_job_calls_in_flight')).toBe(0);
  });

  test('outcomes per record: skipped, a value the field refuses, malformed output, foreign and missing records', async () => {
    const filled = await record('Filled', 'has a stage');
    await call('PUT', `/record/${filled}`, { fields: { [keys.Stage!]: 'new' } });
    const signed = await record('Signed', 'contract signed');
    const vague = await record('Vague', 'who knows');
    const garbled = await record('Garbled', 'garble me');
    const other = (await call('POST', '/module', { spaceId: leads.spaceId, name: 'Other' })).body;
    const foreign = (await call('POST', '/record', { moduleId: other.id, name: 'Foreign' })).body.id;
    const transformId = await transform({
      fieldId: fieldIds.Stage,
      prompt: `STAGE: {{${keys.Description}}} {{name}}`,
      onlyEmpty: true,
    });
    fake.chatReply = (request) =>
      userText(request).includes('garble') ? 'Sure, the stage is won!' : answer(request);
    try {
      const executed = await call('POST', `/column-data-transform/${transformId}/execute`, {
        ids: [filled, signed, vague, garbled, foreign, 999_999],
      });
      expect(executed.status).toBe(201);
      const byId = new Map(
        (executed.body.items as Array<Record<string, unknown>>).map((item) => [item.recordId, item]),
      );
      expect(byId.get(filled)).toMatchObject({ status: 'skipped', tokens: 0 });
      expect(byId.get(signed)).toMatchObject({ status: 'done', value: 'won' });
      expect(byId.get(vague)).toMatchObject({ status: 'failed' });
      expect(String(byId.get(vague)!.reason)).toMatch(/must be one of: new, won, lost/);
      expect(byId.get(garbled)).toMatchObject({ status: 'failed' });
      expect(String(byId.get(garbled)!.reason)).toMatch(/no JSON object/);
      expect(String(byId.get(foreign)!.reason)).toMatch(/not in module/);
      expect(String(byId.get(999_999)!.reason)).toMatch(/not found/);
      expect(executed.body).toMatchObject({ done: 1, skipped: 1, failed: 4 });
      expect((await read(`/record/${vague}`)).body.fields).not.toHaveProperty(keys.Stage!);
    } finally {
      fake.chatReply = answer;
    }
  });

  test("a value written into a personal field is the record's only: the item shows none, and the kept answer is sealed", async () => {
    const id = await record('Initech', 'third deal');
    const transformId = await transform({
      fieldId: fieldIds.Private,
      prompt: `SUMMARY: {{${keys.Description}}}`,
    });
    const executed = await call('POST', `/column-data-transform/${transformId}/execute`, { ids: [id] });
    const [item] = executed.body.items as Array<Record<string, unknown>>;
    expect(item).toMatchObject({ recordId: id, status: 'done' });
    expect(item).not.toHaveProperty('value');
    expect((await read(`/record/${id}`)).body.fields).toMatchObject({ [keys.Private!]: 'THIRD DEAL' });
    const log = ['events.db', 'events.db-wal']
      .map((file) => readFileSync(join(platform.dataDir, file)).toString('latin1'))
      .join('');
    expect(log).not.toContain('THIRD DEAL');
  });

  test('a long text written is shown cut in the outcome; the record holds it whole', async () => {
    const id = await record('Long', 'short');
    const transformId = await transform({ fieldId: fieldIds.Description, prompt: 'LONG {{name}}' });
    const long = 'word '.repeat(900).trim();
    fake.chatReplies.push(JSON.stringify({ value: long }));
    const executed = await call('POST', `/column-data-transform/${transformId}/execute`, { ids: [id] });
    const item = (executed.body.items as Array<{ value: string; cut?: boolean; status: string }>)[0]!;
    expect(item).toMatchObject({ status: 'done', cut: true });
    expect(item.value).toBe(long.slice(0, 2000));
    expect((await read(`/record/${id}`)).body.fields).toMatchObject({ [keys.Description!]: long });
  });

  test('a rate limit is waited out and retried; the record is done', async () => {
    const id = await record('Retried', 'after a wait');
    const transformId = await transform({
      fieldId: fieldIds.Summary,
      prompt: `SUMMARY: {{${keys.Description}}}`,
    });
    fake.chatReplies.push({
      status: 429,
      body: { error: { message: 'Rate limit reached', type: 'requests' } },
      headers: { 'retry-after-ms': '50' },
    });
    const executed = await call('POST', `/column-data-transform/${transformId}/execute`, { ids: [id] });
    expect((executed.body.items as Array<Record<string, unknown>>)[0]).toMatchObject({
      status: 'done',
      value: 'AFTER A WAIT',
    });
  });

  test('a large execute answers 202 with its progress, and its job is followed to the end', async () => {
    const ids: number[] = [];
    for (let index = 0; index < 24; index++) ids.push(await record(`Bulk ${index}`, `bulk ${index}`));
    const transformId = await transform({
      fieldId: fieldIds.Summary,
      prompt: `SUMMARY: {{${keys.Description}}}`,
    });
    fake.chatDelayMs = 300;
    const started = await call('POST', `/column-data-transform/${transformId}/execute`, { ids });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ status: 'running', total: 24 });
    const location = started.headers.get('location')!;
    expect(location).toMatch(/\/ai\/job\/\d+$/);
    const jobPath = location.slice(location.indexOf('/ai/job/'));
    let job: Record<string, unknown> = {};
    for (let attempt = 0; attempt < 100 && job.status !== 'finished'; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      job = (await read(jobPath)).body;
    }
    expect(job).toMatchObject({ status: 'finished', total: 24, done: 24, failed: 0 });
    // At most AI_CONCURRENCY calls at once.
    expect(fake.chatInFlightMax).toBeLessThanOrEqual(4);
    expect(fake.chatInFlightMax).toBeGreaterThan(1);
    const items = await read<Page<Record<string, unknown>>>(
      `${jobPath}/item?filter=status=done&limit=5&order=recordId;ASC`,
    );
    expect(items.body.meta.total).toBe(24);
    expect(items.body.items[0]).toMatchObject({ recordId: ids[0], status: 'done', value: 'BULK 0' });
  });

  test('refused before anything runs: bad ids, unknown transform, no balance; nothing spent', async () => {
    const transformId = await transform({ fieldId: fieldIds.Summary, prompt: 'SUMMARY: x' });
    const path = `/column-data-transform/${transformId}/execute`;
    for (const body of [
      { ids: [] },
      { ids: [1, 1] },
      { ids: ['1'] },
      { ids: [0] },
      {},
      { ids: Array.from({ length: 10_001 }, (_, i) => i + 1) },
    ])
      expect((await call('POST', path, body)).status).toBe(400);
    expect((await call('POST', '/column-data-transform/987654/execute', { ids: [1] })).status).toBe(404);
    expect((await call('POST', '/column-data-transform/x1/execute', { ids: [1] })).status).toBe(400);
  });
});

describe('rights', () => {
  test('an execute needs the configuration read right and the record right it uses; a top-up is for administrators', async () => {
    const transformId = await transform({ fieldId: fieldIds.Summary, prompt: 'SUMMARY: x' });
    const id = await record('Guarded', 'guarded');
    const tokenWith = async (permissions: Record<string, string[]>) =>
      String((await call('POST', '/auth/1/token', { name: 'narrow', permissions })).body.token);
    const narrow: Array<Record<string, string[]>> = [
      { columnDataTransform: ['read'], record: ['read'] },
      { record: ['read', 'update'] },
    ];
    for (const permissions of narrow) {
      const token = await tokenWith(permissions);
      const refused = await call(
        'POST',
        `/column-data-transform/${transformId}/execute`,
        { ids: [id] },
        {
          Authorization: `Bearer ${token}`,
        },
      );
      expect([permissions, refused.status]).toEqual([permissions, 403]);
    }
    const allowed = await tokenWith({ columnDataTransform: ['read'], record: ['read', 'update'] });
    const executed = await call(
      'POST',
      `/column-data-transform/${transformId}/execute`,
      { ids: [id] },
      {
        Authorization: `Bearer ${allowed}`,
      },
    );
    expect(executed.status).toBe(201);
  });
});

describe('executing a validation', () => {
  test('verdicts become validation results; unchanged input keeps its result; a changed value updates it', async () => {
    const short = await record('Short', 'tiny');
    const long = await record('Long', 'a much longer description');
    const created = await call('POST', '/ai/column-data-validation', {
      name: 'Long enough',
      moduleId: leads.id,
      fieldId: fieldIds.Description,
      rule: 'The description is specific',
      severity: 'error',
    });
    const validationId = created.body.id;
    const executed = await call('POST', `/ai/column-data-validation/${validationId}/execute`, {
      ids: [short, long],
    });
    expect(executed.status).toBe(201);
    const items = executed.body.items as Array<Record<string, unknown>>;
    expect(items.map((item) => [item.status, item.value])).toEqual([
      ['done', { valid: false, reason: 'too short' }],
      ['done', { valid: true, reason: 'long enough' }],
    ]);
    const results = await read<Page>(
      `/ai/column-data-validation-result?filter=validationId=${validationId}&order=recordId;ASC`,
    );
    expect(
      results.body.items.map((item) => [
        item.recordId,
        item.valid,
        item.source,
        item.severity,
        item.checkedValue,
      ]),
    ).toEqual([
      [short, false, 'ai', 'error', 'tiny'],
      [long, true, 'ai', 'error', 'a much longer description'],
    ]);

    const again = await call('POST', `/ai/column-data-validation/${validationId}/execute`, {
      ids: [short, long],
    });
    expect(
      (again.body.items as Array<Record<string, unknown>>).map((item) => [item.status, item.tokens]),
    ).toEqual([
      ['unchanged', 0],
      ['unchanged', 0],
    ]);

    await call('PUT', `/record/${short}`, { fields: { [keys.Description!]: 'now a longer text' } });
    const third = await call('POST', `/ai/column-data-validation/${validationId}/execute`, { ids: [short] });
    const item = (third.body.items as Array<Record<string, unknown>>)[0]!;
    expect(item).toMatchObject({ status: 'done', value: { valid: true } });
    expect(item.validationResultId).toBe(results.body.items[0]!.id);
    const after = await read<Page>(
      `/ai/column-data-validation-result?filter=validationId=${validationId};recordId=${short}`,
    );
    expect(after.body.items.map((result) => [result.valid, result.checkedValue])).toEqual([
      [true, 'now a longer text'],
    ]);
  });
});

describe('previewing a transform', () => {
  test('the transformed value of a sample record, whether it fits, and nothing saved', async () => {
    const transformId = await transform({ fieldId: fieldIds.Stage, prompt: 'unused' });
    const preview = await call('POST', `/column-data-transform/${transformId}/preview`, {
      prompt: `STAGE: {{${keys.Description}}}`,
      preview: { name: 'Sample', fields: { [keys.Description!]: 'contract signed' } },
    });
    expect(preview.status).toBe(201);
    expect(preview.body).toMatchObject({
      value: 'won',
      fits: true,
      problem: null,
      outputType: 'select',
      prompt: 'STAGE: contract signed',
    });
    const misfit = await call('POST', `/column-data-transform/${transformId}/preview`, {
      prompt: `STAGE: {{${keys.Description}}}`,
      preview: { [keys.Description!]: 'nothing yet' },
    });
    expect(misfit.body).toMatchObject({ value: 'maybe', fits: false });
    expect(String(misfit.body.problem)).toMatch(/must be one of/);
    expect((await read(`/ai/column-data-transform/${transformId}`)).body.prompt).toBe('unused');

    const unknown = await call('POST', `/column-data-transform/${transformId}/preview`, {
      prompt: '{{nope}}',
      preview: {},
    });
    expect(unknown.status).toBe(400);
    expect(
      (await call('POST', `/column-data-transform/${transformId}/preview`, { prompt: 'x' })).status,
    ).toBe(400);
    fake.chatReplies.push('not json at all');
    const malformed = await call('POST', `/column-data-transform/${transformId}/preview`, {
      prompt: 'STAGE: x',
      preview: {},
    });
    expect(malformed.status).toBe(502);
    expect(malformed.body.message).toMatch(/no JSON object/);
  });
});

describe('when the model cannot answer', () => {
  test('a model that fails: the preview answers 503 and nothing is spent', async () => {
    const transformId = await transform({ fieldId: fieldIds.Summary, prompt: 'SUMMARY: x' });
    const before = await balance();
    fake.mode = 'fail-500';
    const failed = await call('POST', `/column-data-transform/${transformId}/preview`, {
      prompt: 'SUMMARY: y',
      preview: {},
    });
    expect(failed.status).toBe(503);
    expect(failed.body.message).toMatch(/500/);
    expect(await balance()).toMatchObject({ spent: before.spent, tokens: before.tokens });
  });

  test('without a balance that covers one record: 402 before any call', async () => {
    const poor = await startPlatform({ AI_URL: fake.baseUrl, AI_API_KEY: 'k', AI_MODEL: 'm' });
    try {
      const space = await json<Entity>(await poor.call('POST', '/space', { body: { name: 'S' } }));
      const module = await json<Entity>(
        await poor.call('POST', '/module', { body: { spaceId: space.id, name: 'M' } }),
      );
      const field = await json<Entity>(
        await poor.call('POST', '/field', { body: { moduleId: module.id, name: 'F', type: 'text' } }),
      );
      const made = await json<Entity>(
        await poor.call('POST', '/record', { body: { moduleId: module.id, name: 'R' } }),
      );
      const created = await json<Entity>(
        await poor.call('POST', '/ai/column-data-transform', {
          body: { name: 'T', moduleId: module.id, fieldId: field.id, prompt: 'p' },
        }),
      );
      await poor.call('POST', '/ai/balance/top-up', { body: { tokens: 10 } });
      const requests = fake.chatRequests.length;
      const refused = await poor.call('POST', `/column-data-transform/${created.id}/execute`, {
        body: { ids: [made.id] },
      });
      expect(refused.status).toBe(402);
      const body = await json<{ code: string; message: string }>(refused);
      expect(body.code).toBe('E4021');
      expect(body.message).toMatch(/top-up/);
      const preview = await poor.call('POST', `/column-data-transform/${created.id}/preview`, {
        body: { prompt: 'p', preview: {} },
      });
      expect(preview.status).toBe(402);
      expect(fake.chatRequests.length).toBe(requests);
    } finally {
      await poor.stop();
    }
  });

  test('a balance that runs out during a job: the records it covers are done, the others fail saying why', async () => {
    const poor = await startPlatform({ AI_URL: fake.baseUrl, AI_API_KEY: 'k', AI_MODEL: 'm' });
    try {
      const post = async (path: string, body: unknown) =>
        json<Entity>(await poor.call('POST', path, { body }));
      const space = await post('/space', { name: 'S' });
      const module = await post('/module', { spaceId: space.id, name: 'M' });
      const field = await post('/field', { moduleId: module.id, name: 'F', type: 'text' });
      const ids: number[] = [];
      for (let index = 0; index < 12; index++)
        ids.push((await post('/record', { moduleId: module.id, name: `R${index}` })).id);
      const created = await post('/ai/column-data-transform', {
        name: 'T',
        moduleId: module.id,
        fieldId: field.id,
        prompt: 'SUMMARY: {{name}}',
      });
      await post('/ai/balance/top-up', { tokens: 500 });
      const executed = await poor.call('POST', `/column-data-transform/${created.id}/execute`, {
        body: { ids },
      });
      expect(executed.status).toBe(201);
      const job = await json<{
        done: number;
        failed: number;
        items: Array<{ status: string; reason?: string }>;
      }>(executed);
      expect(job.done).toBeGreaterThan(0);
      expect(job.failed).toBeGreaterThan(0);
      expect(job.done + job.failed).toBe(12);
      for (const item of job.items.filter((outcome) => outcome.status === 'failed'))
        expect(item.reason).toMatch(/AI token balance cannot cover/);
      const balance = await json<{ tokens: number; reserved: number; spent: number }>(
        await poor.call('GET', '/ai/balance'),
      );
      expect(balance.reserved).toBe(0);
      expect(balance.tokens).toBeGreaterThanOrEqual(0);
      expect(balance.spent).toBe(
        job.items.reduce((sum, item) => sum + Number((item as { tokens?: number }).tokens ?? 0), 0),
      );
    } finally {
      await poor.stop();
    }
  });

  test('without a model configured: 501 that says how to configure one', async () => {
    const bare = await startPlatform();
    try {
      const answer501 = await bare.call('POST', '/column-data-transform/1/preview', {
        body: { prompt: 'p', preview: {} },
      });
      // No such transform is a 404 before the model is looked at; with one, the missing model is the answer.
      expect(answer501.status).toBe(404);
      const space = await json<Entity>(await bare.call('POST', '/space', { body: { name: 'S' } }));
      const module = await json<Entity>(
        await bare.call('POST', '/module', { body: { spaceId: space.id, name: 'M' } }),
      );
      const field = await json<Entity>(
        await bare.call('POST', '/field', { body: { moduleId: module.id, name: 'F', type: 'text' } }),
      );
      const created = await json<Entity>(
        await bare.call('POST', '/ai/column-data-transform', {
          body: { name: 'T', moduleId: module.id, fieldId: field.id, prompt: 'p' },
        }),
      );
      for (const [path, body] of [
        [`/column-data-transform/${created.id}/preview`, { prompt: 'p', preview: {} }],
        [`/column-data-transform/${created.id}/execute`, { ids: [1] }],
      ] as const) {
        const response = await bare.call('POST', path, { body });
        expect(response.status).toBe(501);
        expect((await json<{ message: string }>(response)).message).toMatch(/AI_URL/);
      }
    } finally {
      await bare.stop();
    }
  });
});
