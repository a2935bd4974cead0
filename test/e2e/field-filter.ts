import { json, startPlatform, type Entity, type TestPlatform } from '../support/platform';

/**
 * Records filter and sort on their own field values, through real HTTP: by key and by `fields.<fieldId>`, on
 * `/record`, `/module/{moduleId}/item`, `/record/deleted` and `/segment/{segmentId}/record`.
 */
let platform: TestPlatform;
let deals: number;
let other: number;
const fieldIds: Record<string, number> = {};
const ids: Record<string, number> = {};

interface Page {
  items: Array<Entity & { name: string }>;
  meta: { total: number };
}
interface ErrorBody {
  code: string;
  error: string;
  message: string;
  details?: unknown;
}

async function create(path: string, body: unknown): Promise<Entity> {
  const response = await platform.call('POST', path, { body });
  if (response.status !== 201)
    throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
  return json<Entity>(response);
}

async function names(path: string): Promise<string[]> {
  const response = await platform.call('GET', path);
  if (response.status !== 200)
    throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
  return (await json<Page>(response)).items.map((item) => item.name);
}

async function refused(path: string): Promise<ErrorBody> {
  const response = await platform.call('GET', path);
  expect(response.status).toBe(400);
  return json<ErrorBody>(response);
}

const q = encodeURIComponent;

/** The suite, on the read store `env` selects. */
export function fieldFilterE2e(env: () => Record<string, string>): void {
  beforeAll(async () => {
    platform = await startPlatform(env());
    const space = await create('/space', { name: 'Sales' });
    deals = (await create('/module', { spaceId: space.id, name: 'Deals' })).id;
    other = (await create('/module', { spaceId: space.id, name: 'Other' })).id;
    const fields = [
      { key: 'status', type: 'select', config: { options: ['active', 'pending', 'closed'] } },
      { key: 'amount', type: 'number' },
      { key: 'price', type: 'decimal' },
      { key: 'due', type: 'date' },
      { key: 'at', type: 'datetime' },
      { key: 'done', type: 'checkbox' },
      { key: 'tags', type: 'multi_select', config: { options: ['a', 'b', 'c'] } },
      { key: 'note', type: 'text' },
      { key: 'docs', type: 'file' },
      { key: 'go', type: 'button', config: { webhookUrl: 'http://localhost:9/hook' } },
    ];
    for (const field of fields)
      fieldIds[field.key] = (await create('/field', { moduleId: deals, name: field.key, ...field })).id;
    // The same keys in another module of the space: `status` compares alike, `amount` does not.
    await create('/field', {
      moduleId: other,
      name: 'status',
      key: 'status',
      type: 'select',
      config: { options: ['active', 'archived'] },
    });
    fieldIds.otherAmount = (
      await create('/field', { moduleId: other, name: 'amount', key: 'amount', type: 'text' })
    ).id;

    const records = [
      {
        name: 'R1',
        fields: {
          status: 'active',
          amount: 10,
          price: 1.5,
          due: '2024-01-02',
          at: '2024-01-01T10:00:00+02:00',
        },
      },
      {
        name: 'R2',
        fields: { status: 'pending', amount: 9, price: 10.25, due: '2024-03-01', at: '2024-01-01T09:00:00Z' },
      },
      { name: 'R3', fields: { status: 'closed', amount: 100, done: true, tags: [] } },
      { name: 'R4', fields: { status: 'active', amount: -5, note: 'Beta', done: false, tags: ['a', 'b'] } },
    ];
    for (const record of records)
      ids[record.name] = (await create('/record', { moduleId: deals, ...record })).id;
    await platform.call('PUT', `/record/${ids.R2}`, { body: { fields: { tags: ['c'] } } });
    ids.O1 = (
      await create('/record', { moduleId: other, name: 'O1', fields: { status: 'archived', amount: '7' } })
    ).id;
    ids.O2 = (await create('/record', { moduleId: other, name: 'O2', fields: { status: 'active' } })).id;
  });

  afterAll(async () => {
    await platform.stop();
  });

  test("the spec's example status=(active|pending) filters on a select field's option", async () => {
    const filter = q('status=(active|pending)');
    expect(await names(`/module/${deals}/item?filter=${filter}&order=name;ASC`)).toEqual(['R1', 'R2', 'R4']);
    // Across the space: `status` means a select in both modules, so it filters both.
    expect(await names(`/record?filter=${filter}&order=name;ASC`)).toEqual(['O2', 'R1', 'R2', 'R4']);
  });

  test.each([
    ['amount>9', ['R1', 'R3']],
    ['amount<=9', ['R2', 'R4']],
    ['amount...10,-5', ['R1', 'R4']],
    ['amount!=10', ['R2', 'R3', 'R4']],
    ['price>=10', ['R2']],
    ['price=', ['R3', 'R4']],
    ['due<2024-02-01', ['R1']],
    ['due>2024-01-02', ['R2']],
    ['due=', ['R3', 'R4']],
    // 10:00+02:00 is 08:00Z: before 09:00Z, whatever the text says.
    ['at<2024-01-01T08:30:00Z', ['R1']],
    ['at=2024-01-01T09:00:00.000+00:00', ['R2']],
    ['at>=2024-01-01T10:00:00+02:00', ['R1', 'R2']],
    ['done=true', ['R3']],
    ['done=false', ['R1', 'R2', 'R4']],
    ['done!=false', ['R3']],
    ['done=', ['R1', 'R2']],
    ['tags=a', ['R4']],
    ['tags...b,c', ['R2', 'R4']],
    ['tags!=a', ['R1', 'R2', 'R3']],
    ['tags=', ['R1', 'R3']],
    ['tags!=', ['R2', 'R4']],
    ['note~be%', ['R4']],
    ['note!~be%', ['R1', 'R2', 'R3']],
    ['note=', ['R1', 'R2', 'R3']],
    ['docs=', ['R1', 'R2', 'R3', 'R4']],
    ['docs!=', []],
    ['status!=(active|pending)', ['R3']],
    ['status=active;amount>0', ['R1']],
    ['status=closed|amount<0', ['R3', 'R4']],
  ])('in one module, %s matches %j', async (filter, expected) => {
    expect(await names(`/module/${deals}/item?filter=${q(filter)}&order=name;ASC`)).toEqual(expected);
  });

  test('a field is addressed by fields.<fieldId> as by its key', async () => {
    const byId = await names(
      `/module/${deals}/item?filter=${q(`fields.${fieldIds.amount}>9`)}&order=name;ASC`,
    );
    expect(byId).toEqual(['R1', 'R3']);
    const ordered = await names(`/module/${deals}/item?order=${q(`fields.${fieldIds.amount};ASC`)}`);
    expect(ordered).toEqual(['R4', 'R2', 'R1', 'R3']);
  });

  test('order on field values: numbers numerically, date-times by instant, missing values first ascending and last descending', async () => {
    expect(await names(`/module/${deals}/item?order=amount;ASC`)).toEqual(['R4', 'R2', 'R1', 'R3']);
    expect(await names(`/module/${deals}/item?order=amount;DESC`)).toEqual(['R3', 'R1', 'R2', 'R4']);
    expect(await names(`/module/${deals}/item?order=price;ASC,name;ASC`)).toEqual(['R3', 'R4', 'R1', 'R2']);
    expect(await names(`/module/${deals}/item?order=price;DESC,name;ASC`)).toEqual(['R2', 'R1', 'R3', 'R4']);
    expect(await names(`/module/${deals}/item?order=at;ASC,name;ASC`)).toEqual(['R3', 'R4', 'R1', 'R2']);
    expect(await names(`/module/${deals}/item?order=status;ASC,name;ASC`)).toEqual(['R1', 'R4', 'R3', 'R2']);
    const page = await json<Page>(
      await platform.call('GET', `/module/${deals}/item?filter=${q('amount>0')}&order=amount;DESC&limit=1`),
    );
    expect(page.items.map((item) => item.name)).toEqual(['R3']);
    expect(page.meta.total).toBe(3);
  });

  test('a key with different types in the modules of a list is a 400 that says how to pick one', async () => {
    const error = await refused(`/record?filter=${q('amount>5')}`);
    expect(error.code).toBe('E4001');
    expect(error.message).toContain('field key "amount"');
    expect(error.message).toContain(`fields.${fieldIds.otherAmount}`);
    // Narrowed to one module, or addressed by id, it resolves.
    expect(await names(`/record?filter=${q(`moduleId=${deals};amount>9`)}&order=name;ASC`)).toEqual([
      'R1',
      'R3',
    ]);
    expect(await names(`/record?filter=${q(`moduleId=${other};amount=7`)}`)).toEqual(['O1']);
    expect(await names(`/record?filter=${q(`fields.${fieldIds.amount}>9`)}&order=name;ASC`)).toEqual([
      'R1',
      'R3',
    ]);
  });

  test.each([
    ['nope=1', 'E4003', 'unknown field "nope"'],
    [`fields.999999=1`, 'E4003', 'unknown field "fields.999999"'],
    ['fields.0012=1', 'E4003', 'unknown field "fields.0012"'],
    ['amount=abc', 'E4001', 'expects an integer'],
    ['amount=0x10', 'E4001', 'expects an integer'],
    ['amount=1e3', 'E4001', 'expects an integer'],
    ['amount=0005', 'E4001', 'expects an integer'],
    ['amount=+5', 'E4001', 'expects an integer'],
    ['amount~1%', 'E4001', 'only applies to string fields'],
    ['price=abc', 'E4001', 'expects a number'],
    ['due>2024-02-30', 'E4001', 'expects a date'],
    ['at>yesterday', 'E4001', 'expects an ISO 8601 date-time'],
    ['done=yes', 'E4001', 'expects true, false'],
    ['status=bogus', 'E4001', 'one of the options "active", "pending", "closed"'],
    ['status=(active|bogus)', 'E4001', 'found "bogus"'],
    ['tags=z', 'E4001', 'one of the options'],
    ['tags>a', 'E4001', 'does not apply'],
    ['tags~a%', 'E4001', 'only applies to string fields'],
    ['docs=5', 'E4001', 'only = and != with an empty value'],
    ['docs...1,2', 'E4001', 'only = and != with an empty value'],
    ['go=1', 'E4003', 'cannot be filtered on'],
  ])('in one module, the filter %s is a 400 %s saying %s', async (filter, code, message) => {
    const error = await refused(`/module/${deals}/item?filter=${q(filter)}`);
    expect(error.code).toBe(code);
    expect(error.message).toContain(message);
  });

  test.each([
    ['tags', 'cannot be sorted on'],
    ['docs', 'cannot be sorted on'],
    ['go', 'cannot be sorted on'],
    ['nope', 'unknown field "nope"'],
  ])('order on %s is a 400 saying %s', async (field, message) => {
    const error = await refused(`/module/${deals}/item?order=${field};ASC`);
    expect(error.code).toBe('E4003');
    expect(error.message).toContain(message);
  });

  test('a raw & that ends the filter parameter is a 400 naming the parameter, never a silently wider list', async () => {
    const error = await refused(`/record?filter=moduleId=${deals}&name=R4`);
    expect(error.code).toBe('E4001');
    expect(error.message).toContain('unknown query parameter "name"');
    expect(error.details).toEqual([expect.objectContaining({ path: 'name' })]);
    for (const path of [`/module/${deals}/item`, '/record/deleted', '/space', '/module', '/field']) {
      const typo = await refused(`${path}?limt=5`);
      expect(typo.message).toContain('unknown query parameter "limt"');
    }
    // Encoded, & is the spec's AND joiner inside the filter.
    expect(await names(`/record?filter=moduleId=${deals}%26name=R4`)).toEqual(['R4']);
    expect(await names(`/record?filter=moduleId=${deals};name=R4`)).toEqual(['R4']);
  });

  test('saved segments filter and order on field values', async () => {
    const space = (await json<Entity>(await platform.call('GET', `/module/${deals}`))).spaceId as number;
    const segment = await create('/segment', {
      spaceId: space,
      name: 'Open deals',
      filter: `moduleId=${deals};status=(active|pending);amount>=-5`,
      order: 'amount;DESC',
    });
    expect(await names(`/segment/${segment.id}/record`)).toEqual(['R1', 'R2', 'R4']);
    expect(await names(`/segment/${segment.id}/record?filter=${q('tags=a')}`)).toEqual(['R4']);
    expect(await names(`/segment/${segment.id}/record?order=amount;ASC`)).toEqual(['R4', 'R2', 'R1']);
    const bad = await refused(`/segment/${segment.id}/record?filter=${q('amount=abc')}`);
    expect(bad.code).toBe('E4001');
    // Saving checks the filter and order against the space's fields, as a list would.
    for (const [filter, code] of [
      ['id=abc', 'E4001'],
      ['nope=1', 'E4003'],
      ['amount=abc', 'E4001'],
      ['status=bogus', 'E4001'],
      ['amount>1', 'E4001'],
    ] as const) {
      const response = await platform.call('POST', '/segment', {
        body: { spaceId: space, name: 'x', filter },
      });
      expect(response.status).toBe(400);
      expect((await json<ErrorBody>(response)).code).toBe(code);
    }
    const badOrder = await platform.call('POST', '/segment', {
      body: { spaceId: space, name: 'x', order: 'tags;ASC' },
    });
    expect((await json<ErrorBody>(badOrder)).code).toBe('E4003');
    const badUpdate = await platform.call('PUT', `/segment/${segment.id}`, { body: { filter: 'nope=1' } });
    expect((await json<ErrorBody>(badUpdate)).code).toBe('E4003');
    const goodUpdate = await platform.call('PUT', `/segment/${segment.id}`, {
      body: { filter: `moduleId=${deals};note~be%` },
    });
    expect(goodUpdate.status).toBe(200);
    expect(await names(`/segment/${segment.id}/record`)).toEqual(['R4']);
    // A field removed after the segment was saved: its list is a 400 that names the field.
    expect((await platform.call('DELETE', `/field/${fieldIds.note}`)).status).toBe(200);
    const error = await refused(`/segment/${segment.id}/record`);
    expect(error.code).toBe('E4003');
    expect(error.message).toContain('unknown field "note"');
  });

  test('deleted records filter on field values too', async () => {
    expect((await platform.call('DELETE', `/record/${ids.R3}`)).status).toBe(200);
    expect(await names(`/record/deleted?filter=${q(`moduleId=${deals};amount>50`)}`)).toEqual(['R3']);
    expect(await names(`/module/${deals}/item?filter=${q('amount>50')}`)).toEqual([]);
    expect((await platform.call('POST', `/record/${ids.R3}/restore`)).status).toBe(200);
  });
}
