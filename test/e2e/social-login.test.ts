import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import jwt from 'jsonwebtoken';
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

/**
 * "Apple" on loopback: its token endpoint answers the ID token the test chose, its key set publishes one RSA
 * key (`apple-1`). The relying platform is configured with these addresses and this issuer in SOCIAL_LOGIN.
 */
const APPLE_CLIENT_ID = 'com.example.records.web';
const appleKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
let apple: Server;
let appleIssuer: string;
let nextIdToken = '';

async function startApple(): Promise<void> {
  apple = createServer((req, res) => {
    const send = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    req.resume();
    if (req.method === 'GET' && req.url === '/auth/keys')
      return send({
        keys: [{ ...appleKey.publicKey.export({ format: 'jwk' }), kid: 'apple-1', alg: 'RS256', use: 'sig' }],
      });
    if (req.method === 'POST' && req.url === '/auth/token')
      return req.on('end', () =>
        send({ access_token: 'opaque', token_type: 'bearer', expires_in: 3600, id_token: nextIdToken }),
      );
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => apple.listen(0, '127.0.0.1', resolve));
  appleIssuer = `http://127.0.0.1:${(apple.address() as AddressInfo).port}`;
}

/** An ID token as Apple signs it (RS256, `kid`), for mia unless the claims say otherwise. */
function appleIdToken(
  claims: Record<string, unknown> = {},
  options: { key?: KeyObject; audience?: string; issuer?: string; expiresIn?: number } = {},
): string {
  return jwt.sign(
    { email: 'mia@example.com', email_verified: 'true', ...claims },
    options.key ?? appleKey.privateKey,
    {
      algorithm: 'RS256',
      keyid: 'apple-1',
      subject: '001234.apple-user',
      audience: options.audience ?? APPLE_CLIENT_ID,
      issuer: options.issuer ?? appleIssuer,
      ...(claims.exp === undefined && { expiresIn: options.expiresIn ?? 600 }),
    },
  );
}

/** The browser's round trip through "Apple", whose token endpoint hands back `idToken`. */
async function signInWithApple(idToken: string): Promise<Response> {
  nextIdToken = idToken;
  const start = await fetch(`${relying.api}/auth/apple`, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const cookie = start.headers.get('set-cookie')!.split(';')[0]!;
  const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
  return fetch(`${relying.api}/auth/apple/callback?code=from-apple&state=${encodeURIComponent(state)}`, {
    headers: { Cookie: cookie },
    redirect: 'manual',
  });
}

beforeAll(async () => {
  await startApple();
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
      apple: {
        clientId: APPLE_CLIENT_ID,
        clientSecret: 'a client secret JWT signed with the team key',
        authorizeUrl: `${appleIssuer}/auth/authorize`,
        tokenUrl: `${appleIssuer}/auth/token`,
        profileUrl: `${appleIssuer}/auth/keys`,
        issuer: appleIssuer,
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
  await new Promise((resolve) => apple?.close(resolve));
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

test("Apple: an ID token verified against Apple's key set signs in the user with that verified email", async () => {
  const done = await signInWithApple(appleIdToken());
  const answer = await json(done);
  expect({ status: done.status, user: (answer.user as Entity | undefined)?.email }).toEqual({
    status: 200,
    user: 'mia@example.com',
  });
  expect(done.headers.get('set-cookie')).toContain('rp_session=rps_');
  // Apple's boolean and string forms of email_verified both count.
  expect((await signInWithApple(appleIdToken({ email_verified: true }))).status).toBe(200);
});

test('Apple: another key, another audience or issuer, an expired token or an unverified email is refused', async () => {
  const now = Math.floor(Date.now() / 1000);
  const refusals: Array<[string, string, number, string]> = [
    ['signed by another key', appleIdToken({}, { key: otherKey.privateKey }), 502, 'invalid signature'],
    ['for another client', appleIdToken({}, { audience: 'com.example.other' }), 502, 'audience invalid'],
    [
      'from another issuer',
      appleIdToken({}, { issuer: 'https://appleid.apple.com.evil.example' }),
      502,
      'issuer invalid',
    ],
    ['expired', appleIdToken({ iat: now - 700, exp: now - 100 }), 502, 'jwt expired'],
    ['unverified email', appleIdToken({ email_verified: 'false' }), 403, 'verified email'],
    ['no verification claim', appleIdToken({ email_verified: undefined }), 403, 'verified email'],
    ['not a JWT', 'not-a-token', 502, 'unknown key'],
  ];
  for (const [what, idToken, status, reason] of refusals) {
    const refused = await signInWithApple(idToken);
    expect({
      what,
      status: refused.status,
      session: refused.headers.get('set-cookie'),
      message: (await json(refused)).message,
    }).toEqual({
      what,
      status,
      session: expect.not.stringContaining('rp_session=rps_'),
      message: expect.stringContaining(reason),
    });
  }
});
