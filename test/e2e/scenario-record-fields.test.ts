import { FIELD_TYPES, type FieldType } from '../../contracts/fields';
import { FILE_FIELDS } from '../support/hook-requests';
import { json, startPlatform, type Entity, type Page, type TestPlatform } from '../support/platform';

interface Field extends Entity {
  key: string;
  type: FieldType;
}

/** Record steps set field values by field id and by field key, for every field type, and the API reads them. */
describe('scenario record steps write every field type', () => {
  let platform: TestPlatform;
  let moduleId: number;
  let fields: Field[];
  /** Two values of each type that takes one (file fields fill by attachRecordFile, buttons hold none). */
  let values: Array<Partial<Record<FieldType, unknown>>>;

  async function created<T = Entity>(path: string, body: unknown): Promise<T> {
    const response = await platform.call('POST', path, { body });
    expect(response.status).toBe(201);
    return json<T>(response);
  }

  beforeAll(async () => {
    platform = await startPlatform();
    const space = await created('/space', { name: 'Sales' });
    const companies = await created('/module', { spaceId: space.id, name: 'Companies' });
    const acme = await created('/record', { moduleId: companies.id, name: 'ACME' });
    const globex = await created('/record', { moduleId: companies.id, name: 'Globex' });
    const user = await created('/user', { email: 'rep@example.com', name: 'Rep', role: 'member' });
    moduleId = (await created('/module', { spaceId: space.id, name: 'Deals' })).id;
    const configs: Partial<Record<FieldType, Record<string, unknown>>> = {
      select: { options: ['open', 'won', 'lost'] },
      multi_select: { options: ['a', 'b', 'c'] },
      relation: { moduleId: companies.id },
      decimal: { scale: 2 },
      button: { webhookUrl: 'http://localhost:9/hook' },
    };
    fields = [];
    for (const type of FIELD_TYPES)
      fields.push(
        await created<Field>('/field', {
          moduleId,
          name: `The ${type}`,
          key: `f_${type}`,
          type,
          ...(configs[type] && { config: configs[type] }),
        }),
      );
    values = [
      {
        text: 'Ada',
        long_text: 'first line\nsecond line',
        number: 42,
        decimal: 12.34,
        date: '2030-01-31',
        datetime: '2030-01-31T09:30:00Z',
        checkbox: true,
        select: 'open',
        multi_select: ['a', 'b'],
        email: 'ada@example.org',
        url: 'https://example.org/a',
        phone: '+44 20 7946 0958',
        user: user.id,
        relation: acme.id,
      },
      {
        text: 'Grace',
        long_text: 'x'.repeat(2000),
        number: -7,
        decimal: 0.5,
        date: '2024-02-29',
        datetime: '2024-02-29T23:59:59+02:00',
        checkbox: false,
        select: 'won',
        multi_select: ['c'],
        email: 'grace@example.org',
        url: 'http://example.org/b?c=d',
        phone: '(555) 123-4567',
        user: user.id,
        relation: globex.id,
      },
    ];
  });
  afterAll(() => platform.stop());

  const valued = () => fields.filter((field) => field.type !== 'file' && field.type !== 'button');
  const fieldOf = (type: FieldType) => fields.find((field) => field.type === type)!;
  /** A step's `fields`: each valued field named by id or by key, its value mapped from the request's `set`. */
  const namedBy = (form: 'id' | 'key') =>
    Object.fromEntries(
      valued().map((field) => [form === 'id' ? String(field.id) : field.key, { expr: `set.${field.key}` }]),
    );
  /** The values of `set`, by field key (what the record API shows). */
  const byKey = (set: Partial<Record<FieldType, unknown>>) =>
    Object.fromEntries(valued().map((field) => [field.key, set[field.type]]));

  async function hookWith(steps: unknown[]): Promise<{ key: string; scenarioId: number }> {
    const hook = await created<Entity & { key: string }>('/webhook', { name: 'Deals' });
    const scenario = await created('/scenario', { name: 'Deals', webhookId: hook.id, steps });
    return { key: hook.key, scenarioId: scenario.id };
  }

  async function post(key: string, body: unknown): Promise<Response> {
    return fetch(`${platform.url}/hook/${key}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  /** The record as GET /record/{id} shows it once the read model has it. */
  async function recordAsRead(recordId: number, done: (record: Entity) => boolean): Promise<Entity> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const response = await platform.call('GET', `/record/${recordId}`);
      const record = response.status === 200 ? await json<Entity>(response) : null;
      if ((record && done(record)) || Date.now() > deadline) return record ?? { id: recordId };
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  test('create by field id and by field key, update by the other form; the API reads every value back', async () => {
    const { key } = await hookWith([
      { kind: 'createRecord', moduleId, name: 'By id', fields: namedBy('id') },
      { kind: 'createRecord', moduleId, name: 'By key', fields: namedBy('key') },
      { kind: 'webhookResponse', status: 200, body: { expr: '[$step(0).recordId, $step(1).recordId]' } },
    ]);
    const answer = await post(key, { set: byKey(values[0]!) });
    expect(answer.status).toBe(200);
    const [byIdRecord, byKeyRecord] = await json<[number, number]>(answer);
    for (const recordId of [byIdRecord, byKeyRecord]) {
      const record = await recordAsRead(recordId, (read) => Object.keys(read.fields ?? {}).length > 0);
      expect(record.fields).toEqual(expect.objectContaining(byKey(values[0]!)));
    }

    const { key: updates } = await hookWith([
      { kind: 'updateRecord', recordId: { expr: 'ids[0]' }, fields: namedBy('key') },
      { kind: 'updateRecord', recordId: { expr: 'ids[1]' }, fields: namedBy('id') },
      { kind: 'webhookResponse', status: 204 },
    ]);
    expect((await post(updates, { ids: [byIdRecord, byKeyRecord], set: byKey(values[1]!) })).status).toBe(
      204,
    );
    for (const recordId of [byIdRecord, byKeyRecord]) {
      const record = await recordAsRead(
        recordId,
        (read) => (read.fields as Record<string, unknown>)[fieldOf('text').key] === 'Grace',
      );
      expect(record.fields).toEqual(expect.objectContaining(byKey(values[1]!)));
    }
  });

  test('a file field is filled by attachRecordFile, named by its id', async () => {
    const structure = await created('/data-structure', {
      name: 'A document',
      fields: [
        {
          name: 'doc',
          type: 'collection',
          required: true,
          fields: FILE_FIELDS,
        },
      ],
    });
    const hook = await created<Entity & { key: string }>('/webhook', {
      name: 'Documents',
      dataStructureId: structure.id,
    });
    await created('/scenario', {
      name: 'File it',
      webhookId: hook.id,
      steps: [
        { kind: 'createRecord', moduleId, name: 'With a file', fields: { [fieldOf('text').key]: 'filed' } },
        {
          kind: 'attachRecordFile',
          recordId: { expr: '$step(0).recordId' },
          file: { expr: 'doc' },
          fieldId: fieldOf('file').id,
        },
        { kind: 'webhookResponse', status: 200, body: { expr: '$step(1)' } },
      ],
    });
    const form = new FormData();
    form.append('doc', new Blob(['%PDF-1.7 tiny'], { type: 'application/pdf' }), 'deal.pdf');
    const answer = await fetch(`${platform.url}/hook/${hook.key}`, { method: 'POST', body: form });
    expect(answer.status).toBe(200);
    const attached = await json<{ recordId: number; fileId: number }>(answer);
    const record = await recordAsRead(
      attached.recordId,
      (read) => (read.fields as Record<string, unknown>)[fieldOf('file').key] !== undefined,
    );
    expect(JSON.stringify((record.fields as Record<string, unknown>)[fieldOf('file').key])).toContain(
      String(attached.fileId),
    );
  });

  test('at save: a name that is no field of the module, a field named twice, a file or button value are 400s naming the step', async () => {
    const refusal = async (fieldsOfStep: Record<string, unknown>) => {
      const response = await platform.call('POST', '/scenario', {
        body: { name: 'Bad', steps: [{ kind: 'createRecord', moduleId, name: 'x', fields: fieldsOfStep }] },
      });
      expect(response.status).toBe(400);
      return (await json<{ message: string }>(response)).message;
    };
    expect(await refusal({ '999999': 1 })).toMatch(/steps\.0\.fields\.999999: no field of the module/);
    expect(await refusal({ nope: 1 })).toMatch(/steps\.0\.fields\.nope: no field/);
    const text = fieldOf('text');
    expect(await refusal({ [String(text.id)]: 'a', [text.key]: 'b' })).toMatch(/already set/);
    expect(await refusal({ [fieldOf('file').key]: 'x' })).toMatch(/attachRecordFile/);
    expect(await refusal({ [String(fieldOf('button').id)]: 'x' })).toMatch(/button field holds no value/);
    expect(await refusal({ 'not a key': 'x' })).toMatch(/field is named by its id or its key/);
    // An update of a literal record is checked against that record's module.
    const record = await created('/record', { moduleId, name: 'Known' });
    const update = await platform.call('POST', '/scenario', {
      body: { name: 'Bad', steps: [{ kind: 'updateRecord', recordId: record.id, fields: { nope: 1 } }] },
    });
    expect(update.status).toBe(400);
    expect((await json<{ message: string }>(update)).message).toMatch(/steps\.0\.fields\.nope: no field/);
  });

  test('at run time: an update naming a field the record’s module lacks fails the run with why', async () => {
    const other = await created('/module', {
      spaceId: (await json<Page>(await platform.call('GET', '/space'))).items[0]!.id,
      name: 'Other',
    });
    const stray = await created('/record', { moduleId: other.id, name: 'Stray' });
    const { key, scenarioId } = await hookWith([
      { kind: 'updateRecord', recordId: { expr: 'id' }, fields: { [fieldOf('text').key]: 'x' } },
    ]);
    expect((await post(key, { id: stray.id })).status).toBe(200);
    const deadline = Date.now() + 10_000;
    let runs: Page<Record<string, unknown>>;
    do {
      runs = await json<Page<Record<string, unknown>>>(
        await platform.call('GET', `/scenario/${scenarioId}/run`),
      );
    } while (runs.items[0]?.status !== 'failed' && Date.now() < deadline);
    expect(runs.items[0]).toMatchObject({ status: 'failed' });
    expect(String(runs.items[0]!.error)).toMatch(
      new RegExp(`fields do not fit module ${other.id}: fields\\.f_text: no field of the module`),
    );
  });
});
