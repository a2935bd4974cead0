import { json, startPlatform, type TestPlatform, type Entity } from '../support/platform';

jest.setTimeout(60_000);

let platform: TestPlatform;
let recordId: number;

async function create(path: string, body: unknown): Promise<Entity> {
  const response = await platform.call('POST', path, { body });
  expect(response.status).toBe(201);
  return json<Entity>(response);
}

beforeAll(async () => {
  platform = await startPlatform();
  const space = await create('/space', { name: 'Sales' });
  const module = await create('/module', { spaceId: space.id, name: 'Deals' });
  recordId = (await create('/record', { moduleId: module.id, name: 'Deal' })).id;
});

afterAll(async () => {
  await platform.stop();
});

test('labels: create, read, list, change, delete by path and by body', async () => {
  const vip = await create('/label', { name: 'VIP', color: '#FF0000' });
  expect(vip).toEqual({ id: vip.id, name: 'VIP', color: '#ff0000' });
  const plain = await create('/label', { name: 'Plain' });
  expect(plain.color).toBe('#808080');

  const list = await json<{ items: Entity[] }>(await platform.call('GET', '/label?order=name;ASC'));
  expect(list.items.map((label) => label.name)).toEqual(['Plain', 'VIP']);
  const changed = await platform.call('PUT', '/label', { body: { id: plain.id, color: '#00ff00' } });
  expect(await json(changed)).toMatchObject({ id: plain.id, color: '#00ff00' });

  expect((await platform.call('DELETE', '/label', { body: { id: plain.id } })).status).toBe(200);
  expect((await platform.call('GET', `/label/${plain.id}`)).status).toBe(404);
  const temporary = await create('/label', { name: 'Temporary' });
  expect((await platform.call('DELETE', `/label/${temporary.id}`)).status).toBe(200);

  for (const body of [{ name: '' }, { name: 'x', color: 'red' }, { name: 'x', extra: 1 }]) {
    const response = await platform.call('POST', '/label', { body });
    expect(response.status).toBe(400);
  }
  expect((await platform.call('DELETE', '/label', { body: {} })).status).toBe(400);
});

test('record labels: attach, list, read one, detach; missing labels and records are 404s', async () => {
  const hot = await create('/label', { name: 'Hot' });
  const cold = await create('/label', { name: 'Cold' });
  const attached = await platform.call('POST', `/record/${recordId}/label/${hot.id}`);
  expect(attached.status).toBe(200);
  expect(await json(attached)).toEqual({ recordId, labelIds: [hot.id] });
  expect((await platform.call('POST', `/record/${recordId}/label/${cold.id}`)).status).toBe(200);
  // Attaching again changes nothing.
  expect((await platform.call('POST', `/record/${recordId}/label/${hot.id}`)).status).toBe(200);

  const record = await json<Entity>(await platform.call('GET', `/record/${recordId}`));
  expect(record.labelIds).toEqual([hot.id, cold.id].sort((a, b) => a - b));
  const labels = await json<{ items: Entity[]; meta: { total: number } }>(
    await platform.call('GET', `/record/${recordId}/label?order=name;ASC`),
  );
  expect(labels.items.map((label) => label.name)).toEqual(['Cold', 'Hot']);
  expect(labels.meta.total).toBe(2);
  const one = await platform.call('GET', `/record/${recordId}/label/${hot.id}`);
  expect(await json(one)).toMatchObject({ id: hot.id, name: 'Hot' });

  expect((await platform.call('DELETE', `/record/${recordId}/label/${hot.id}`)).status).toBe(200);
  expect((await platform.call('GET', `/record/${recordId}/label/${hot.id}`)).status).toBe(404);
  expect((await platform.call('DELETE', `/record/${recordId}/label/${hot.id}`)).status).toBe(404);
  expect((await platform.call('POST', `/record/${recordId}/label/99999`)).status).toBe(404);
  expect((await platform.call('POST', `/record/99999/label/${cold.id}`)).status).toBe(404);

  // A label deleted after it was attached is no longer listed for the record.
  expect((await platform.call('DELETE', `/label/${cold.id}`)).status).toBe(200);
  const after = await json<{ items: Entity[] }>(await platform.call('GET', `/record/${recordId}/label`));
  expect(after.items).toEqual([]);
});

test('soft delete: a deleted record leaves the lists, shows in /record/deleted, and can be restored', async () => {
  const space = await create('/space', { name: 'Archive' });
  const module = await create('/module', { spaceId: space.id, name: 'Cases' });
  const kept = await create('/record', { moduleId: module.id, name: 'Kept' });
  const gone = await create('/record', { moduleId: module.id, name: 'Gone' });

  expect((await platform.call('DELETE', `/record/${gone.id}`)).status).toBe(200);
  expect((await platform.call('GET', `/record/${gone.id}`)).status).toBe(404);
  expect((await platform.call('PUT', `/record/${gone.id}`, { body: { name: 'x' } })).status).toBe(404);
  const live = await json<{ items: Entity[] }>(await platform.call('GET', `/module/${module.id}/item`));
  expect(live.items.map((record) => record.id)).toEqual([kept.id]);
  const deleted = await json<{ items: Entity[]; meta: { total: number } }>(
    await platform.call('GET', `/record/deleted?filter=moduleId=${module.id}`),
  );
  expect(deleted.items).toEqual([
    expect.objectContaining({ id: gone.id, name: 'Gone', deletedAt: expect.any(String), deletedBy: '1' }),
  ]);
  const badFilter = await platform.call('GET', '/record/deleted?filter=nope=1');
  expect(badFilter.status).toBe(400);

  // Only live records hold a module: with the other one deleted too, the module can go.
  expect((await platform.call('DELETE', `/module/${module.id}`)).status).toBe(409);
  const restored = await platform.call('POST', `/record/${gone.id}/restore`);
  expect(restored.status).toBe(200);
  expect(await json(restored)).toMatchObject({ id: gone.id, name: 'Gone' });
  expect((await platform.call('GET', `/record/${gone.id}`)).status).toBe(200);
  expect((await platform.call('POST', `/record/${gone.id}/restore`)).status).toBe(409);
  expect((await platform.call('POST', '/record/99999/restore')).status).toBe(404);

  for (const record of [kept, gone])
    expect((await platform.call('DELETE', `/record/${record.id}`)).status).toBe(200);
  expect((await platform.call('DELETE', `/module/${module.id}`)).status).toBe(200);
  expect((await platform.call('POST', `/record/${gone.id}/restore`)).status).toBe(409);
});

test('history from the events: the audit trail, a record’s history, and my field changes', async () => {
  const space = await create('/space', { name: 'History' });
  const module = await create('/module', { spaceId: space.id, name: 'Tickets' });
  await create('/field', { moduleId: module.id, name: 'Status', type: 'text' });
  const ticket = await create('/record', {
    moduleId: module.id,
    name: 'Printer',
    fields: { status: 'open' },
  });
  expect(
    (await platform.call('PUT', `/record/${ticket.id}`, { body: { fields: { status: 'closed' } } })).status,
  ).toBe(200);

  const mine = await json<{ items: Array<Record<string, unknown>>; meta: { total: number } }>(
    await platform.call('GET', `/auth/field-history/${module.id}/${ticket.id}?filter=field=fields.status`),
  );
  expect(mine.items).toEqual([
    expect.objectContaining({ field: 'fields.status', oldValue: 'open', newValue: 'closed', userId: '1' }),
    expect.objectContaining({ field: 'fields.status', oldValue: null, newValue: 'open', userId: '1' }),
  ]);
  expect(typeof mine.items[0]!.credentialId).toBe('string');
  expect(typeof mine.items[0]!.changedAt).toBe('string');
  expect((await platform.call('GET', `/auth/field-history/${module.id + 1000}/${ticket.id}`)).status).toBe(
    404,
  );

  const history = await json<{ items: Array<Record<string, unknown>> }>(
    await platform.call('GET', `/record/${ticket.id}/history`),
  );
  expect(history.items.map((entry) => entry.type)).toEqual(['RecordUpdated', 'RecordCreated']);
  expect(history.items[0]!.data).toEqual({
    recordId: ticket.id,
    changes: [{ field: 'fields.status', from: 'open', to: 'closed' }],
  });

  const audit = await json<{ items: Array<Record<string, unknown>> }>(
    await platform.call('GET', `/audit?filter=category=module;streamId~%25.${module.id}&limit=10`),
  );
  expect(audit.items.map((entry) => entry.type)).toEqual(['FieldAdded', 'ModuleCreated']);
  expect((await platform.call('GET', '/audit?filter=nope=1')).status).toBe(400);
});

describe('bulk record writes', () => {
  let moduleId: number;

  beforeAll(async () => {
    const space = await create('/space', { name: 'Bulk' });
    moduleId = (await create('/module', { spaceId: space.id, name: 'Leads' })).id;
    await create('/field', { moduleId, name: 'Score', type: 'number' });
  });

  test('create: one result per item, in order; a bad item fails alone and writes nothing', async () => {
    const response = await platform.call('POST', '/record/bulk', {
      body: {
        items: [
          { moduleId, name: 'A', fields: { score: 1 } },
          { moduleId, name: 'B', fields: { score: 'high' } },
          { moduleId, name: '' },
          { moduleId, name: 'C' },
        ],
      },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-position')).toMatch(/^\d+$/);
    const body = await json<{ items: Array<Record<string, unknown>>; meta: Record<string, number> }>(
      response,
    );
    expect(body.meta).toEqual({ succeeded: 2, failed: 2 });
    expect(body.items.map((item) => [item.index, item.status])).toEqual([
      [0, 201],
      [1, 400],
      [2, 400],
      [3, 201],
    ]);
    expect(body.items[1]!.error).toMatchObject({ code: 'E4001', details: [{ path: 'fields.score' }] });
    const listed = await json<{ items: Entity[] }>(
      await platform.call('GET', `/module/${moduleId}/item?order=id;ASC`),
    );
    expect(listed.items.map((record) => record.name)).toEqual(['A', 'C']);
    expect(listed.items.map((record) => record.id)).toEqual([body.items[0]!.id, body.items[3]!.id]);
  });

  test("create across modules: each item meets its own module's fields; an unknown module fails its item", async () => {
    const space = await create('/space', { name: 'Bulk two' });
    const other = (await create('/module', { spaceId: space.id, name: 'Pipeline' })).id;
    await create('/field', {
      moduleId: other,
      name: 'Stage',
      key: 'stage',
      type: 'select',
      config: { options: ['lead', 'won'] },
    });
    const response = await platform.call('POST', '/record/bulk', {
      body: {
        items: [
          { moduleId, name: 'First', fields: { score: 2 } },
          { moduleId: other, name: 'Second', fields: { stage: 'won' } },
          { moduleId: other, name: 'Third', fields: { stage: 'lost' } },
          { moduleId: 999_999, name: 'Nowhere' },
          { moduleId: other, name: 'Fifth', fields: { score: 3 } },
        ],
      },
    });
    const body = await json<{ items: Array<Record<string, unknown>>; meta: Record<string, number> }>(
      response,
    );
    expect(body.items.map((item) => item.status)).toEqual([201, 201, 400, 400, 400]);
    expect(body.items[3]!.error).toMatchObject({ details: [{ path: 'moduleId' }] });
    const listed = await json<{ items: Entity[] }>(await platform.call('GET', `/module/${other}/item`));
    expect(listed.items.map((record) => [record.id, record.name])).toEqual([[body.items[1]!.id, 'Second']]);
    expect(await json(await platform.call('GET', `/record/${String(body.items[0]!.id)}`))).toMatchObject({
      moduleId,
      fields: { score: 2 },
    });
  });

  test('create with an Idempotency-Key: a repeat appends nothing and answers with the same ids', async () => {
    const request = {
      body: {
        items: [
          { moduleId, name: 'Once 1' },
          { moduleId, name: 'Once 2' },
        ],
      },
      headers: { 'Idempotency-Key': `bulk-${Date.now()}` },
    };
    const first = await json<{ items: Array<{ id: number }> }>(
      await platform.call('POST', '/record/bulk', request),
    );
    const again = await json<{ items: Array<{ id: number }> }>(
      await platform.call('POST', '/record/bulk', request),
    );
    expect(again.items.map((item) => item.id)).toEqual(first.items.map((item) => item.id));
    const named = await json<{ meta: { total: number } }>(
      await platform.call('GET', `/record?filter=name~Once%25;moduleId=${moduleId}`),
    );
    expect(named.meta.total).toBe(2);
  });

  test('update and delete: per-item results; missing records are 404 items', async () => {
    const created = await json<{ items: Array<{ id: number }> }>(
      await platform.call('POST', '/record/bulk', {
        body: {
          items: [
            { moduleId, name: 'U1' },
            { moduleId, name: 'U2' },
          ],
        },
      }),
    );
    const [first, second] = created.items.map((item) => item.id);
    const updated = await json<{ items: Array<Record<string, unknown>>; meta: Record<string, number> }>(
      await platform.call('PUT', '/record/bulk', {
        body: { items: [{ id: first, fields: { score: 5 } }, { id: 99999, name: 'x' }, { name: 'no id' }] },
      }),
    );
    expect(updated.items.map((item) => item.status)).toEqual([200, 404, 400]);
    expect(await json(await platform.call('GET', `/record/${first}`))).toMatchObject({
      fields: { score: 5 },
    });

    const deleted = await json<{ items: Array<Record<string, unknown>>; meta: Record<string, number> }>(
      await platform.call('DELETE', '/record/bulk', { body: { ids: [first, second, 99999] } }),
    );
    expect(deleted.items.map((item) => item.status)).toEqual([200, 200, 404]);
    expect((await platform.call('GET', `/record/${second}`)).status).toBe(404);
  });

  test('the request itself is checked: no items, too many, or not a list is a 400 and writes nothing', async () => {
    for (const body of [
      { items: [] },
      { items: 'x' },
      { items: Array.from({ length: 1001 }, () => ({})) },
      {},
    ]) {
      expect((await platform.call('POST', '/record/bulk', { body })).status).toBe(400);
    }
    expect((await platform.call('DELETE', '/record/bulk', { body: { ids: [0] } })).status).toBe(400);
  });
});

test('saved segments: a checked filter of one space; its records as a list page', async () => {
  const space = await create('/space', { name: 'Segments' });
  const other = await create('/space', { name: 'Elsewhere' });
  const module = await create('/module', { spaceId: space.id, name: 'Deals' });
  const elsewhere = await create('/module', { spaceId: other.id, name: 'Deals' });
  for (const name of ['Big one', 'Big two', 'Small']) await create('/record', { moduleId: module.id, name });
  await create('/record', { moduleId: elsewhere.id, name: 'Big elsewhere' });

  const segment = await create('/segment', {
    spaceId: space.id,
    name: 'Big deals',
    filter: 'name~Big%',
    order: 'name;DESC',
  });
  expect(segment).toMatchObject({ spaceId: space.id, filter: 'name~Big%', order: 'name;DESC' });
  const records = await json<{ items: Entity[]; meta: { total: number } }>(
    await platform.call('GET', `/segment/${segment.id}/record`),
  );
  expect(records.items.map((record) => record.name)).toEqual(['Big two', 'Big one']);
  const narrowed = await json<{ items: Entity[] }>(
    await platform.call('GET', `/segment/${segment.id}/record?filter=name=Big%20one`),
  );
  expect(narrowed.items.map((record) => record.name)).toEqual(['Big one']);

  const syntax = await platform.call('POST', '/segment', {
    body: { spaceId: space.id, name: 'x', filter: 'name=(a' },
  });
  expect(syntax.status).toBe(400);
  expect((await json(syntax)).code).toBe('E4002');
  const unknown = await platform.call('POST', '/segment', {
    body: { spaceId: space.id, name: 'x', filter: 'nope=1' },
  });
  expect((await json(unknown)).code).toBe('E4003');
  expect((await platform.call('POST', '/segment', { body: { spaceId: 99999, name: 'x' } })).status).toBe(400);

  expect((await platform.call('PUT', `/segment/${segment.id}`, { body: { filter: null } })).status).toBe(200);
  const all = await json<{ meta: { total: number } }>(
    await platform.call('GET', `/segment/${segment.id}/record`),
  );
  expect(all.meta.total).toBe(3);
  expect((await platform.call('DELETE', `/segment/${segment.id}`)).status).toBe(200);
  expect((await platform.call('GET', `/segment/${segment.id}/record`)).status).toBe(404);
});

test('remote lookups: a remote key points at one record; linking it again moves it', async () => {
  const space = await create('/space', { name: 'Remote' });
  const module = await create('/module', { spaceId: space.id, name: 'Accounts' });
  const first = await create('/record', { moduleId: module.id, name: 'First' });
  const second = await create('/record', { moduleId: module.id, name: 'Second' });
  const path = '/record/remote/0015g00000AbC%3A1/salesforce';

  expect((await platform.call('GET', path)).status).toBe(404);
  const linked = await platform.call('POST', path, { body: { recordId: first.id } });
  expect(linked.status).toBe(200);
  expect(await json(linked)).toEqual({
    remoteApplication: 'salesforce',
    remoteId: '0015g00000AbC:1',
    recordId: first.id,
  });
  expect(await json(await platform.call('GET', path))).toMatchObject({
    id: first.id,
    name: 'First',
    remote: { remoteApplication: 'salesforce', remoteId: '0015g00000AbC:1' },
  });
  // The same key in another application is another key.
  expect((await platform.call('GET', '/record/remote/0015g00000AbC%3A1/hubspot')).status).toBe(404);

  expect((await platform.call('POST', path, { body: { recordId: second.id } })).status).toBe(200);
  expect(await json(await platform.call('GET', path))).toMatchObject({ id: second.id });

  expect((await platform.call('POST', path, { body: { recordId: 99999 } })).status).toBe(404);
  expect((await platform.call('POST', path, { body: { recordId: 'x' } })).status).toBe(400);
  expect((await platform.call('GET', '/record/remote/abc/bad%20app')).status).toBe(400);
});
