import { json, startPlatform, type TestPlatform, type Entity, type Page } from '../support/platform';

jest.setTimeout(60_000);

let platform: TestPlatform;
let spaceId: number;
let deals: number;
let companies: number;

async function create(path: string, body: unknown): Promise<Entity> {
  const response = await platform.call('POST', path, { body });
  expect(response.status).toBe(201);
  return json<Entity>(response);
}

async function errorOf(response: Response): Promise<{ status: number; code: string; details: unknown }> {
  const body = await json<{ code: string; details: unknown }>(response);
  return { status: response.status, code: body.code, details: body.details };
}

beforeAll(async () => {
  platform = await startPlatform();
  spaceId = (await create('/space', { name: 'Sales' })).id;
  deals = (await create('/module', { spaceId, name: 'Deals' })).id;
  companies = (await create('/module', { spaceId, name: 'Companies' })).id;
});

afterAll(async () => {
  await platform.stop();
});

describe('field definitions over HTTP', () => {
  let stage: Entity;
  let amount: Entity;
  let company: Entity;

  beforeAll(async () => {
    stage = await create('/field', {
      moduleId: deals,
      name: 'Deal stage',
      type: 'select',
      required: true,
      config: { options: ['lead', 'won'] },
    });
    amount = await create('/field', { moduleId: deals, name: 'Amount', type: 'decimal', config: { min: 0 } });
    company = await create('/field', {
      moduleId: deals,
      name: 'Company',
      type: 'relation',
      config: { moduleId: companies },
    });
  });

  test('a created field has a key from its name, the next position, a Location, and reads back', async () => {
    expect(stage).toMatchObject({ key: 'deal_stage', position: 1, moduleId: deals, spaceId, required: true });
    expect(amount).toMatchObject({ key: 'amount', position: 2, type: 'decimal', config: { min: 0 } });
    const read = await json<Entity>(await platform.call('GET', `/field/${company.id}`));
    expect(read).toMatchObject({
      id: company.id,
      key: 'company',
      type: 'relation',
      config: { moduleId: companies },
    });
  });

  test('lists: all fields, by space, and one module’s positions, in module then position order', async () => {
    const all = await json<Page>(await platform.call('GET', `/field?filter=moduleId=${deals}`));
    expect(all.items.map((field) => field.key)).toEqual(['deal_stage', 'amount', 'company']);
    expect(all.meta).toEqual({ total: 3, offset: 0, limit: 50 });
    const bySpace = await json<Page>(
      await platform.call('GET', `/field/by-space/${spaceId}?filter=type=select`),
    );
    expect(bySpace.items.map((field) => field.id)).toEqual([stage.id]);
    const positions = await json<{ moduleId: number; items: Entity[] }>(
      await platform.call('GET', `/field/position?moduleId=${deals}`),
    );
    expect(positions.items).toEqual([
      { id: stage.id, key: 'deal_stage', name: 'Deal stage', position: 1 },
      { id: amount.id, key: 'amount', name: 'Amount', position: 2 },
      { id: company.id, key: 'company', name: 'Company', position: 3 },
    ]);
  });

  test('records are checked against the fields; a bad record is a 400 naming each problem and writes nothing', async () => {
    const acme = await create('/record', { moduleId: companies, name: 'ACME' });
    const otherDeal = await create('/record', {
      moduleId: deals,
      name: 'Old deal',
      fields: { deal_stage: 'won' },
    });
    const before = await json<Page>(await platform.call('GET', `/record?filter=moduleId=${deals}`));

    const bad = await errorOf(
      await platform.call('POST', '/record', {
        body: {
          moduleId: deals,
          name: 'Bad deal',
          fields: { deal_stage: 'lost', amount: -1.5, company: otherDeal.id, nope: 1 },
        },
      }),
    );
    expect(bad).toEqual({
      status: 400,
      code: 'E4001',
      details: [
        { path: 'fields.deal_stage', message: 'must be one of: lead, won' },
        { path: 'fields.amount', message: 'must be at least 0' },
        { path: 'fields.company', message: `record ${otherDeal.id} is not in module ${companies}` },
        { path: 'fields.nope', message: 'no such field in this module' },
      ],
    });
    const missingTarget = await errorOf(
      await platform.call('POST', '/record', {
        body: { moduleId: deals, name: 'Bad deal', fields: { deal_stage: 'lead', company: 999 } },
      }),
    );
    expect(missingTarget.details).toEqual([{ path: 'fields.company', message: 'record 999 does not exist' }]);
    const withoutRequired = await errorOf(
      await platform.call('POST', '/record', { body: { moduleId: deals, name: 'x' } }),
    );
    expect(withoutRequired.details).toEqual([{ path: 'fields.deal_stage', message: 'is required' }]);
    const after = await json<Page>(await platform.call('GET', `/record?filter=moduleId=${deals}`));
    expect(after.meta.total).toBe(before.meta.total);

    const good = await create('/record', {
      moduleId: deals,
      name: 'Good deal',
      fields: { deal_stage: 'lead', amount: 1200.5, company: acme.id },
    });
    const unknownOnly = await errorOf(
      await platform.call('PUT', `/record/${good.id}`, { body: { fields: { nope: 1 } } }),
    );
    expect(unknownOnly).toMatchObject({ status: 400, code: 'E4003' });
    const clearRequired = await errorOf(
      await platform.call('PUT', `/record/${good.id}`, { body: { fields: { deal_stage: null } } }),
    );
    expect(clearRequired.details).toEqual([{ path: 'fields.deal_stage', message: 'is required' }]);

    const ofRecord = await json<{ items: Entity[] }>(
      await platform.call('GET', `/field/of/${deals}/${good.id}`),
    );
    expect(ofRecord.items.map((field) => [field.key, field.value])).toEqual([
      ['deal_stage', 'lead'],
      ['amount', 1200.5],
      ['company', acme.id],
    ]);
    const wrongModule = await platform.call('GET', `/field/of/${companies}/${good.id}`);
    expect(wrongModule.status).toBe(404);
  });

  test('order, change and delete; a deleted field is a 404 and no longer accepts values', async () => {
    const ordered = await platform.call('PUT', '/field/order/', {
      body: { moduleId: deals, fieldIds: [company.id, stage.id, amount.id] },
    });
    expect(ordered.status).toBe(200);
    const positions = await json<{ items: Entity[] }>(
      await platform.call('GET', `/field/position?moduleId=${deals}`),
    );
    expect(positions.items.map((field) => [field.id, field.position])).toEqual([
      [company.id, 1],
      [stage.id, 2],
      [amount.id, 3],
    ]);
    const notPermutation = await platform.call('PUT', '/field/order', {
      body: { moduleId: deals, fieldIds: [company.id] },
    });
    expect(notPermutation.status).toBe(400);

    const renamed = await platform.call('PUT', `/field/${amount.id}`, {
      body: { name: 'Value', config: { min: 0, scale: 0 } },
    });
    expect(renamed.status).toBe(200);
    expect(await json(renamed)).toMatchObject({ name: 'Value', key: 'amount', config: { min: 0, scale: 0 } });
    const badConfig = await errorOf(
      await platform.call('PUT', `/field/${amount.id}`, { body: { config: { options: ['a'] } } }),
    );
    expect(badConfig.status).toBe(400);
    const typeIsFixed = await platform.call('PUT', `/field/${amount.id}`, { body: { type: 'text' } });
    expect(typeIsFixed.status).toBe(400);

    const deleted = await platform.call('DELETE', `/field/${amount.id}`);
    expect(deleted.status).toBe(200);
    expect((await platform.call('GET', `/field/${amount.id}`)).status).toBe(404);
    expect((await platform.call('DELETE', `/field/${amount.id}`)).status).toBe(404);
    const valueOfDeleted = await errorOf(
      await platform.call('POST', '/record', {
        body: { moduleId: deals, name: 'x', fields: { deal_stage: 'lead', amount: 1 } },
      }),
    );
    expect(valueOfDeleted.details).toEqual([
      { path: 'fields.amount', message: 'no such field in this module' },
    ]);
  });

  test('bad field requests are 400s that say what is wrong', async () => {
    const cases: Array<[unknown, string]> = [
      [{ moduleId: deals, name: 'x', type: 'colour' }, 'type'],
      [{ moduleId: deals, name: 'x', type: 'text', extra: 1 }, '(root)'],
      [{ moduleId: deals, name: 'x', type: 'text', key: 'has space' }, 'key'],
      [{ moduleId: deals, name: 'x', type: 'select', config: {} }, 'config.options'],
      [{ moduleId: deals, name: 'x', type: 'relation', config: { moduleId: 999 } }, 'config.moduleId'],
      [{ moduleId: 999, name: 'x', type: 'text' }, 'moduleId'],
      [{ moduleId: deals, name: 'x', type: 'text', key: 'deal_stage' }, 'key'],
    ];
    for (const [body, path] of cases) {
      const response = await platform.call('POST', '/field', { body });
      expect([400, 409]).toContain(response.status);
      const { details } = await errorOf(response);
      expect((details as Array<{ path: string }>).map((detail) => detail.path)).toContain(path);
    }
    expect((await platform.call('GET', '/field/position')).status).toBe(400);
    expect((await platform.call('GET', '/field/position?moduleId=abc')).status).toBe(400);
  });

  test('deleting a module removes its fields', async () => {
    const temporary = await create('/module', { spaceId, name: 'Temporary' });
    const field = await create('/field', { moduleId: temporary.id, name: 'Note', type: 'text' });
    expect((await platform.call('DELETE', `/module/${temporary.id}`)).status).toBe(200);
    expect((await platform.call('GET', `/field/${field.id}`)).status).toBe(404);
  });
});

test('a module that holds records, or a space that holds modules, cannot be deleted: 409, nothing written', async () => {
  const holder = await create('/module', { spaceId, name: 'Holder' });
  const record = await create('/record', { moduleId: holder.id, name: 'Kept' });
  const refused = await errorOf(await platform.call('DELETE', `/module/${holder.id}`));
  expect(refused).toMatchObject({ status: 409, code: 'E4090' });
  expect((await platform.call('GET', `/module/${holder.id}`)).status).toBe(200);
  expect((await platform.call('DELETE', `/space/${spaceId}`)).status).toBe(409);
  expect((await platform.call('GET', `/space/${spaceId}`)).status).toBe(200);

  expect((await platform.call('DELETE', `/record/${record.id}`)).status).toBe(200);
  expect((await platform.call('DELETE', `/module/${holder.id}`)).status).toBe(200);

  const emptySpace = await create('/space', { name: 'Empty' });
  expect((await platform.call('DELETE', `/space/${emptySpace.id}`)).status).toBe(200);
});

describe('deprecated /custom-field aliases', () => {
  test('answer like /field, with Deprecation and a Link to the successor, on errors too', async () => {
    for (const [alias, successor] of [
      [`/custom-field/by-space/${spaceId}`, `/api/field/by-space/${spaceId}`],
      [`/custom-field/position?moduleId=${deals}`, '/api/field/position'],
    ]) {
      const response = await platform.call('GET', alias!);
      expect(response.status).toBe(200);
      expect(response.headers.get('deprecation')).toMatch(/^@\d+$/);
      expect(response.headers.get('link')).toBe(`<${successor}>; rel="successor-version"`);
      const current = await platform.call('GET', alias!.replace('/custom-field', '/field'));
      expect(await json(response)).toEqual(await json(current));
    }
    const error = await platform.call('GET', '/custom-field/position');
    expect(error.status).toBe(400);
    expect(error.headers.get('deprecation')).toMatch(/^@\d+$/);
    expect(error.headers.get('link')).toBe('</api/field/position>; rel="successor-version"');
  });
});

test('a list without order is in numeric id order (not the text order of stored ids)', async () => {
  for (let index = 0; index < 9; index++) await create('/module', { spaceId, name: `Extra ${index}` });
  const page = await json<Page>(await platform.call('GET', '/module?limit=1000'));
  const ids = page.items.map((module) => module.id);
  expect(ids.length).toBeGreaterThanOrEqual(11);
  expect(ids).toEqual([...ids].sort((a, b) => a - b));
});
