import { json, startPlatform, type Entity, type Page, type TestPlatform } from '../support/platform';

jest.setTimeout(60_000);

/** A record and its history as they were at a time or a position of the log, over HTTP. */
describe('a record in the past', () => {
  let platform: TestPlatform;
  let moduleId: number;

  beforeAll(async () => {
    // A cap this low shows both answers of a capped count with a handful of records.
    platform = await startPlatform({ PAST_LIST_COUNT_CAP: '2' });
    const space = await json<Entity>(await platform.call('POST', '/space', { body: { name: 'Past' } }));
    moduleId = (
      await json<Entity>(
        await platform.call('POST', '/module', { body: { spaceId: space.id, name: 'Deals' } }),
      )
    ).id;
    expect(
      (
        await platform.call('POST', '/field', {
          body: { moduleId, name: 'Stage', key: 'stage', type: 'text' },
        })
      ).status,
    ).toBe(201);
  });
  afterAll(() => platform.stop());

  /** A write, and the position it reached. */
  async function write(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ id: number; position: string }> {
    const response = await platform.call(method, path, body === undefined ? {} : { body });
    expect(response.status).toBeLessThan(300);
    const answer = await json<Entity>(response);
    return { id: answer.id, position: response.headers.get('x-position')! };
  }

  const at = (recordId: number, query: string) => platform.call('GET', `/record/${recordId}?${query}`);
  const pause = () => new Promise((resolve) => setTimeout(resolve, 30));

  test('at each position and time the record is what it was then; before it, 404; after its deletion, 410', async () => {
    const before = new Date().toISOString();
    await pause();
    const created = await write('POST', '/record', { moduleId, name: 'Deal', fields: { stage: 'lead' } });
    const recordId = created.id;
    await pause();
    const afterCreate = new Date().toISOString();
    await pause();
    const won = await write('PUT', `/record/${recordId}`, { name: 'Big deal', fields: { stage: 'won' } });
    await pause();
    const afterWin = new Date().toISOString();
    await pause();
    const deleted = await write('DELETE', `/record/${recordId}`);

    const past = await at(recordId, `atPosition=${created.position}`);
    expect(past.status).toBe(200);
    expect(past.headers.get('x-as-of-position')).toBe(created.position);
    expect(past.headers.get('etag')).toBeNull();
    expect(await json(past)).toMatchObject({ id: recordId, name: 'Deal', fields: { stage: 'lead' } });
    expect(await json(await at(recordId, `atPosition=${won.position}`))).toMatchObject({
      name: 'Big deal',
      fields: { stage: 'won' },
    });
    expect(await json(await at(recordId, `asOf=${encodeURIComponent(afterCreate)}`))).toMatchObject({
      name: 'Deal',
    });
    expect(await json(await at(recordId, `asOf=${encodeURIComponent(afterWin)}`))).toMatchObject({
      name: 'Big deal',
    });
    // Before it was created: it did not exist yet.
    const early = await at(recordId, `asOf=${encodeURIComponent(before)}`);
    expect(early.status).toBe(404);
    expect((await at(recordId, 'atPosition=1')).status).toBe(404);
    // Deleted by then: 410, today too (the present read says 404 as ever).
    const gone = await at(recordId, `atPosition=${deleted.position}`);
    expect(gone.status).toBe(410);
    expect(await gone.text()).toContain('deleted');
    expect((await at(recordId, 'asOf=2999-01-01T00:00:00Z')).status).toBe(410);
    expect((await platform.call('GET', `/record/${recordId}`)).status).toBe(404);
  });

  test('a time in the future reads the present; a position beyond the log too', async () => {
    const record = await write('POST', '/record', { moduleId, name: 'Now', fields: { stage: 'open' } });
    const future = await at(record.id, 'asOf=2999-01-01T00:00:00%2B02:00');
    expect(future.status).toBe(200);
    expect(await json(future)).toMatchObject({ name: 'Now', fields: { stage: 'open' } });
    const beyond = await at(record.id, 'atPosition=99999999999999');
    expect(beyond.status).toBe(200);
    expect(BigInt(beyond.headers.get('x-as-of-position')!)).toBeGreaterThanOrEqual(BigInt(record.position));
  });

  test('the history is cut at the moment asked for', async () => {
    const created = await write('POST', '/record', { moduleId, name: 'Stepwise' });
    const first = await write('PUT', `/record/${created.id}`, { name: 'Stepwise 2' });
    await write('PUT', `/record/${created.id}`, { name: 'Stepwise 3' });
    const history = async (query: string) =>
      json<Page<{ type: string; position: number }>>(
        await platform.call('GET', `/record/${created.id}/history${query}`, {
          headers: { 'X-Min-Position': first.position },
        }),
      );
    expect((await history('')).items).toHaveLength(3);
    const cut = await history(`?atPosition=${first.position}`);
    expect(cut.items.map((entry) => entry.type)).toEqual(['RecordUpdated', 'RecordCreated']);
    expect((await history(`?atPosition=${created.position}&limit=5`)).items).toHaveLength(1);
  });

  test('a module’s list as of a moment: the records then, filtered and ordered with the list language', async () => {
    const space = await json<Entity>(await platform.call('POST', '/space', { body: { name: 'Lists' } }));
    const listed = (
      await json<Entity>(
        await platform.call('POST', '/module', { body: { spaceId: space.id, name: 'Pipeline' } }),
      )
    ).id;
    expect(
      (
        await platform.call('POST', '/field', {
          body: { moduleId: listed, name: 'Stage', key: 'stage', type: 'text' },
        })
      ).status,
    ).toBe(201);
    const a = await write('POST', '/record', { moduleId: listed, name: 'A', fields: { stage: 'lead' } });
    const b = await write('POST', '/record', { moduleId: listed, name: 'B', fields: { stage: 'won' } });
    const first = b.position;
    await write('PUT', `/record/${a.id}`, { fields: { stage: 'won' } });
    await write('DELETE', `/record/${b.id}`);
    const c = await write('POST', '/record', { moduleId: listed, name: 'C', fields: { stage: 'won' } });
    const list = async (query: string) => {
      const response = await platform.call('GET', `/module/${listed}/item?${query}`, {
        headers: { 'X-Min-Position': c.position },
      });
      expect(response.status).toBe(200);
      return json<Page<{ id: number; name: string; fields: Record<string, unknown> }>>(response);
    };
    const then = await list(`atPosition=${first}&order=name;ASC`);
    expect(then.items.map((item) => [item.name, item.fields.stage])).toEqual([
      ['A', 'lead'],
      ['B', 'won'],
    ]);
    expect(then.meta).toMatchObject({ total: 2, totalRelation: 'eq' });
    expect((await list(`atPosition=${first}&filter=stage=won`)).items.map((item) => item.name)).toEqual([
      'B',
    ]);
    const now = await list('filter=stage=won&order=name');
    expect(now.items.map((item) => item.name)).toEqual(['C', 'A']);
    expect(
      (await list(`atPosition=${c.position}&filter=stage=won&order=name`)).items.map((item) => item.name),
    ).toEqual(['C', 'A']);
    // Before the module had records: an empty list.
    expect((await list(`atPosition=${Number(a.position) - 1}`)).items).toEqual([]);
    // Counting stops past the cap (PAST_LIST_COUNT_CAP): the total is then a lower bound; today's list counts all.
    const d = await write('POST', '/record', { moduleId: listed, name: 'D', fields: { stage: 'lead' } });
    const capped = await list(`atPosition=${d.position}&limit=1`);
    expect(capped.items).toHaveLength(1);
    expect(capped.meta).toEqual({ total: 2, offset: 0, limit: 1, totalRelation: 'gte' });
    expect((await list('limit=1')).meta).toEqual({ total: 3, offset: 0, limit: 1 });
    expect((await list(`atPosition=${d.position}&filter=stage=lead`)).meta).toMatchObject({
      total: 1,
      totalRelation: 'eq',
    });
    expect((await platform.call('GET', `/module/${listed}/item?asOf=later`)).status).toBe(400);
  });

  test('malformed moments are a 400 naming the parameter; both at once too', async () => {
    const record = await write('POST', '/record', { moduleId, name: 'Checked' });
    const cases: Array<[string, string]> = [
      ['asOf=yesterday', 'asOf'],
      ['asOf=2026-11-27T12:00:00', 'asOf'],
      ['asOf=2026-13-01T00:00:00Z', 'asOf'],
      ['atPosition=-1', 'atPosition'],
      ['atPosition=007', 'atPosition'],
      ['atPosition=18446744073709551616', 'atPosition'],
      ['atPosition=1e3', 'atPosition'],
      ['atPosition=0x10', 'atPosition'],
      ['atPosition=123456789012345678901', 'atPosition'],
      ['atPosition=1&atPosition=2', 'atPosition'],
      [`asOf=2026-11-27T12:00:00Z&atPosition=${record.position}`, 'atPosition'],
    ];
    for (const [query, parameter] of cases) {
      const response = await at(record.id, query);
      const text = await response.text();
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
      expect({ query, names: text.includes(parameter) }).toEqual({ query, names: true });
    }
    expect((await platform.call('GET', `/record/${record.id}/history?asOf=soon`)).status).toBe(400);
    // The position a read waits for is spelled as the moments' are.
    for (const position of ['007', '+7', '18446744073709551616']) {
      const response = await platform.call('GET', `/record/${record.id}`, {
        headers: { 'X-Min-Position': position },
      });
      expect({ position, status: response.status }).toEqual({ position, status: 400 });
      expect(await response.text()).toContain('X-Min-Position');
    }
  });
});
