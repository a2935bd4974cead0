import { MODULE_TEMPLATES } from '../../contracts/module-templates';
import { json, startPlatform, type Entity, type Page, type TestPlatform } from '../support/platform';

jest.setTimeout(60_000);

let platform: TestPlatform;

async function create(path: string, body: unknown): Promise<Entity> {
  const response = await platform.call('POST', path, { body });
  expect(response.status).toBe(201);
  return json<Entity>(response);
}

async function errorOf(response: Response): Promise<{ status: number; code: string; details: unknown }> {
  const body = await json<{ code: string; details: unknown }>(response);
  return { status: response.status, code: body.code, details: body.details };
}

async function fieldsOf(moduleId: number): Promise<Entity[]> {
  return (await json<Page>(await platform.call('GET', `/field?filter=moduleId=${moduleId}`))).items;
}

beforeAll(async () => {
  platform = await startPlatform();
});

afterAll(async () => {
  await platform.stop();
});

describe('the catalogue of built-in modules', () => {
  test('GET /module/built-in lists every template with its fields', async () => {
    const response = await platform.call('GET', '/module/built-in');
    expect(response.status).toBe(200);
    const page = await json<{ items: Array<Record<string, unknown>>; meta: Record<string, number> }>(
      response,
    );
    expect(page.items.map((item) => item.template)).toEqual(['contacts', 'companies', 'deals', 'tasks']);
    expect(page.meta).toEqual({ total: 4, offset: 0, limit: 4 });
    expect(page.items[2]).toEqual({
      template: 'deals',
      name: 'Deals',
      description: 'Opportunities in your sales pipeline',
      fields: MODULE_TEMPLATES.deals.fields.map((field, index) => ({ ...field, position: index + 1 })),
    });
  });

  test('GET /module/built-in/{template} answers one; an unknown one is a 404, query parameters a 400', async () => {
    expect(await json(await platform.call('GET', '/module/built-in/tasks'))).toMatchObject({
      template: 'tasks',
      name: 'Tasks',
    });
    for (const unknown of ['leads', 'item'])
      expect(await errorOf(await platform.call('GET', `/module/built-in/${unknown}`))).toMatchObject({
        status: 404,
        code: 'E4040',
      });
    expect((await platform.call('GET', '/module/built-in?limit=1')).status).toBe(400);
  });
});

describe('installing built-in modules', () => {
  let spaceId: number;
  let contacts: Entity;

  beforeAll(async () => {
    spaceId = (await create('/space', { name: 'CRM' })).id;
    contacts = await create('/module', { spaceId, template: 'contacts' });
  });

  test('a built-in module takes its template’s name, description and fields, marked built in', async () => {
    expect(contacts).toEqual({
      id: contacts.id,
      spaceId,
      name: 'Contacts',
      description: 'People you work with',
      kind: 'built-in',
      template: 'contacts',
    });
    expect(await json(await platform.call('GET', `/module/${contacts.id}`))).toMatchObject({
      kind: 'built-in',
      template: 'contacts',
    });
    const fields = await fieldsOf(contacts.id);
    expect(fields.map((field) => [field.key, field.type, field.position, field.builtIn])).toEqual(
      MODULE_TEMPLATES.contacts.fields.map((field, index) => [field.key, field.type, index + 1, true]),
    );
  });

  test('a template is installed once per space (409); another space can have it too', async () => {
    const again = await platform.call('POST', '/module', { body: { spaceId, template: 'contacts' } });
    expect(await errorOf(again)).toEqual({
      status: 409,
      code: 'E4090',
      details: [{ path: 'template', message: 'already installed in this space' }],
    });
    const elsewhere = (await create('/space', { name: 'Other CRM' })).id;
    expect(await create('/module', { spaceId: elsewhere, template: 'contacts' })).toMatchObject({
      spaceId: elsewhere,
      kind: 'built-in',
    });
  });

  test('two installs of one template at once: one is created, the other is a 409', async () => {
    const [first, second] = await Promise.all(
      [1, 2].map(() => platform.call('POST', '/module', { body: { spaceId, template: 'tasks' } })),
    );
    expect([first!.status, second!.status].sort()).toEqual([201, 409]);
    const tasks = await json<Page>(
      await platform.call('GET', `/module?filter=spaceId=${spaceId};template=tasks`),
    );
    expect(tasks.meta.total).toBe(1);
  });

  test('a repeated install with its Idempotency-Key answers the first install, not a 409', async () => {
    const request = {
      body: { spaceId, template: 'companies', name: 'Accounts', description: null },
      headers: { 'Idempotency-Key': 'install-companies' },
    };
    const first = await platform.call('POST', '/module', request);
    expect(first.status).toBe(201);
    const repeat = await platform.call('POST', '/module', request);
    expect(repeat.status).toBe(201);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    const body = await json<Entity>(repeat);
    expect(body).toEqual(await json<Entity>(first));
    expect(body).toMatchObject({ name: 'Accounts', description: null, template: 'companies' });
  });

  test('GET /module filters on kind and template', async () => {
    await create('/module', { spaceId, name: 'Projects' });
    const builtIn = await json<Page>(
      await platform.call('GET', `/module?filter=spaceId=${spaceId};kind=built-in&order=id;ASC`),
    );
    expect(builtIn.items.map((module) => module.template)).toEqual(['contacts', 'tasks', 'companies']);
    const custom = await json<Page>(
      await platform.call('GET', `/module?filter=spaceId=${spaceId};kind=custom`),
    );
    expect(custom.items.map((module) => [module.name, module.template])).toEqual([['Projects', null]]);
  });

  test('bad install bodies are 400s that name the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ spaceId }, 'name'],
      [{ spaceId, template: 'leads' }, 'template'],
      [{ spaceId, template: 'deals', kind: 'built-in' }, '(root)'],
      [{ spaceId: 99_999, template: 'deals' }, 'spaceId'],
    ];
    for (const [body, path] of cases) {
      const refused = await errorOf(await platform.call('POST', '/module', { body }));
      expect({ body, status: refused.status, code: refused.code }).toEqual({
        body,
        status: 400,
        code: 'E4001',
      });
      expect(refused.details).toEqual([expect.objectContaining({ path })]);
    }
    const retemplated = await platform.call('PUT', `/module/${contacts.id}`, { body: { template: 'deals' } });
    expect(retemplated.status).toBe(400);
  });
});

describe('working with a built-in module', () => {
  let deals: Entity;
  let fields: Map<string, Entity>;

  beforeAll(async () => {
    const spaceId = (await create('/space', { name: 'Sales' })).id;
    deals = await create('/module', { spaceId, template: 'deals', name: 'Pipeline' });
    fields = new Map((await fieldsOf(deals.id)).map((field) => [String(field.key), field]));
  });

  test('records are checked against the built-in fields (a deal needs its stage)', async () => {
    const missing = await errorOf(
      await platform.call('POST', '/record', { body: { moduleId: deals.id, name: 'Acme' } }),
    );
    expect(missing).toMatchObject({ status: 400, details: [{ path: 'fields.stage' }] });
    const deal = await create('/record', {
      moduleId: deals.id,
      name: 'Acme',
      fields: { stage: 'Proposal', amount: 1200.5, probability: 40, close_date: '2026-03-31' },
    });
    expect(deal.fields).toEqual({
      stage: 'Proposal',
      amount: 1200.5,
      probability: 40,
      close_date: '2026-03-31',
    });
  });

  test('a built-in field cannot be removed (409), but can be renamed, made optional and given options', async () => {
    const stage = fields.get('stage')!;
    expect(await errorOf(await platform.call('DELETE', `/field/${stage.id}`))).toMatchObject({
      status: 409,
      code: 'E4090',
    });
    const changed = await platform.call('PUT', `/field/${stage.id}`, {
      body: { name: 'Pipeline stage', required: false, config: { options: ['Open', 'Won', 'Lost'] } },
    });
    expect(changed.status).toBe(200);
    expect(await json(changed)).toMatchObject({
      key: 'stage',
      type: 'select',
      name: 'Pipeline stage',
      required: false,
      builtIn: true,
    });
    expect(await json(await platform.call('GET', `/field/${stage.id}`))).toMatchObject({
      name: 'Pipeline stage',
      builtIn: true,
    });
    const builtIn = await json<Page>(
      await platform.call('GET', `/field?filter=moduleId=${deals.id};builtIn=true`),
    );
    expect(builtIn.meta.total).toBe(MODULE_TEMPLATES.deals.fields.length);
  });

  test('custom fields can be added to it (not on a built-in key) and removed again', async () => {
    const source = await create('/field', { moduleId: deals.id, name: 'Lead source', type: 'text' });
    expect(source).toMatchObject({ key: 'lead_source', builtIn: false, position: 6 });
    const taken = await platform.call('POST', '/field', {
      body: { moduleId: deals.id, name: 'Amount', key: 'amount', type: 'number' },
    });
    expect(taken.status).toBe(409);
    expect((await platform.call('DELETE', `/field/${source.id}`)).status).toBe(200);
  });

  test('it can be deleted once it holds no records, and then installed again', async () => {
    const spaceId = deals.spaceId as number;
    expect((await platform.call('DELETE', `/module/${deals.id}`)).status).toBe(409);
    const records = await json<Page>(await platform.call('GET', `/module/${deals.id}/item`));
    for (const record of records.items)
      expect((await platform.call('DELETE', `/record/${record.id}`)).status).toBe(200);
    expect((await platform.call('DELETE', `/module/${deals.id}`)).status).toBe(200);
    expect((await platform.call('GET', `/module/${deals.id}`)).status).toBe(404);
    const again = await create('/module', { spaceId, template: 'deals' });
    expect(again.id).not.toBe(deals.id);
    expect(again).toMatchObject({ name: 'Deals', kind: 'built-in', template: 'deals' });
  });
});
