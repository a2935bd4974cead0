import { callHost } from '../support/host-call';
import { json, startPlatform, type Entity, type TestPlatform } from '../support/platform';

jest.setTimeout(120_000);

/**
 * The bound on one read query (QUERY_BUDGET_MS) and the read pool's fairness, through real HTTP: the
 * `test` system holds many records with long names, `acme` a few.
 */
const RECORDS = 30_000;
const LONG_NAME = 'record with a long name '.repeat(8);
/** Conditions true of every record, each a call of the `like` function per record, whatever its speed. */
const EVERY_RECORD = Array.from({ length: 20 }, (_, index) => `name!~%q%${index}%`).join(';');
/**
 * Valid and as costly as a list gets: every record through many `~` (for the page and again for the total),
 * sorted on an unindexed column, paged deep.
 */
const EXPENSIVE =
  `/record?filter=${encodeURIComponent(`name~%r%e%c%o%r%d%w%i%t%h%;createdBy!~%zz%q%;${EVERY_RECORD}`)}` +
  `&order=createdAt;DESC&offset=35000&limit=100`;

let platform: TestPlatform;
let acmeToken: string;
let acmeRecord: number;

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
}

async function callOn(
  host: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const { status, text, headers } = await callHost(platform.url, host, token, method, path, body);
  return { status, body: JSON.parse(text) as Answer['body'], headers };
}
const acme = (method: string, path: string, body?: unknown) =>
  callOn('acme.localhost', acmeToken, method, path, body);

async function created(response: Response | Answer): Promise<Entity> {
  const status = response.status;
  const body = response instanceof Response ? await json<Entity>(response) : (response.body as Entity);
  expect({ status, body }).toEqual({ status: 201, body });
  return body;
}

beforeAll(async () => {
  // The expensive list below needs far longer (seconds), a cheap one far less.
  platform = await startPlatform({ QUERY_BUDGET_MS: '150', READ_QUEUE_PER_SYSTEM: '3' });
  const space = await created(await platform.call('POST', '/space', { body: { name: 'Big' } }));
  const module = await created(
    await platform.call('POST', '/module', { body: { spaceId: space.id, name: 'Many' } }),
  );
  for (let start = 0; start < RECORDS; start += 1000) {
    const items = Array.from({ length: 1000 }, (_, index) => ({
      moduleId: module.id,
      name: `${LONG_NAME}${start + index}`,
    }));
    const response = await platform.call('POST', '/record/bulk', { body: { items } });
    expect(response.status).toBe(200);
  }
  const provisioned = await platform.call('POST', '/system', {
    body: { system: 'acme', adminEmail: 'owner@acme.example' },
  });
  acmeToken = String((await json(provisioned)).token);
  const acmeSpace = await created(await acme('POST', '/space', { name: 'Small' }));
  const acmeModule = await created(await acme('POST', '/module', { spaceId: acmeSpace.id, name: 'Few' }));
  acmeRecord = (await created(await acme('POST', '/record', { moduleId: acmeModule.id, name: 'Only' }))).id;
});

afterAll(async () => {
  await platform.stop();
});

test('a list past the query budget answers 422 E4220 saying how to narrow it; the next list is served', async () => {
  const response = await platform.call('GET', EXPENSIVE);
  const body = await json(response);
  expect({ status: response.status, body }).toMatchObject({
    status: 422,
    body: {
      code: 'E4220',
      error: 'query_too_expensive',
      message: expect.stringMatching(/narrow the filter/),
    },
  });
  const cheap = await platform.call('GET', '/record?limit=2');
  expect(cheap.status).toBe(200);
  expect((await json<{ items: unknown[] }>(cheap)).items).toHaveLength(2);
});

test("while one system's expensive lists run, another system's reads are answered first and right", async () => {
  const finished: string[] = [];
  const heavy = Array.from({ length: 3 }, (_, index) =>
    platform.call('GET', EXPENSIVE).then(async (response) => {
      finished.push(`heavy ${index}`);
      return { status: response.status, body: await json(response) };
    }),
  );
  const point = acme('GET', `/record/${acmeRecord}`).then((answer) => {
    finished.push('acme get');
    return answer;
  });
  const list = acme('GET', '/record').then((answer) => {
    finished.push('acme list');
    return answer;
  });
  const [pointAnswer, listAnswer, ...heavyAnswers] = await Promise.all([point, list, ...heavy]);
  expect(pointAnswer).toMatchObject({ status: 200, body: { id: acmeRecord, name: 'Only' } });
  expect(listAnswer).toMatchObject({ status: 200, body: { items: [{ id: acmeRecord }] } });
  for (const answer of heavyAnswers) expect(answer).toMatchObject({ status: 422, body: { code: 'E4220' } });
  // The point read never waits for a read thread; acme's list waits for at most the one query running.
  expect(finished.indexOf('acme get')).toBeLessThan(finished.indexOf('heavy 2'));
  expect(finished.indexOf('acme list')).toBeLessThan(finished.indexOf('heavy 2'));
});

test("past its waiting bound a system's lists are refused with 429 and Retry-After; another system's are not", async () => {
  const burst = await Promise.all(
    Array.from({ length: 8 }, () =>
      platform.call('GET', EXPENSIVE).then(async (response) => ({
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: await json(response),
      })),
    ),
  );
  const refused = burst.filter((answer) => answer.status === 429);
  expect(refused.length).toBeGreaterThan(0);
  for (const answer of refused)
    expect(answer).toMatchObject({ retryAfter: '1', body: { code: 'E4290', error: 'rate_limited' } });
  for (const answer of burst.filter((other) => other.status !== 429))
    expect(answer).toMatchObject({ status: 422, body: { code: 'E4220' } });
  expect((await acme('GET', '/record')).status).toBe(200);
});

test('read-your-writes holds for lists served by the read threads: a write shows in the next list, no header', async () => {
  const spaceBody = { name: 'Fresh' };
  for (let round = 0; round < 20; round++) {
    const space = await created(await acme('POST', '/space', { ...spaceBody, name: `Fresh ${round}` }));
    const list = await acme('GET', `/space?filter=${encodeURIComponent(`name=Fresh ${round}`)}`);
    expect(list).toMatchObject({ status: 200, body: { items: [{ id: space.id }], meta: { total: 1 } } });
  }
});
