import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';
import { json, startPlatform, type Entity, type TestPlatform } from '../support/platform';

/**
 * Generation through the AI token balance, against a loopback model: modules and fields proposed for a
 * purpose (whose result creates them as it is), and a value for a field, with and without its transform.
 */
jest.setTimeout(30_000);

let fake: FakeOpenAi;
let platform: TestPlatform;
let spaceId: number;
/** The position of the last write, for reads that must see it. */
let lastPosition: string | null = null;

interface Answer {
  status: number;
  body: Entity & { message?: string; error?: string; result?: string };
}

async function call(method: string, path: string, body?: unknown, token?: string): Promise<Answer> {
  const response = await platform.call(method, path, {
    ...(body !== undefined && { body }),
    ...(token !== undefined && { headers: { Authorization: `Bearer ${token}` } }),
  });
  lastPosition = response.headers.get('x-position') ?? lastPosition;
  return { status: response.status, body: await json<Answer['body']>(response) };
}

/** A read that sees every write so far. */
async function read<T = Entity>(path: string): Promise<T> {
  const response = await platform.call('GET', path, {
    ...(lastPosition !== null && { headers: { 'X-Min-Position': lastPosition } }),
  });
  expect(response.status).toBe(200);
  return json<T>(response);
}

/** The model's next answer. */
const modelAnswers = (answer: unknown) =>
  fake.chatReplies.push(typeof answer === 'string' ? answer : JSON.stringify(answer));
const lastRequest = () => fake.chatRequests.at(-1)!;
const systemMessage = () => lastRequest().messages.find((message) => message.role === 'system')!.content;
const userMessage = () => lastRequest().messages.find((message) => message.role === 'user')!.content;

const balance = () => read<{ tokens: number; reserved: number; spent: number }>('/ai/balance');

async function tokenWith(permissions: Record<string, string[]>): Promise<string> {
  const created = await call('POST', '/auth/1/token', { name: 'narrow', permissions });
  expect(created.status).toBe(201);
  return String(created.body.token);
}

beforeAll(async () => {
  fake = await startFakeOpenAi();
  platform = await startPlatform({ AI_URL: fake.baseUrl, AI_API_KEY: 'test-key', AI_MODEL: 'test-model' });
  spaceId = (await call('POST', '/space', { name: 'Hiring' })).body.id;
});
afterAll(async () => {
  await platform.stop();
  await fake.close();
});
afterEach(() => {
  // Every test uses the answers it scripts: one left over would answer the next test's call.
  expect(fake.chatReplies).toEqual([]);
  fake.mode = 'normal';
});

test('an empty balance refuses with 402 before asking the model; nothing is spent', async () => {
  const asked = fake.chatRequests.length;
  const refused = await call('POST', '/ai/generate-custom-modules', { prompt: 'Track job applicants' });
  expect([refused.status, refused.body.error]).toEqual([402, 'ai_balance_insufficient']);
  expect(fake.chatRequests.length).toBe(asked);
  expect(await balance()).toMatchObject({ tokens: 0, reserved: 0, spent: 0 });
  expect((await call('POST', '/ai/balance/top-up', { tokens: 1_000_000 })).status).toBe(201);
});

describe('POST /ai/generate-custom-modules', () => {
  test('proposes modules whose result creates them with POST /module and POST /field as it is', async () => {
    modelAnswers({
      modules: [
        {
          name: 'Applicants',
          description: 'People who applied for a job.',
          fields: [
            { name: 'Email', type: 'email', required: true, config: {} },
            { name: 'Stage', type: 'select', config: { options: ['applied', 'interviewed', 'hired'] } },
            { name: 'Expected salary', type: 'decimal', config: { scale: 0, min: 0 } },
            { name: 'CV', type: 'file' },
            { name: 'Recruiter', type: 'user', required: false, config: {} },
          ],
        },
        {
          name: 'Interviews',
          fields: [
            { name: 'Applicant', type: 'text', config: { maxLength: 200 } },
            { name: 'When', type: 'datetime', required: true },
            { name: 'Passed', type: 'checkbox' },
          ],
        },
      ],
    });
    const generated = await call('POST', '/ai/generate-custom-modules', {
      prompt: '  Track job applicants ',
    });
    expect([generated.status, generated.body.message]).toEqual([200, undefined]);
    const proposal = JSON.parse(generated.body.result!) as {
      modules: Array<{ name: string; description: string | null; fields: Array<Record<string, unknown>> }>;
    };
    expect(proposal.modules[1]).toEqual({
      name: 'Interviews',
      description: null,
      fields: [
        { name: 'Applicant', type: 'text', required: false, config: { maxLength: 200 } },
        { name: 'When', type: 'datetime', required: true, config: {} },
        { name: 'Passed', type: 'checkbox', required: false, config: {} },
      ],
    });

    for (const { fields, ...module } of proposal.modules) {
      const created = await call('POST', '/module', { spaceId, ...module });
      expect([created.status, created.body.message]).toEqual([201, undefined]);
      for (const field of fields) {
        const added = await call('POST', '/field', { moduleId: created.body.id, ...field });
        expect([field.name, added.status, added.body.message]).toEqual([field.name, 201, undefined]);
      }
    }

    expect(userMessage()).toBe('Track job applicants');
    expect(lastRequest()).toMatchObject({ model: 'test-model', response_format: { type: 'json_object' } });
    expect(systemMessage()).toContain('{"unsupported": "<why');
    expect(systemMessage()).toMatch(/- multi_select \(.*\): config \{"options" \(required\)/);
    expect(systemMessage()).not.toMatch(/- (relation|button)\b/);
  });

  test('a null, empty or too long prompt, or another key, is a 400 that asks nothing', async () => {
    const asked = fake.chatRequests.length;
    for (const [body, message] of [
      [{ prompt: null }, /prompt is needed/],
      [{ prompt: '   ' }, /prompt is needed/],
      [{ prompt: 'x'.repeat(8001) }, /at most 8000/],
      [{}, /prompt/],
      [{ prompt: 'Applicants', spaceId }, /spaceId/],
    ] as const) {
      const refused = await call('POST', '/ai/generate-custom-modules', body);
      expect([refused.status, refused.body.error]).toEqual([400, 'validation_failed']);
      expect(refused.body.message).toMatch(message);
    }
    expect(fake.chatRequests.length).toBe(asked);
  });

  test('a request no field type can hold is a 400 that says so and why', async () => {
    modelAnswers({ unsupported: 'A map location needs a geographic type.' });
    const refused = await call('POST', '/ai/generate-custom-modules', { prompt: 'Places on a map' });
    expect([refused.status, refused.body.error]).toEqual([400, 'validation_failed']);
    expect(refused.body.message).toMatch(/^unsupported field type: .*geographic type/);

    modelAnswers({ modules: [{ name: 'Places', fields: [{ name: 'Where', type: 'geo_point' }] }] });
    const unknownType = await call('POST', '/ai/generate-custom-modules', { prompt: 'Places on a map' });
    expect(unknownType.status).toBe(400);
    expect(unknownType.body.message).toMatch(/unsupported field type: .*"geo_point".*does not exist/);
  });

  test('an answer that is not the proposal asked for is a 502 that quotes it', async () => {
    const field = { name: 'Title', type: 'text' };
    for (const [answer, message] of [
      ['Sure! Here are your modules…', /answered no JSON object: "Sure! Here are/],
      [{ modules: [] }, /not in the shape asked \(modules: /],
      [{ modules: [{ name: 'Jobs', fields: [{ ...field, key: 'title' }] }] }, /Unrecognized key.*"key"/],
      [{ modules: [{ name: 'Jobs', fields: [field, { ...field, name: ' title' }] }] }, /two fields in/],
      [{ modules: [{ name: 'Jobs', fields: [{ name: 'Kind', type: 'select' }] }] }, /select field.*options/],
      [{ modules: [{ name: '', fields: [field] }] }, /invalid module \(modules\.0: name/],
      [{ modules: [{ name: 'Jobs', fields: [{ ...field, required: 'yes' }] }] }, /required/],
    ] as const) {
      modelAnswers(answer);
      const failed = await call('POST', '/ai/generate-custom-modules', { prompt: 'Jobs' });
      expect([answer, failed.status, failed.body.error]).toEqual([answer, 502, 'upstream_failed']);
      expect(failed.body.message).toMatch(message);
    }
  });

  test('a model that fails is a 503 after its retries; nothing is spent', async () => {
    const before = await balance();
    fake.mode = 'fail-500';
    const asked = fake.chatRequests.length;
    const failed = await call('POST', '/ai/generate-custom-modules', { prompt: 'Jobs' });
    expect([failed.status, failed.body.error]).toEqual([503, 'unavailable']);
    expect(fake.chatRequests.length - asked).toBe(3);
    expect(await balance()).toEqual({ ...before, reserved: 0 });
  });
});

describe('POST /ai/generate-custom-field', () => {
  let deals: Entity;

  beforeAll(async () => {
    deals = (await call('POST', '/module', { spaceId, name: 'Deals' })).body;
    await call('POST', '/field', { moduleId: deals.id, name: 'Amount', type: 'decimal' });
  });

  test('proposes a field for a module named by name or id, given its fields; POST /field takes it', async () => {
    modelAnswers({
      name: 'Close probability',
      type: 'number',
      required: false,
      config: { min: 0, max: 100 },
    });
    const generated = await call('POST', '/ai/generate-custom-field', {
      prompt: 'How likely the deal closes, in percent',
      table: 'Hiring',
      module: 'Deals',
    });
    expect([generated.status, generated.body.message]).toEqual([200, undefined]);
    const field = JSON.parse(generated.body.result!) as Record<string, unknown>;
    expect(field).toEqual({
      moduleId: deals.id,
      name: 'Close probability',
      type: 'number',
      required: false,
      config: { min: 0, max: 100 },
    });
    expect(userMessage()).toContain('The space the module is in: Hiring');
    expect(userMessage()).toContain('- Amount (decimal)');
    const added = await call('POST', '/field', field);
    expect([added.status, added.body.message]).toEqual([201, undefined]);

    modelAnswers({ name: 'Lost reason', type: 'long_text' });
    const byId = await call('POST', '/ai/generate-custom-field', {
      prompt: 'Why a deal was lost',
      table: null,
      module: String(deals.id),
    });
    expect(byId.status).toBe(200);
    expect(userMessage()).toContain('- Close probability (number)');
    const lost = JSON.parse(byId.body.result!) as Record<string, unknown>;
    expect((await call('POST', '/field', lost)).status).toBe(201);

    modelAnswers({ name: 'Priority', type: 'select', config: { options: ['low', 'high'] } });
    const alone = await call('POST', '/ai/generate-custom-field', {
      prompt: 'Priority',
      table: null,
      module: null,
    });
    const loose = JSON.parse(alone.body.result!) as Record<string, unknown>;
    expect(loose).not.toHaveProperty('moduleId');
    expect((await call('POST', '/field', { ...loose, moduleId: deals.id })).status).toBe(201);
  });

  test('a module that is not one module, an empty prompt or an unsupported type is a 400', async () => {
    const other = (await call('POST', '/space', { name: 'Other' })).body;
    await call('POST', '/module', { spaceId: other.id, name: 'Twin' });
    await call('POST', '/module', { spaceId, name: 'Twin' });
    const asked = fake.chatRequests.length;
    for (const [module, message] of [
      ['Nowhere', /no module is named "Nowhere"/],
      ['Twin', /several modules are named "Twin"; give its id/],
      ['999999', /module 999999 does not exist/],
    ] as const) {
      const refused = await call('POST', '/ai/generate-custom-field', {
        prompt: 'A field',
        table: null,
        module,
      });
      expect([refused.status, refused.body.message]).toEqual([400, expect.stringMatching(message)]);
    }
    const empty = await call('POST', '/ai/generate-custom-field', { prompt: '', table: null, module: null });
    expect([empty.status, empty.body.message]).toEqual([400, expect.stringMatching(/prompt is needed/)]);
    expect(fake.chatRequests.length).toBe(asked);

    modelAnswers({ name: 'Company', type: 'relation', config: { moduleId: deals.id } });
    const relation = await call('POST', '/ai/generate-custom-field', {
      prompt: 'The company',
      table: null,
      module: null,
    });
    expect(relation.status).toBe(400);
    expect(relation.body.message).toMatch(/unsupported field type: .*"relation"/);
  });

  test('a field the module has already, or a malformed one, is a 502', async () => {
    modelAnswers({ name: 'amount', type: 'decimal' });
    const repeated = await call('POST', '/ai/generate-custom-field', {
      prompt: 'The amount',
      table: null,
      module: 'Deals',
    });
    expect([repeated.status, repeated.body.message]).toEqual([
      502,
      expect.stringMatching(/proposed a field module \d+ has already \("Amount"\)/),
    ]);
    modelAnswers({ field: { name: 'X', type: 'text' } });
    const wrapped = await call('POST', '/ai/generate-custom-field', {
      prompt: 'X',
      table: null,
      module: null,
    });
    expect(wrapped.status).toBe(502);
  });
});

describe('GET /field/generate/{fieldId}', () => {
  let leads: Entity;
  const fields: Record<string, Entity> = {};
  let acme: Entity;

  beforeAll(async () => {
    leads = (await call('POST', '/module', { spaceId, name: 'Leads' })).body;
    for (const [name, type, config] of [
      ['Budget', 'decimal', undefined],
      ['Stage', 'select', { options: ['new', 'won', 'lost'] }],
      ['Pitch', 'text', undefined],
      ['Brochure', 'file', undefined],
    ] as const)
      fields[name] = (
        await call('POST', '/field', { moduleId: leads.id, name, type, ...(config && { config }) })
      ).body;
    acme = (await call('POST', '/record', { moduleId: leads.id, name: 'Acme', fields: { stage: 'won' } }))
      .body;
  });

  test("without a transform: a plausible example from the field's name and type", async () => {
    modelAnswers({ value: '1234.5' });
    const generated = await call('GET', `/field/generate/${fields.Budget!.id}`);
    expect([generated.status, generated.body.message]).toEqual([200, undefined]);
    expect(generated.body).toEqual({
      fieldId: fields.Budget!.id,
      key: 'budget',
      type: 'decimal',
      value: 1234.5,
      transformId: null,
      model: 'test-model',
      tokens: expect.any(Number),
    });
    expect(generated.body.tokens).toBeGreaterThan(0);
    expect(systemMessage()).toContain('"Budget", of type decimal');
    expect(userMessage()).toMatch(/plausible example value for the field "Budget"/);
  });

  test('with a transform: its prompt filled from the record, its format and its model', async () => {
    const transform = await call('POST', '/ai/column-data-transform', {
      name: 'Pitch',
      moduleId: leads.id,
      fieldId: fields.Pitch!.id,
      prompt: 'A pitch for {{name}}, a {{stage}} lead',
      format: 'at most 8 words',
      model: 'pitch-model',
    });
    expect(transform.status).toBe(201);

    modelAnswers({ value: 'Acme: let us grow together' });
    const generated = await call('GET', `/field/generate/${fields.Pitch!.id}?recordId=${acme.id}`);
    expect([generated.status, generated.body.message]).toEqual([200, undefined]);
    expect(generated.body).toMatchObject({
      key: 'pitch',
      value: 'Acme: let us grow together',
      transformId: transform.body.id,
      model: 'pitch-model',
    });
    expect(userMessage()).toBe('A pitch for Acme, a won lead');
    expect(systemMessage()).toContain('Output instructions: at most 8 words');

    modelAnswers({ value: 'Grow with us' });
    const sample = await call('GET', `/field/generate/${fields.Pitch!.id}`);
    expect(sample.status).toBe(200);
    expect(userMessage()).toMatch(/^A pitch for \{\{name\}\}, a \{\{stage\}\} lead\n\nNo record is given/);
  });

  test('a value that does not fit the field, or no value, is a 502', async () => {
    modelAnswers({ value: 'maybe' });
    const misfit = await call('GET', `/field/generate/${fields.Stage!.id}?recordId=${acme.id}`);
    expect([misfit.status, misfit.body.message]).toEqual([
      502,
      expect.stringMatching(/does not fit field "Stage" \(must be one of: new, won, lost\)/),
    ]);
    modelAnswers('{"stage": "won"}');
    const noValue = await call('GET', `/field/generate/${fields.Stage!.id}`);
    expect([noValue.status, noValue.body.message]).toEqual([502, expect.stringMatching(/has no "value"/)]);
  });

  test('unsupported types, unknown fields and records, and bad queries are refused before the model', async () => {
    const other = (await call('POST', '/module', { spaceId, name: 'Elsewhere' })).body;
    const foreign = (await call('POST', '/record', { moduleId: other.id, name: 'Foreign' })).body;
    const asked = fake.chatRequests.length;
    const stage = fields.Stage!.id;
    for (const [path, status, message] of [
      [`/field/generate/${fields.Brochure!.id}`, 400, /file field, an unsupported type/],
      ['/field/generate/999999', 404, /field 999999 not found/],
      ['/field/generate/x', 400, /fieldId/],
      [`/field/generate/${stage}?recordId=999999`, 404, /record 999999 not found/],
      [`/field/generate/${stage}?recordId=${foreign.id}`, 400, /not a record of module/],
      [`/field/generate/${stage}?recordId=07`, 400, /recordId/],
      [`/field/generate/${stage}?recordId=1&recordId=2`, 400, /recordId/],
      [`/field/generate/${stage}?other=1`, 400, /other/],
    ] as const) {
      const refused = await call('GET', path);
      expect([path, refused.status, refused.body.message]).toEqual([
        path,
        status,
        expect.stringMatching(message),
      ]);
    }
    expect(fake.chatRequests.length).toBe(asked);
  });

  test('needs the right to read fields and to write records (it spends tokens): read rights alone are a 403', async () => {
    const asked = fake.chatRequests.length;
    for (const permissions of [
      { field: ['read'] },
      { record: ['read', 'update'] },
      { field: ['read'], record: ['read'] },
    ] as Array<Record<string, string[]>>) {
      const token = await tokenWith(permissions);
      const refused = await call('GET', `/field/generate/${fields.Budget!.id}`, undefined, token);
      expect([permissions, refused.status]).toEqual([permissions, 403]);
    }
    expect(fake.chatRequests.length).toBe(asked);
  });
});

test('what generation spent shows in the usage, per operation', async () => {
  const usage = await read<{ items: Array<{ operation: string; calls: number; tokens: number }> }>(
    '/ai/usage?group_by=operation',
  );
  const byOperation = Object.fromEntries(usage.items.map((row) => [row.operation, row]));
  // Every call the model answered spent, the unusable answers too; refused and failed calls spent nothing.
  expect(
    Object.fromEntries(Object.entries(byOperation).map(([operation, row]) => [operation, row.calls])),
  ).toEqual({ 'generate-modules': 10, 'generate-field': 6, 'generate-field-value': 5 });
  for (const row of usage.items) expect(row.tokens).toBeGreaterThan(0);
  const spent = usage.items.reduce((sum, row) => sum + row.tokens, 0);
  expect(await balance()).toMatchObject({ spent, tokens: 1_000_000 - spent, reserved: 0 });
});

test('without AI_URL the generation routes are a 501 that says how to configure a model', async () => {
  const bare = await startPlatform();
  try {
    const response = await bare.call('POST', '/ai/generate-custom-modules', { body: { prompt: 'Jobs' } });
    const body = await json<{ error: string; message: string }>(response);
    expect([response.status, body.error]).toEqual([501, 'not_configured']);
    expect(body.message).toMatch(/set AI_URL/);
  } finally {
    await bare.stop();
  }
});
