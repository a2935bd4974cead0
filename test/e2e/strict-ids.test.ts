import { ENTITY_ID_JSON_FORM, ENTITY_ID_TEXT_FORM } from '../../contracts/entity-id';
import {
  ADMIN_TOKEN,
  json,
  startPlatform,
  type Entity,
  type Page,
  type TestPlatform,
} from '../support/platform';
import { routesOf } from '../support/routes';

jest.setTimeout(120_000);

let platform: TestPlatform;

/**
 * Texts that number coercion reads as an id (most of them as id 1, which exists: the bootstrap administrator)
 * or as no id at all. Each is sent percent-encoded, so the route receives exactly this text.
 */
const NOT_CANONICAL = [
  '0x1',
  '0o1',
  '0b1',
  ' 1',
  '1 ',
  '\t1',
  '1\n',
  '1\u0000',
  '+1',
  '-1',
  '0',
  '00',
  '01',
  '0001',
  '1.0',
  '1.',
  '0.1e1',
  '1e0',
  '1e3',
  'Infinity',
  'NaN',
  '2147483648',
  '9007199254740993',
  '１',
  '١',
  '1'.repeat(200),
];

/** Path parameters that are not integer ids, with a value of their own form (so only the id is wrong). */
const OTHER_PARAMETERS: Readonly<Record<string, string>> = {
  clientId: `rpc_${'0'.repeat(24)}`,
  grantId: '0'.repeat(32),
  tokenId: '00000000-0000-4000-8000-000000000000',
  deviceId: '00000000-0000-4000-8000-000000000000',
  template: 'crm',
  remoteId: 'external-1',
  remoteApplication: 'crm',
  version: '5.8.2',
  system: 'test',
  transport: 'mcp',
  requestId: '00000000-0000-4000-8000-000000000000',
  runId: '00000000-0000-4000-8000-000000000000',
  eventId: '00000000-0000-4000-8000-000000000000',
  hookKey: 'A'.repeat(32),
  deadLetterId: 'hook-logs:1:5',
};

/** Routes kept only to say a removed feature is gone (410): they read no id and act on nothing. */
const GONE = new Set(['/api/record/:recordId/comment', '/api/record/:recordId/comment/:commentId']);

interface ErrorAnswer {
  code: string;
  message: string;
  details: Array<{ path: string; message: string }>;
}

async function create(path: string, body: unknown): Promise<Entity> {
  const response = await platform.call('POST', path, { body });
  const answer = await json<Entity>(response);
  expect({ status: response.status, answer }).toEqual({ status: 201, answer });
  return answer;
}

async function signIn(email: string, password: string): Promise<number> {
  const response = await fetch(`${platform.api}/auth`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  await response.arrayBuffer();
  return response.status;
}

/** The answer to a request as far as the assertions need it: status and, on a 400, the error body. */
async function answerTo(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; error?: ErrorAnswer }> {
  const response = await platform.call(method, path, body === undefined ? {} : { body });
  const text = await response.text();
  return response.status === 400
    ? { status: 400, error: JSON.parse(text) as ErrorAnswer }
    : { status: response.status };
}

/** What a refused id must look like: a 400 E4001 whose details point at the parameter. */
function refusedAt(parameter: string, message: string) {
  return {
    status: 400,
    error: expect.objectContaining({
      code: 'E4001',
      details: expect.arrayContaining([{ path: parameter, message }]),
    }),
  };
}

const textRefusal = (text: string): string =>
  `must be ${ENTITY_ID_TEXT_FORM}, found ${JSON.stringify(text.length > 24 ? `${text.slice(0, 24)}…` : text)}`;

beforeAll(async () => {
  platform = await startPlatform();
});

afterAll(async () => {
  await platform.stop();
});

describe('ids in paths', () => {
  test('every route with an id in its path refuses every non-canonical spelling of the id with a 400 naming it', async () => {
    const routes = routesOf(platform.running.services.app).filter(([, path]) => path.includes('/:'));
    // Both APIs are walked, reads and writes alike.
    expect(routes.length).toBeGreaterThan(60);
    const idParameters = new Set<string>();
    const answers: Array<{ route: string; parameter: string; text: string; answer: unknown }> = [];
    const wrong: typeof answers = [];
    for (const [method, route] of routes) {
      const parameters = [...route.matchAll(/:(\w+)/g)].map((match) => match[1]!);
      for (const parameter of parameters.filter((name) => !(name in OTHER_PARAMETERS))) {
        idParameters.add(parameter);
        for (const text of NOT_CANONICAL) {
          const path = route
            .replace(/^\/api/, '')
            .replace(/:(\w+)/g, (_match, name: string) =>
              name === parameter ? encodeURIComponent(text) : (OTHER_PARAMETERS[name] ?? '1'),
            );
          const answer = await answerTo(
            method,
            path,
            method === 'GET' || method === 'DELETE' ? undefined : {},
          );
          const entry = { route: `${method} ${route}`, parameter, text, answer };
          answers.push(entry);
          const right = GONE.has(route)
            ? answer.status === 410
            : answer.error?.code === 'E4001' &&
              answer.error.details.some(
                (detail) => detail.path === parameter && detail.message === textRefusal(text),
              );
          if (!right) wrong.push(entry);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect([...idParameters].sort()).toEqual([
      'categoryId',
      'commentId',
      'dataStructureId',
      'entityId',
      'fieldGroupId',
      'fieldId',
      'fileId',
      'groupId',
      'jobId',
      'labelId',
      'menuId',
      'moduleId',
      'recordId',
      'scenarioId',
      'segmentId',
      'spaceId',
      'subscriptionId',
      'teamId',
      'userId',
      'webhookId',
    ]);
    expect(answers.length).toBeGreaterThan(60 * NOT_CANONICAL.length);
  });

  test("PUT /user/%201/password is a 400 and does not change user 1's password", async () => {
    const administrator = await json<Entity>(await platform.call('GET', '/user/1'));
    const email = String(administrator.email);
    const set = await platform.call('PUT', '/user/1/password', {
      body: { password: 'the first password 1' },
    });
    expect(set.status).toBe(200);
    expect(await signIn(email, 'the first password 1')).toBe(200);

    for (const spelling of ['%201', '1%20', '01', '0x1', '1.0', '1e0', '%2B1', '0.1e1', '%EF%BC%91']) {
      const answer = await answerTo('PUT', `/user/${spelling}/password`, {
        password: 'an attacker password',
      });
      expect({ spelling, answer }).toEqual({
        spelling,
        answer: refusedAt('userId', textRefusal(decodeURIComponent(spelling))),
      });
    }
    expect(await signIn(email, 'an attacker password')).toBe(401);
    expect(await signIn(email, 'the first password 1')).toBe(200);
    const audit = await json<Page<Record<string, unknown>>>(
      await platform.call('GET', `/audit?filter=streamId=user-test.1&order=position;ASC`),
    );
    expect(audit.items.filter((entry) => String(entry.type).includes('Password'))).toHaveLength(1);
  });

  test('a record read, change and delete through a non-canonical id touches no record', async () => {
    const space = await create('/space', { name: 'Strict ids' });
    const module = await create('/module', { spaceId: space.id, name: 'Deals' });
    const record = await create('/record', { moduleId: module.id, name: 'Deal one' });
    for (const spelling of [`0${record.id}`, `%20${record.id}`, `${record.id}.0`, `${record.id}e0`]) {
      expect((await answerTo('GET', `/record/${spelling}`)).status).toBe(400);
      expect((await answerTo('PUT', `/record/${spelling}`, { name: 'Renamed' })).status).toBe(400);
      expect((await answerTo('DELETE', `/record/${spelling}`)).status).toBe(400);
    }
    expect(await json(await platform.call('GET', `/record/${record.id}`))).toMatchObject({
      id: record.id,
      name: 'Deal one',
    });
  });
  test('an id whose percent-encoding does not decode is a 400 too', async () => {
    for (const [method, path] of [
      ['GET', '/record/%ZZ'],
      ['PUT', '/user/%E0%A4%A/password'],
      ['DELETE', '/space/%C0%AF'],
    ] as const) {
      const response = await platform.call(method, path, method === 'PUT' ? { body: {} } : {});
      const error = await json<ErrorAnswer>(response);
      expect({ path, status: response.status, code: error.code }).toEqual({
        path,
        status: 400,
        code: 'E4000',
      });
    }
  });
});

describe('ids in query strings', () => {
  test('GET /field/position?moduleId= takes only the canonical id', async () => {
    const space = await create('/space', { name: 'Positions' });
    const module = await create('/module', { spaceId: space.id, name: 'Ordered' });
    expect((await answerTo('GET', `/field/position?moduleId=${module.id}`)).status).toBe(200);
    for (const text of NOT_CANONICAL)
      expect({
        text,
        answer: await answerTo('GET', `/field/position?moduleId=${encodeURIComponent(text)}`),
      }).toEqual({
        text,
        answer: refusedAt('moduleId', textRefusal(text)),
      });
    expect(await answerTo('GET', '/field/position')).toEqual(
      refusedAt('moduleId', `is required: ${ENTITY_ID_TEXT_FORM}`),
    );
    expect(await answerTo('GET', `/field/position?moduleId=${module.id}&moduleId=${module.id}`)).toEqual(
      refusedAt('moduleId', 'must be given once, not 2 times'),
    );
  });

  test('an upload with a non-canonical ?fieldId= is refused and stores no file', async () => {
    const space = await create('/space', { name: 'Uploads' });
    const module = await create('/module', { spaceId: space.id, name: 'Documents' });
    const field = await create('/field', { moduleId: module.id, name: 'Attachment', type: 'file' });
    const record = await create('/record', { moduleId: module.id, name: 'Contract' });
    for (const text of [` ${field.id}`, `0${field.id}`, `${field.id}.0`, `${field.id}e0`, '0x1', '']) {
      const response = await fetch(
        `${platform.api}/record/${record.id}/file?name=a.txt&fieldId=${encodeURIComponent(text)}`,
        {
          method: 'POST',
          headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'text/plain' },
          body: 'some text',
        },
      );
      const error = await json<ErrorAnswer>(response);
      expect({ text, status: response.status, error }).toEqual({
        text,
        status: 400,
        error: expect.objectContaining({
          code: 'E4001',
          details: [{ path: 'fieldId', message: textRefusal(text) }],
        }),
      });
    }
    const files = await json<Page>(await platform.call('GET', `/record/${record.id}/file`));
    expect(files.items).toEqual([]);
  });

  test('offset and limit of every list take only canonical decimal digits', async () => {
    const counts = ['0x10', '1e2', '-0', ' 5', '5 ', '+5', '05', '5.0', 'Infinity', '５'];
    for (const [name, min, max] of [
      ['limit', 1, 1000],
      ['offset', 0, 10_000_000],
    ] as const)
      for (const text of counts) {
        const answer = await answerTo('GET', `/record?${name}=${encodeURIComponent(text)}`);
        expect({ text, answer }).toEqual({
          text,
          answer: refusedAt(
            name,
            `${name} must be a whole number from ${min} to ${max} in plain decimal digits (no sign, spaces, leading zeros, fraction or exponent), found ${JSON.stringify(text)}`,
          ),
        });
      }
    expect((await answerTo('GET', '/record?limit=5&offset=0')).status).toBe(200);
  });
});

describe('ids in JSON bodies', () => {
  let space: Entity;
  let module: Entity;
  let record: Entity;

  beforeAll(async () => {
    space = await create('/space', { name: 'Bodies' });
    module = await create('/module', { spaceId: space.id, name: 'Accounts' });
    record = await create('/record', { moduleId: module.id, name: 'Account one' });
  });

  /** Every record of the platform, whatever its module: a refused write must leave the number as it was. */
  async function recordCount(): Promise<number> {
    return (await json<Page>(await platform.call('GET', '/record?limit=1'))).meta.total;
  }

  const stringRefusal = (text: string): string =>
    `must be ${ENTITY_ID_JSON_FORM}, not a string (found ${JSON.stringify(text)})`;
  const numberRefusal = `must be ${ENTITY_ID_JSON_FORM}`;

  test('an id given as a string is refused, saying that ids are JSON integers', async () => {
    const id = (entity: Entity) => String(entity.id);
    const before = await recordCount();
    const cases: Array<[string, string, Record<string, unknown>, string]> = [
      ['POST', '/record', { moduleId: id(module), name: 'x' }, 'moduleId'],
      ['POST', '/module', { spaceId: id(space), name: 'x' }, 'spaceId'],
      ['POST', '/segment', { spaceId: id(space), name: 'x' }, 'spaceId'],
      ['POST', '/field', { moduleId: id(module), name: 'x', type: 'text' }, 'moduleId'],
      ['PUT', `/record/${record.id}`, { id: id(record), name: 'x' }, 'id'],
      ['PUT', '/record', { id: id(record), name: 'x' }, 'id'],
      ['DELETE', '/label', { id: '1' }, 'id'],
      ['DELETE', '/record/bulk', { ids: [id(record)] }, 'ids.0'],
      ['POST', '/team', { name: 'x', userIds: ['1'] }, 'userIds.0'],
      ['POST', '/category', { name: 'x', parentId: '1' }, 'parentId'],
      ['POST', '/field-group', { moduleId: module.id, name: 'x', fieldIds: ['1'] }, 'fieldIds.0'],
      ['PUT', '/field/order', { moduleId: module.id, fieldIds: ['1'] }, 'fieldIds.0'],
      ['POST', `/record/remote/external-9/crm`, { recordId: id(record) }, 'recordId'],
      ['PUT', `/record/${record.id}/file-weight`, { files: [{ fileId: '1', weight: 0 }] }, 'files.0.fileId'],
      ['POST', '/menu', { name: 'x', items: [{ label: 'x', moduleId: id(module) }] }, 'items.0.moduleId'],
    ];
    for (const [method, path, sent, at] of cases) {
      const text = JSON.stringify(sent).match(/"(\d+)"/)![1]!;
      const answer = await answerTo(method, path, sent);
      expect({ method, path, answer }).toEqual({ method, path, answer: refusedAt(at, stringRefusal(text)) });
    }
    // Nothing was written: the record is as it was, and no record was added.
    expect(await json(await platform.call('GET', `/record/${record.id}`))).toMatchObject({
      name: 'Account one',
    });
    expect(await recordCount()).toBe(before);
  });

  test('a bulk item with a string id fails alone, saying why, and writes nothing', async () => {
    const before = await recordCount();
    for (const [method, item] of [
      ['POST', { moduleId: String(module.id), name: 'Bulk x' }],
      ['PUT', { id: String(record.id), name: 'Bulk x' }],
    ] as const) {
      const response = await platform.call(method, '/record/bulk', { body: { items: [item] } });
      const answer = await json<{ items: Array<{ status: number; error?: ErrorAnswer }> }>(response);
      const at = 'id' in item ? 'id' : 'moduleId';
      expect({ method, status: response.status, items: answer.items }).toEqual({
        method,
        status: 200,
        items: [
          expect.objectContaining({
            status: 400,
            error: expect.objectContaining({
              code: 'E4001',
              details: [{ path: at, message: stringRefusal(String(at === 'id' ? record.id : module.id)) }],
            }),
          }),
        ],
      });
    }
    expect(await recordCount()).toBe(before);
    expect(await json(await platform.call('GET', `/record/${record.id}`))).toMatchObject({
      name: 'Account one',
    });
  });

  test('an id out of range, fractional or of another type is refused', async () => {
    for (const value of [0, -1, 1.5, 2 ** 31, 2 ** 53, true, null, [1], { id: 1 }]) {
      const answer = await answerTo('POST', '/record', { moduleId: value, name: 'y' });
      expect({ value, answer }).toEqual({ value, answer: refusedAt('moduleId', numberRefusal) });
    }
    expect(await answerTo('DELETE', '/record/bulk', { ids: [record.id, 2 ** 31] })).toEqual(
      refusedAt('ids.1', numberRefusal),
    );
  });

  test('user and relation field values are ids as numbers, never strings', async () => {
    const owner = await create('/field', { moduleId: module.id, name: 'Owner', type: 'user' });
    const parent = await create('/field', {
      moduleId: module.id,
      name: 'Parent',
      type: 'relation',
      config: { moduleId: module.id },
    });
    expect(
      await answerTo('POST', '/field', {
        moduleId: module.id,
        name: 'Other',
        type: 'relation',
        config: { moduleId: String(module.id) },
      }),
    ).toEqual(refusedAt('config.moduleId', stringRefusal(String(module.id))));
    const cases: Array<[string, unknown, string]> = [
      [String(owner.key), '1', 'must be a user id: a JSON integer from 1 to 2147483647, not a string'],
      [String(owner.key), 2 ** 31, 'must be a user id: a JSON integer from 1 to 2147483647'],
      [
        String(parent.key),
        String(record.id),
        'must be a record id: a JSON integer from 1 to 2147483647, not a string',
      ],
      [
        String(parent.key),
        ` ${record.id}`,
        'must be a record id: a JSON integer from 1 to 2147483647, not a string',
      ],
    ];
    for (const [key, value, message] of cases) {
      const answer = await answerTo('PUT', `/record/${record.id}`, { fields: { [key]: value } });
      expect({ key, value, answer }).toEqual({ key, value, answer: refusedAt(`fields.${key}`, message) });
    }
    const accepted = await platform.call('PUT', `/record/${record.id}`, {
      body: { fields: { [String(owner.key)]: 1, [String(parent.key)]: record.id } },
    });
    expect(accepted.status).toBe(200);
  });
});
