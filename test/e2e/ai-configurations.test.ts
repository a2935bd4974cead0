import { json, startPlatform, type Entity, type Page, type TestPlatform } from '../support/platform';

/** The saved AI configurations (transforms, validations, validation results) and the AI token balance. */
let platform: TestPlatform;
let leads: Entity;
const fields: Record<string, Entity> = {};

async function write(method: string, path: string, body?: unknown) {
  const response = await platform.call(method, path, body === undefined ? {} : { body });
  return { response, body: await json<Entity & { message?: string; code?: string }>(response) };
}

/** A read that sees the write whose position is `after`. */
async function read<T = Entity>(path: string, after?: string | null): Promise<{ status: number; body: T }> {
  const response = await platform.call('GET', path, after ? { headers: { 'X-Min-Position': after } } : {});
  return { status: response.status, body: await json<T>(response) };
}

beforeAll(async () => {
  platform = await startPlatform();
  const space = (await write('POST', '/space', { name: 'Sales' })).body;
  leads = (await write('POST', '/module', { spaceId: space.id, name: 'Leads' })).body;
  for (const [name, type, config] of [
    ['Description', 'long_text', undefined],
    ['Summary', 'text', undefined],
    ['Stage', 'select', { options: ['new', 'won', 'lost'] }],
    ['Contract', 'file', undefined],
    ['Owner', 'user', undefined],
  ] as const)
    fields[name] = (
      await write('POST', '/field', { moduleId: leads.id, name, type, ...(config && { config }) })
    ).body;
});
afterAll(() => platform.stop());

describe('column-data transforms', () => {
  test('created, listed with the filter language, read, changed and deleted; entityId beside id', async () => {
    const created = await write('POST', '/ai/column-data-transform', {
      name: 'Summary',
      moduleId: leads.id,
      fieldId: fields.Summary!.id,
      prompt: `Summarise {{name}}: {{${String(fields.Description!.key)}}}`,
      format: 'at most 12 words',
    });
    expect([created.response.status, created.body.message]).toEqual([201, undefined]);
    expect(created.response.headers.get('location')).toMatch(/\/ai\/column-data-transform\/\d+$/);
    expect(created.body).toMatchObject({
      entityId: created.body.id,
      outputType: 'text',
      model: null,
      onlyEmpty: false,
      maxOutputTokens: 256,
      temperature: 0,
    });
    const id = created.body.id;
    const after = created.response.headers.get('x-position');

    const listed = await read<Page>(`/ai/column-data-transform?filter=name~Summ%25;outputType=text`, after);
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((item) => item.id)).toEqual([id]);
    expect((await read(`/ai/column-data-transform/${id}`, after)).body).toMatchObject({
      id,
      entityId: id,
      prompt: `Summarise {{name}}: {{${String(fields.Description!.key)}}}`,
      createdBy: '1',
    });

    const changed = await write('PUT', `/ai/column-data-transform/${id}`, {
      onlyEmpty: true,
      temperature: 0.5,
    });
    expect(changed.response.status).toBe(200);
    expect(changed.body).toMatchObject({ onlyEmpty: true, temperature: 0.5, fieldId: fields.Summary!.id });

    const deleted = await write('DELETE', `/ai/column-data-transform/${id}`);
    expect(deleted.response.status).toBe(200);
    expect(
      (await read(`/ai/column-data-transform/${id}`, deleted.response.headers.get('x-position'))).status,
    ).toBe(404);
  });

  test('POST under a chosen entityId: 201, then 409 for the same id; generated ids skip it', async () => {
    const body = {
      name: 'Chosen',
      moduleId: leads.id,
      fieldId: fields.Stage!.id,
      prompt: 'Stage of {{name}}',
    };
    const chosen = await write('POST', '/ai/column-data-transform/5000', body);
    expect(chosen.response.status).toBe(201);
    expect(chosen.body.entityId).toBe(5000);
    const again = await write('POST', '/ai/column-data-transform/5000', body);
    expect(again.response.status).toBe(409);
    const generated = await write('POST', '/ai/column-data-transform', body);
    expect(generated.response.status).toBe(201);
    expect(generated.body.id).not.toBe(5000);
  });

  test('bad configurations are 400s that say what is wrong', async () => {
    const base = { name: 'X', moduleId: leads.id, fieldId: fields.Summary!.id, prompt: 'p' };
    const cases: Array<[unknown, RegExp]> = [
      [{ ...base, fieldId: fields.Contract!.id }, /file field, an unsupported type/],
      [{ ...base, fieldId: fields.Owner!.id }, /user field, an unsupported type/],
      [{ ...base, prompt: 'Use {{Nope}} and {{name}}' }, /\{\{Nope\}\}/],
      [{ ...base, moduleId: 999999 }, /module 999999 does not exist/],
      [{ ...base, fieldId: 999999 }, /not a field of module/],
      [{ ...base, prompt: '' }, /prompt/],
      [{ ...base, prompt: 'x'.repeat(8001) }, /at most 8000/],
      [{ ...base, maxOutputTokens: 0 }, /maxOutputTokens/],
      [{ ...base, temperature: 3 }, /temperature/],
      [{ ...base, moduleId: '1' }, /moduleId/],
      [{ ...base, extra: true }, /extra/],
    ];
    for (const [body, message] of cases) {
      const { response, body: answer } = await write('POST', '/ai/column-data-transform', body);
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      expect(JSON.stringify(answer)).toMatch(message);
    }
    const created = (await write('POST', '/ai/column-data-transform', base)).body;
    const badChange = await write('PUT', `/ai/column-data-transform/${created.id}`, {
      prompt: '{{Missing}}',
    });
    expect(badChange.response.status).toBe(400);
    const moved = await write('PUT', `/ai/column-data-transform/${created.id}`, {
      fieldId: fields.Stage!.id,
    });
    expect(moved.response.status).toBe(400);
    expect((await write('GET', '/ai/column-data-transform/0')).response.status).toBe(400);
    expect((await write('PUT', '/ai/column-data-transform/777777', { name: 'n' })).response.status).toBe(404);
  });
});

describe('column-data validations and their results', () => {
  test('a validation; a result written by hand takes its field, module, severity and the value checked', async () => {
    const validation = await write('POST', '/ai/column-data-validation', {
      name: 'Stage plausible',
      moduleId: leads.id,
      fieldId: fields.Stage!.id,
      rule: `The stage fits the description: {{${String(fields.Description!.key)}}}`,
      severity: 'error',
    });
    expect(validation.response.status).toBe(201);
    expect(validation.body).toMatchObject({ entityId: validation.body.id, severity: 'error', model: null });

    const record = (
      await write('POST', '/record', {
        moduleId: leads.id,
        name: 'Acme',
        fields: { [String(fields.Stage!.key)]: 'won' },
      })
    ).body;
    const result = await write('POST', '/ai/column-data-validation-result', {
      validationId: validation.body.id,
      recordId: record.id,
      valid: false,
      reason: 'Checked by hand',
    });
    expect(result.response.status).toBe(201);
    expect(result.body).toMatchObject({
      validationId: validation.body.id,
      recordId: record.id,
      fieldId: fields.Stage!.id,
      moduleId: leads.id,
      severity: 'error',
      source: 'manual',
      checkedValue: 'won',
      valid: false,
    });
    expect(result.body).not.toHaveProperty('inputDigest');

    const listed = await read<Page>(
      `/ai/column-data-validation-result?filter=recordId=${record.id};valid=false`,
      result.response.headers.get('x-position'),
    );
    expect(listed.body.items.map((item) => item.id)).toEqual([result.body.id]);

    const reviewed = await write('PUT', `/ai/column-data-validation-result/${result.body.id}`, {
      valid: true,
    });
    expect(reviewed.body).toMatchObject({ valid: true, source: 'manual' });

    const other = (await write('POST', '/space', { name: 'Other' })).body;
    const otherModule = (await write('POST', '/module', { spaceId: other.id, name: 'Elsewhere' })).body;
    const foreign = (await write('POST', '/record', { moduleId: otherModule.id, name: 'Foreign' })).body;
    const refused = await write('POST', '/ai/column-data-validation-result', {
      validationId: validation.body.id,
      recordId: foreign.id,
      valid: true,
    });
    expect(refused.response.status).toBe(400);
    expect(refused.body.message).toMatch(/not a record of module/);
    const unknown = await write('POST', '/ai/column-data-validation-result', {
      validationId: 999999,
      recordId: record.id,
      valid: true,
    });
    expect(unknown.response.status).toBe(400);
  });
});

describe('the AI token balance', () => {
  test('starts empty; an administrator tops it up (Idempotency-Key safe); usage is empty', async () => {
    expect((await read('/ai/balance')).body).toEqual({
      tokens: 0,
      reserved: 0,
      available: 0,
      toppedUp: 0,
      spent: 0,
    });
    const topUp = () =>
      platform.call('POST', '/ai/balance/top-up', {
        body: { tokens: 5000, note: 'invoice 1' },
        headers: { 'Idempotency-Key': 'top-up-1' },
      });
    const first = await topUp();
    expect(first.status).toBe(201);
    expect(await json(first)).toMatchObject({ tokens: 5000, available: 5000 });
    const repeated = await topUp();
    expect(await json(repeated)).toMatchObject({ tokens: 5000 });
    const after = repeated.headers.get('x-position') ?? first.headers.get('x-position');
    expect((await read('/ai/balance', after)).body).toMatchObject({ tokens: 5000, toppedUp: 5000, spent: 0 });
    expect((await read('/ai/usage', after)).body).toEqual({ items: [], total: { calls: 0, tokens: 0 } });
    for (const body of [{ tokens: 0 }, { tokens: -5 }, { tokens: 1.5 }, { tokens: '5' }, {}])
      expect((await platform.call('POST', '/ai/balance/top-up', { body })).status).toBe(400);
    expect((await read('/ai/usage?from=2026-13')).status).toBe(400);
    expect((await read('/ai/usage?group_by=nothing')).status).toBe(400);
  });
});
