import { json, startPlatform, type Entity, type TestPlatform } from '../support/platform';

jest.setTimeout(60_000);

let platform: TestPlatform;
let member: Entity;
const PASSWORD = 'a long enough password';

/** A call from a given client address (the platform trusts one proxy hop here). */
function from(
  address: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
) {
  return fetch(`${platform.api}${path}`, {
    method,
    headers: {
      'X-Forwarded-For': address,
      ...(body !== undefined && { 'Content-Type': 'application/json' }),
      ...headers,
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
}

const login = (email: string, password: string, address = '10.1.0.1') =>
  from(address, 'POST', '/auth', {}, { email, password });

function cookieOf(response: Response): string {
  const header = response.headers.get('set-cookie') ?? '';
  return header.split(';')[0]!;
}

beforeAll(async () => {
  platform = await startPlatform({ TRUST_PROXY_HOPS: '1' });
  const created = await platform.call('POST', '/user', {
    body: { email: 'mia@example.com', name: 'Mia', password: PASSWORD },
  });
  member = await json<Entity>(created);
});

afterAll(async () => {
  await platform.stop();
});

test('SE-01 a login starts a new session each time: new id, cookie and CSRF token', async () => {
  const first = await login('Mia@Example.com', PASSWORD);
  expect(first.status).toBe(200);
  const answer = await json(first);
  expect(answer).toMatchObject({
    session: expect.stringMatching(/^rps_[A-Za-z0-9_-]{43}$/),
    csrfToken: expect.any(String),
    idleTimeoutSeconds: 1200,
    user: { id: member.id, email: 'mia@example.com' },
  });
  const second = await json(await login('mia@example.com', PASSWORD, '10.1.0.2'));
  expect(second.session).not.toBe(answer.session);
  // A session id offered before login is not adopted: the cookie set is the new one.
  const fixated = await from(
    '10.1.0.3',
    'POST',
    '/auth',
    { Cookie: `rp_session=${String(answer.session)}` },
    {
      email: 'mia@example.com',
      password: PASSWORD,
    },
  );
  expect(cookieOf(fixated)).not.toBe(`rp_session=${String(answer.session)}`);
  expect(fixated.headers.get('cache-control')).toBe('no-store');
});

test('SE-02 the session is server-side: DELETE /auth ends it at once, as bearer or cookie', async () => {
  const answer = await json(await login('mia@example.com', PASSWORD));
  const bearer = { Authorization: `Bearer ${String(answer.session)}` };
  expect((await from('10.1.0.1', 'GET', `/user/${member.id}`, bearer)).status).toBe(200);
  const out = await from('10.1.0.1', 'DELETE', '/auth', bearer);
  expect(out.status).toBe(200);
  expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
  expect((await from('10.1.0.1', 'GET', `/user/${member.id}`, bearer)).status).toBe(401);
  // DELETE /auth needs a session, not a token.
  expect((await platform.call('DELETE', '/auth')).status).toBe(400);
});

test('SE-04 the cookie is HttpOnly and SameSite; writes by cookie need the CSRF token', async () => {
  const response = await login('mia@example.com', PASSWORD);
  const setCookie = response.headers.get('set-cookie') ?? '';
  expect(setCookie).toMatch(/^rp_session=rps_[^;]+; Path=\/api; HttpOnly; SameSite=Lax; Max-Age=43200$/);
  const { csrfToken } = await json(response);
  const cookie = { Cookie: cookieOf(response) };
  expect((await from('10.1.0.1', 'GET', `/user/${member.id}`, cookie)).status).toBe(200);
  const write = (headers: Record<string, string>) =>
    from(
      '10.1.0.1',
      'PUT',
      `/user/${member.id}/password`,
      { ...cookie, ...headers },
      {
        password: 'another long password',
        currentPassword: PASSWORD,
      },
    );
  expect((await write({})).status).toBe(401);
  expect((await write({ 'X-CSRF-Token': 'forged' })).status).toBe(403);
  expect((await write({ 'X-CSRF-Token': String(csrfToken) })).status).toBe(200);
  expect((await write({ 'X-CSRF-Token': String(csrfToken) })).status).toBe(403); // the old password now fails
  await platform.call('PUT', `/user/${member.id}/password`, { body: { password: PASSWORD } });
});

test('BF-01 unknown user and wrong password answer alike; repeated failures are throttled per account and address', async () => {
  const unknown = await login('nobody@example.com', 'whatever it is', '10.2.0.1');
  const wrong = await login('mia@example.com', 'not the password', '10.2.0.2');
  const bodies = [await json(unknown), await json(wrong)].map(({ requestId: _id, ...body }) => body);
  expect([unknown.status, wrong.status]).toEqual([401, 401]);
  expect(bodies[0]).toEqual(bodies[1]);

  for (let attempt = 0; attempt < 4; attempt++)
    expect((await login('mia@example.com', 'still wrong', '10.2.0.3')).status).toBe(401);
  const limited = await login('mia@example.com', 'still wrong', '10.2.0.3');
  expect(limited.status).toBe(401);
  const blocked = await login('mia@example.com', PASSWORD, '10.2.0.3');
  expect(blocked.status).toBe(429);
  expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
  // The owner elsewhere still gets in.
  expect((await login('mia@example.com', PASSWORD, '10.2.0.4')).status).toBe(200);
});

test('a deactivated user cannot sign in, and bad login bodies are 400s', async () => {
  const other = await json<Entity>(
    await platform.call('POST', '/user', {
      body: { email: 'gone@example.com', name: 'Gone', password: PASSWORD },
    }),
  );
  await platform.call('POST', `/user/${other.id}/deactivate`);
  expect((await login('gone@example.com', PASSWORD, '10.3.0.1')).status).toBe(401);
  for (const body of [{}, { email: 'x' }, { email: 'mia@example.com', password: 'x', extra: 1 }])
    expect((await from('10.3.0.2', 'POST', '/auth', {}, body)).status).toBe(400);
});

test('SE-05 a password change ends the other sessions (the one that made it stays); an admin reset ends them all', async () => {
  const sessionOf = async (address: string) =>
    String((await json(await login('mia@example.com', PASSWORD, address))).session);
  const reachable = async (session: string) =>
    (await from('10.4.0.9', 'GET', `/user/${member.id}`, { Authorization: `Bearer ${session}` })).status;
  const changer = await sessionOf('10.4.0.1');
  const other = await sessionOf('10.4.0.2');
  const changed = await from(
    '10.4.0.1',
    'PUT',
    `/user/${member.id}/password`,
    { Authorization: `Bearer ${changer}` },
    {
      password: 'a changed long password',
      currentPassword: PASSWORD,
    },
  );
  expect(changed.status).toBe(200);
  expect([await reachable(changer), await reachable(other)]).toEqual([200, 401]);
  await platform.call('PUT', `/user/${member.id}/password`, { body: { password: PASSWORD } });
  expect(await reachable(changer)).toBe(401);
});
