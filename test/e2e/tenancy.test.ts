import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { callHost } from '../support/host-call';
import { ADMIN_TOKEN, json, startPlatform, type Entity, type TestPlatform } from '../support/platform';

jest.setTimeout(60_000);

/** Every name written in the `test` system carries this, so a leak into another system's answers shows. */
const MARK = 'TEST-SECRET';
let platform: TestPlatform;
let acmeToken: string;

const callOn = (host: string, token: string, method: string, path: string, body?: unknown) =>
  callHost(platform.url, host, token, method, path, body);
const acme = (method: string, path: string, body?: unknown) =>
  callOn('acme.localhost', acmeToken, method, path, body);

async function create(path: string, body: unknown): Promise<Entity> {
  const response = await platform.call('POST', path, { body });
  const answer = await json<Entity>(response);
  expect({ path, status: response.status, answer }).toEqual({ path, status: 201, answer });
  return answer;
}

/** Two of each in `test`: the second's ids are beyond anything `acme` creates, so they name nothing there. */
async function twice(path: string, body: (n: number) => unknown): Promise<Entity> {
  await create(path, body(1));
  return create(path, body(2));
}

beforeAll(async () => {
  platform = await startPlatform();
  const provisioned = await platform.call('POST', '/system', {
    body: { system: 'acme', adminEmail: 'owner@acme.example' },
  });
  expect(provisioned.status).toBe(201);
  acmeToken = String((await json(provisioned)).token);
});

afterAll(async () => {
  await platform.stop();
});

test('setting up systems: operator admins only, once, with a valid name', async () => {
  expect(
    (await platform.call('POST', '/system', { body: { system: 'acme', adminEmail: 'a@b.example' } })).status,
  ).toBe(409);
  expect(
    (await platform.call('POST', '/system', { body: { system: 'test', adminEmail: 'a@b.example' } })).status,
  ).toBe(409);
  for (const system of ['Bad_Name', '-x', 'a'.repeat(64), ''])
    expect(
      (await platform.call('POST', '/system', { body: { system, adminEmail: 'a@b.example' } })).status,
    ).toBe(400);
  expect((await acme('POST', '/system', { system: 'globex', adminEmail: 'a@b.example' })).status).toBe(403);
  expect((await acme('GET', '/user/1')).text).toContain('owner@acme.example');
  // The first admin's address is personal data of theirs: sealed in the set-up's event too.
  const log = ['events.db', 'events.db-wal']
    .map((file) => readFileSync(join(platform.dataDir, file)).toString('latin1'))
    .join('');
  expect(log).not.toContain('owner@acme.example');
});

test('a credential of one system is worthless on another, both ways', async () => {
  expect((await callOn('acme.localhost', ADMIN_TOKEN, 'GET', '/space')).status).toBe(401);
  expect((await callOn('test.localhost', acmeToken, 'GET', '/space')).status).toBe(401);
  expect((await callOn('test.localhost', ADMIN_TOKEN, 'GET', '/space')).status).toBe(200);
});

test('every resource family of one system is out of reach from another: reads, writes, lists, links', async () => {
  const space = await twice('/space', (n) => ({ name: `${MARK} space ${n}` }));
  const module = await twice('/module', (n) => ({ spaceId: space.id, name: `${MARK} module ${n}` }));
  const field = await twice('/field', (n) => ({
    moduleId: module.id,
    name: `${MARK} field ${n}`,
    type: 'text',
  }));
  const record = await twice('/record', (n) => ({ moduleId: module.id, name: `${MARK} record ${n}` }));
  const label = await twice('/label', (n) => ({ name: `${MARK} label ${n}` }));
  const segment = await twice('/segment', (n) => ({ spaceId: space.id, name: `${MARK} segment ${n}` }));
  const category = await twice('/category', (n) => ({ name: `${MARK} category ${n}` }));
  const team = await twice('/team', (n) => ({ name: `${MARK} team ${n}` }));
  const menu = await twice('/menu', (n) => ({ name: `${MARK} menu ${n}` }));
  const group = await twice('/field-group', (n) => ({ moduleId: module.id, name: `${MARK} group ${n}` }));
  const member = await twice('/user', (n) => ({
    email: `member${n}@test.example`,
    name: `${MARK} user ${n}`,
  }));
  const memberToken = await create(`/auth/${member.id}/token`, { name: `${MARK} token` });
  const oauthClient = await create('/auth/oauth/client', {
    clientName: `${MARK} client`,
    redirectUris: ['https://test.example/cb'],
  });
  const subscription = await twice('/subscription', (n) => ({
    name: `${MARK} subscription ${n}`,
    url: 'https://test.example/hooks',
    events: ['record.created'],
  }));
  const upload = await fetch(`${platform.api}/record/${record.id}/file?name=secret.txt`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'text/plain' },
    body: `${MARK} file`,
  });
  const file = await json<Entity>(upload);
  expect((await platform.call('POST', `/record/${record.id}/label/${label.id}`)).status).toBe(200);
  expect(
    (await platform.call('POST', '/record/remote/crm-7/salesforce', { body: { recordId: record.id } }))
      .status,
  ).toBe(200);

  // acme's own structure: one of each, so its ids stop short of test's second ones.
  const acmeSpace = JSON.parse((await acme('POST', '/space', { name: 'Acme space' })).text) as Entity;
  const acmeModule = JSON.parse(
    (await acme('POST', '/module', { spaceId: acmeSpace.id, name: 'Acme module' })).text,
  ) as Entity;
  const acmeRecord = JSON.parse(
    (await acme('POST', '/record', { moduleId: acmeModule.id, name: 'Acme record' })).text,
  ) as Entity;

  // A path naming another system's entity is a 404; a body naming one is a 400 (like any unknown id in a body).
  const notFound: Array<[string, string, unknown?, number?]> = [
    ['GET', `/space/${space.id}`],
    ['PUT', `/space/${space.id}`, { name: 'taken' }],
    ['DELETE', `/space/${space.id}`],
    ['GET', `/module/${module.id}`],
    ['GET', `/module/${module.id}/item`],
    ['GET', `/module/${module.id}/item/${record.id}`],
    ['PUT', `/module/${module.id}`, { name: 'taken' }],
    ['DELETE', `/module/${module.id}`],
    ['GET', `/field/${field.id}`],
    ['PUT', `/field/${field.id}`, { name: 'taken' }],
    ['DELETE', `/field/${field.id}`],
    ['GET', `/field/of/${module.id}/${record.id}`],
    ['POST', '/field', { moduleId: module.id, name: 'Intruder', type: 'text' }, 400],
    ['GET', `/record/${record.id}`],
    ['PUT', `/record/${record.id}`, { name: 'taken' }],
    ['DELETE', `/record/${record.id}`],
    ['POST', `/record/${record.id}/restore`],
    ['POST', '/record', { moduleId: module.id, name: 'Intruder' }, 400],
    ['GET', `/record/${record.id}/history`],
    ['GET', `/auth/field-history/${module.id}/${record.id}`],
    ['GET', `/record/${record.id}/file`],
    ['GET', `/record/${record.id}/file/${file.id}`],
    ['GET', `/record/${record.id}/file/${file.id}/content`],
    ['DELETE', `/record/${record.id}/file/${file.id}`],
    ['PUT', `/record/${record.id}/file-weight`, { files: [{ fileId: file.id, weight: 1 }] }],
    ['GET', `/record/${record.id}/label`],
    ['GET', `/record/${record.id}/label/${label.id}`],
    ['DELETE', `/record/${record.id}/label/${label.id}`],
    // A label of another system cannot be put on one's own record.
    ['POST', `/record/${acmeRecord.id}/label/${label.id}`],
    ['GET', `/label/${label.id}`],
    ['PUT', `/label/${label.id}`, { name: 'taken' }],
    ['DELETE', `/label/${label.id}`],
    ['GET', `/segment/${segment.id}`],
    ['GET', `/segment/${segment.id}/record`],
    ['DELETE', `/segment/${segment.id}`],
    ['GET', `/category/${category.id}`],
    ['DELETE', `/category/${category.id}`],
    ['GET', `/team/${team.id}`],
    ['GET', `/team/${team.id}/user`],
    ['DELETE', `/team/${team.id}`],
    ['GET', `/menu/${menu.id}`],
    ['DELETE', `/menu/${menu.id}`],
    ['GET', `/field-group/${group.id}`],
    ['GET', `/field-group/${group.id}/input`],
    ['DELETE', `/field-group/${group.id}`],
    ['GET', '/record/remote/crm-7/salesforce'],
    // Linking a remote key of one's own to another system's record.
    ['POST', '/record/remote/crm-8/salesforce', { recordId: record.id }],
    ['GET', `/user/${member.id}`],
    ['PUT', `/user/${member.id}`, { name: 'taken' }],
    ['POST', `/user/${member.id}/deactivate`],
    ['POST', `/auth/${member.id}/token`, { name: 'taken' }],
    ['DELETE', `/auth/${member.id}/token/${String(memberToken.id)}`],
    ['GET', `/auth/oauth/client/${String(oauthClient.clientId)}`],
    ['PUT', `/auth/oauth/client/${String(oauthClient.clientId)}`, { clientName: 'taken' }],
    ['DELETE', `/auth/oauth/client/${String(oauthClient.clientId)}`],
    ['GET', `/subscription/${subscription.id}`],
    ['GET', `/subscription/${subscription.id}/history`],
    ['PUT', `/subscription/${subscription.id}`, { name: 'taken' }],
    ['POST', `/subscription/${subscription.id}/secret`],
    ['DELETE', `/subscription/${subscription.id}`],
    // Another system's client cannot start an authorization here (no redirect either).
    [
      'GET',
      `/auth/oauth/authorize?response_type=code&client_id=${String(oauthClient.clientId)}&redirect_uri=https%3A%2F%2Ftest.example%2Fcb`,
      undefined,
      400,
    ],
  ];
  for (const [method, path, body, status = 404] of notFound) {
    const answer = await acme(method, path, body);
    expect({ method, path, status: answer.status }).toEqual({ method, path, status });
    expect(answer.text).not.toContain(MARK);
  }
  const uploadAcross = await fetch(`${platform.api}/record/${record.id}/file?name=x.txt`, { method: 'POST' });
  expect(uploadAcross.status).toBe(401);

  // Bulk writes name test's records item by item: each is a 404, none is written.
  const bulk = await acme('PUT', '/record/bulk', { items: [{ id: record.id, name: 'taken' }] });
  expect(JSON.parse(bulk.text)).toMatchObject({ items: [{ index: 0, status: 404 }] });

  // Lists and logs of acme hold acme's only.
  for (const path of [
    '/space',
    '/module',
    '/field',
    '/record',
    '/record/deleted',
    '/label',
    '/segment',
    '/category',
    '/team',
    '/menu',
    '/field-group',
    '/user',
    '/audit',
    '/auth/oauth/client',
    '/subscription',
    `/record/${acmeRecord.id}/file`,
  ]) {
    const answer = await acme('GET', path);
    expect({ path, status: answer.status }).toEqual({ path, status: 200 });
    expect({ path, leaked: answer.text.includes(MARK) || answer.text.includes('test.example') }).toEqual({
      path,
      leaked: false,
    });
  }

  // Another system's user is an unknown id here: their tokens are a 404 that names nothing of theirs.
  const tokens = await acme('GET', `/auth/${member.id}/token`);
  expect(tokens.status).toBe(404);
  expect(tokens.text.includes(MARK) || tokens.text.includes('test.example')).toBe(false);

  // And test's data is untouched.
  expect((await platform.call('GET', `/record/${record.id}`)).status).toBe(200);
  expect(await json(await platform.call('GET', `/record/${record.id}/label`))).toMatchObject({
    meta: { total: 1 },
  });
  expect(await json(await platform.call('GET', `/label/${label.id}`))).toMatchObject({
    name: `${MARK} label 2`,
  });
  expect(await json(await platform.call('GET', `/user/${member.id}`))).toMatchObject({ active: true });
  const linked = await json(await platform.call('GET', '/record/remote/crm-7/salesforce'));
  expect(linked).toMatchObject({ id: record.id });
});
