import { ADMIN_TOKEN, json, startPlatform, type Entity, type TestPlatform } from '../support/platform';

jest.setTimeout(60_000);

let platform: TestPlatform;
let member: Entity;
let tokenA: string;
let tokenB: string;
let session: string;
const PASSWORD = 'a long enough password';

/** Which credential made the request (GET /auth/token-priority tells), or the status when refused. */
async function usedBy(headers: Record<string, string>): Promise<string | number> {
  const response = await fetch(`${platform.api}/auth/token-priority`, { headers });
  if (response.status !== 200) return response.status;
  return String(((await json(response)).credential as Record<string, unknown>).source);
}

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
const xAuth = (token: string) => ({ 'X-Authorization': `Bearer ${token}` });
const cookie = () => ({ Cookie: `rp_session=${session}` });

beforeAll(async () => {
  platform = await startPlatform();
  member = await json<Entity>(
    await platform.call('POST', '/user', {
      body: { email: 'mia@example.com', name: 'Mia', password: PASSWORD },
    }),
  );
  const token = async () =>
    String(
      (await json(await platform.call('POST', `/auth/${member.id}/token`, { body: { name: 't' } }))).token,
    );
  tokenA = await token();
  tokenB = await token();
  const login = await json(
    await fetch(`${platform.api}/auth`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'mia@example.com', password: PASSWORD }),
    }),
  );
  session = String(login.session);
});

afterAll(async () => {
  await platform.stop();
});

test('TK-07 one credential: each source works alone', async () => {
  expect(await usedBy(auth(tokenA))).toBe('authorization');
  expect(await usedBy(xAuth(tokenA))).toBe('x-authorization');
  expect(await usedBy(cookie())).toBe('cookie');
});

test('TK-07 several credentials of one user: the default order is Authorization, X-Authorization, cookie', async () => {
  expect(await usedBy({ ...auth(tokenA), ...xAuth(tokenB) })).toBe('authorization');
  expect(await usedBy({ ...auth(tokenA), ...cookie() })).toBe('authorization');
  expect(await usedBy({ ...xAuth(tokenB), ...cookie() })).toBe('x-authorization');
  expect(await usedBy({ ...auth(tokenA), ...xAuth(tokenB), ...cookie() })).toBe('authorization');
  const answer = await json(await fetch(`${platform.api}/auth/token-priority`, { headers: auth(tokenA) }));
  expect(answer).toMatchObject({ order: ['authorization', 'x-authorization', 'cookie'], default: true });
});

test('TK-07 a user sets their order, and it decides from the next request on', async () => {
  const set = await fetch(`${platform.api}/auth/token-priority`, {
    method: 'PUT',
    headers: { ...auth(tokenA), 'Content-Type': 'application/json' },
    body: JSON.stringify({ order: ['cookie', 'x-authorization', 'authorization'] }),
  });
  expect(set.status).toBe(200);
  expect(await usedBy({ ...auth(tokenA), ...xAuth(tokenB), ...cookie() })).toBe('cookie');
  expect(await usedBy({ ...auth(tokenA), ...xAuth(tokenB) })).toBe('x-authorization');
  // A cookie without the CSRF token does not count on a write: the header makes it.
  const write = await fetch(`${platform.api}/auth/token-priority`, {
    method: 'PUT',
    headers: { ...auth(tokenA), ...cookie(), 'Content-Type': 'application/json' },
    body: JSON.stringify({ order: ['authorization', 'x-authorization', 'cookie'] }),
  });
  expect(write.status).toBe(200);
  expect(await usedBy({ ...auth(tokenA), ...xAuth(tokenB) })).toBe('authorization');
  for (const order of [
    ['cookie'],
    ['cookie', 'cookie', 'authorization'],
    ['cookie', 'x-authorization', 'header'],
  ]) {
    const refused = await fetch(`${platform.api}/auth/token-priority`, {
      method: 'PUT',
      headers: { ...auth(tokenA), 'Content-Type': 'application/json' },
      body: JSON.stringify({ order }),
    });
    expect({ order, status: refused.status }).toEqual({ order, status: 400 });
  }
});

test('TK-07 credentials of different users in one request are refused; a worthless winner is not replaced by the next', async () => {
  expect(await usedBy({ ...auth(ADMIN_TOKEN), ...cookie() })).toBe(400);
  expect(await usedBy({ ...auth(ADMIN_TOKEN), ...xAuth(tokenA) })).toBe(400);
  const revoked = await json(
    await platform.call('POST', `/auth/${member.id}/token`, { body: { name: 'gone' } }),
  );
  await platform.call('DELETE', `/auth/${member.id}/token/${String(revoked.id)}`);
  expect(await usedBy({ ...auth(String(revoked.token)), ...xAuth(tokenA) })).toBe(401);
  expect(await usedBy({ ...xAuth(tokenA), Cookie: 'rp_session=rps_stale' })).toBe('x-authorization');
  // A stale cookie alone is no credential at all.
  expect(await usedBy({ Cookie: 'rp_session=rps_stale' })).toBe(401);
  expect(await usedBy({ Authorization: 'Basic abc' })).toBe(401);
});
