import { freePort } from '../support/child-platform';
import { json, startPlatform, type Entity, type TestPlatform } from '../support/platform';

jest.setTimeout(90_000);

/** The provider: another platform, whose own OAuth server the relying platform is configured to use as "google". */
let provider: TestPlatform;
let relying: TestPlatform;
let miaAtProvider: string;
let strangerAtProvider: string;

async function tokenFor(platform: TestPlatform, email: string): Promise<string> {
  const user = await json<Entity>(await platform.call('POST', '/user', { body: { email, name: email } }));
  return String(
    (await json(await platform.call('POST', `/auth/${user.id}/token`, { body: { name: 'browser' } }))).token,
  );
}

/** Follows the sign-in as a browser: start at the relying platform, consent at the provider as `token`'s user. */
async function signInThroughProvider(token: string, tamper?: (callback: URL) => void) {
  const start = await fetch(`${relying.api}/auth/google`, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const cookie = start.headers.get('set-cookie')!.split(';')[0]!;
  expect(start.headers.get('set-cookie')).toContain('HttpOnly');
  const authorize = new URL(start.headers.get('location')!);
  expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
  const consent = await fetch(authorize, {
    headers: { Authorization: `Bearer ${token}` },
    redirect: 'manual',
  });
  expect(consent.status).toBe(302);
  const callback = new URL(consent.headers.get('location')!);
  tamper?.(callback);
  return fetch(callback, { headers: { Cookie: cookie }, redirect: 'manual' });
}

beforeAll(async () => {
  const relyingPort = await freePort();
  provider = await startPlatform();
  const client = await json(
    await provider.call('POST', '/auth/oauth/client', {
      body: {
        clientName: 'Relying platform',
        scope: 'openid email',
        redirectUris: [`http://127.0.0.1:${relyingPort}/api/auth/google/callback`],
      },
    }),
  );
  relying = await startPlatform({
    PORT: String(relyingPort),
    OUTBOUND_ALLOW_PRIVATE: 'true',
    SOCIAL_LOGIN: JSON.stringify({
      google: {
        clientId: client.clientId,
        clientSecret: client.clientSecret,
        authorizeUrl: `${provider.api}/auth/oauth/authorize`,
        tokenUrl: `${provider.api}/auth/oauth/token`,
        profileUrl: `${provider.api}/auth/oauth/userinfo`,
      },
    }),
  });
  miaAtProvider = await tokenFor(provider, 'mia@example.com');
  strangerAtProvider = await tokenFor(provider, 'stranger@example.com');
  await relying.call('POST', '/user', { body: { email: 'mia@example.com', name: 'Mia here' } });
});

afterAll(async () => {
  await relying?.stop();
  await provider?.stop();
});

test('the full redirect flow links the provider-verified email to the user and starts a session', async () => {
  const done = await signInThroughProvider(miaAtProvider);
  const answer = await json(done);
  expect({ status: done.status, user: (answer.user as Entity | undefined)?.email }).toEqual({
    status: 200,
    user: 'mia@example.com',
  });
  expect(done.headers.get('set-cookie')).toContain('rp_session=rps_');
  const me = await fetch(`${relying.api}/auth/token-priority`, {
    headers: { Authorization: `Bearer ${String(answer.session)}` },
  });
  expect((await json(me)).credential).toMatchObject({ kind: 'session' });
});

test('an email no user has is refused; so are a changed state, a missing flow cookie and a reused code', async () => {
  const stranger = await signInThroughProvider(strangerAtProvider);
  expect([stranger.status, (await json(stranger)).code]).toEqual([403, 'E4030']);
  const forged = await signInThroughProvider(miaAtProvider, (callback) =>
    callback.searchParams.set('state', 'forged'),
  );
  expect(forged.status).toBe(400);
  const start = await fetch(`${relying.api}/auth/google`, { redirect: 'manual' });
  const consent = await fetch(start.headers.get('location')!, {
    headers: { Authorization: `Bearer ${miaAtProvider}` },
    redirect: 'manual',
  });
  expect((await fetch(consent.headers.get('location')!, { redirect: 'manual' })).status).toBe(400);
  const cookie = start.headers.get('set-cookie')!.split(';')[0]!;
  const callback = consent.headers.get('location')!;
  expect((await fetch(callback, { headers: { Cookie: cookie } })).status).toBe(200);
  // The provider refuses the replayed code, and the sign-in fails with it.
  expect((await fetch(callback, { headers: { Cookie: cookie } })).status).toBe(502);
});

test('providers: an unconfigured one is 501, an unknown one 404; a refusal at the provider is a 401', async () => {
  expect((await fetch(`${relying.api}/auth/github`, { redirect: 'manual' })).status).toBe(501);
  expect((await fetch(`${relying.api}/auth/facebook`, { redirect: 'manual' })).status).toBe(404);
  const start = await fetch(`${relying.api}/auth/google`, { redirect: 'manual' });
  const cookie = start.headers.get('set-cookie')!.split(';')[0]!;
  const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
  const denied = await fetch(`${relying.api}/auth/google/callback?error=access_denied&state=${state}`, {
    headers: { Cookie: cookie },
  });
  expect(denied.status).toBe(401);
});
