import { createHash, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import jwt from 'jsonwebtoken';
import { freePort } from '../support/child-platform';
import { json, startPlatform, type Entity, type Page, type TestPlatform } from '../support/platform';

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
 * "Apple" on loopback, as strict as Apple where it matters here: its authorize endpoint refuses a request
 * without `response_mode=form_post` (Apple does when `name` or `email` is asked for) and answers with the
 * page that makes the browser post `code`, `state` and (the first time) `user` to the redirect URI. Its
 * token endpoint checks the code once, with its client, redirect URI and PKCE verifier, and answers the ID
 * token the test chose; its key set publishes one RSA key (`apple-1`). The relying platform is configured
 * with these addresses and this issuer in SOCIAL_LOGIN.
 */
const APPLE_CLIENT_ID = 'com.example.records.web';
const appleKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
let apple: Server;
let appleIssuer: string;
let nextIdToken = '';
/** The codes Apple issued, with what their exchange must match. */
const appleCodes = new Map<string, { challenge: string; redirectUri: string; used: boolean }>();
let appleTokenCalls = 0;

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const unescapeHtml = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

async function startApple(): Promise<void> {
  apple = createServer((req, res) => {
    const send = (body: unknown, status = 200) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', 'http://apple');
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    if (req.method === 'GET' && url.pathname === '/auth/keys')
      return send({
        keys: [{ ...appleKey.publicKey.export({ format: 'jwk' }), kid: 'apple-1', alg: 'RS256', use: 'sig' }],
      });
    if (req.method === 'GET' && url.pathname === '/auth/authorize') {
      const query = url.searchParams;
      if (query.get('response_mode') !== 'form_post')
        return send(
          {
            error: 'invalid_request',
            error_description: 'response_mode must be form_post when name or email scope is requested',
          },
          400,
        );
      if (
        query.get('response_type') !== 'code' ||
        query.get('client_id') !== APPLE_CLIENT_ID ||
        query.get('scope') !== 'name email' ||
        query.get('code_challenge_method') !== 'S256' ||
        !query.get('code_challenge') ||
        !query.get('state') ||
        !query.get('redirect_uri')
      )
        return send({ error: 'invalid_request' }, 400);
      const code = `c${randomBytes(16).toString('hex')}`;
      appleCodes.set(code, {
        challenge: query.get('code_challenge')!,
        redirectUri: query.get('redirect_uri')!,
        used: false,
      });
      const fields = {
        code,
        state: query.get('state')!,
        user: JSON.stringify({ name: { firstName: 'Mia', lastName: 'Here' }, email: 'mia@example.com' }),
      };
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(
        `<html><body onload="document.forms[0].submit()"><form method="post" action="${escapeHtml(query.get('redirect_uri')!)}">` +
          Object.entries(fields)
            .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
            .join('') +
          '</form></body></html>',
      );
    }
    if (req.method === 'POST' && url.pathname === '/auth/token')
      return req.on('end', () => {
        appleTokenCalls++;
        const form = new URLSearchParams(body);
        const issued = appleCodes.get(form.get('code') ?? '');
        const challenge = createHash('sha256')
          .update(form.get('code_verifier') ?? '')
          .digest('base64url');
        if (
          !issued ||
          issued.used ||
          form.get('grant_type') !== 'authorization_code' ||
          form.get('client_id') !== APPLE_CLIENT_ID ||
          form.get('redirect_uri') !== issued.redirectUri ||
          challenge !== issued.challenge
        )
          return send({ error: 'invalid_grant' }, 400);
        issued.used = true;
        send({ access_token: 'opaque', token_type: 'bearer', expires_in: 3600, id_token: nextIdToken });
      });
    req.resume();
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

interface AppleFlow {
  /** The flow cookie's `Set-Cookie`, and the `name=value` the browser sends back. */
  readonly setCookie: string;
  readonly cookie: string;
  readonly authorize: URL;
  /** The form Apple's page posts: its action and fields. */
  readonly action: string;
  readonly form: Record<string, string>;
}

/** The browser's way to Apple and back to the page that posts Apple's answer. */
async function startAppleFlow(): Promise<AppleFlow> {
  const start = await fetch(`${relying.api}/auth/apple`, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const setCookie = start.headers.get('set-cookie')!;
  const authorize = new URL(start.headers.get('location')!);
  const page = await fetch(authorize);
  expect(page.status).toBe(200);
  const html = await page.text();
  const action = unescapeHtml(/<form method="post" action="([^"]*)"/.exec(html)![1]!);
  const form = Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((match) => [
      match[1]!,
      unescapeHtml(match[2]!),
    ]),
  );
  return { setCookie, cookie: setCookie.split(';')[0]!, authorize, action, form };
}

/** Apple's page posting its answer from appleid.apple.com: a cross-site form post to the callback. */
function postToCallback(
  action: string,
  form: Record<string, string> | string,
  cookie?: string,
  contentType = 'application/x-www-form-urlencoded',
): Promise<Response> {
  return fetch(action, {
    method: 'POST',
    headers: {
      'content-type': contentType,
      origin: 'https://appleid.apple.com',
      ...(cookie !== undefined && { cookie }),
    },
    body: typeof form === 'string' ? form : new URLSearchParams(form).toString(),
    redirect: 'manual',
  });
}

/** The browser's round trip through "Apple", whose token endpoint hands back `idToken`. */
async function signInWithApple(idToken: string): Promise<Response> {
  nextIdToken = idToken;
  const flow = await startAppleFlow();
  return postToCallback(flow.action, flow.form, flow.cookie);
}

/** How many events the relying platform has recorded (its audit trail has one entry per event). */
async function eventCount(): Promise<number> {
  return (await json<Page>(await relying.call('GET', '/audit?limit=1'))).meta.total;
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

test('Apple: asked for name and email by form post, Apple answers with a cross-site POST that signs the user in', async () => {
  nextIdToken = appleIdToken();
  const flow = await startAppleFlow();
  expect(flow.authorize.searchParams.get('response_mode')).toBe('form_post');
  expect(flow.authorize.searchParams.get('scope')).toBe('name email');
  expect(flow.action).toBe(`${relying.api}/auth/apple/callback`);
  // The flow cookie must follow the cross-site POST: SameSite=None, hence Secure, and only to the callback.
  expect(flow.setCookie.split('; ').slice(1).sort()).toEqual(
    ['HttpOnly', 'Max-Age=600', 'Path=/api/auth/apple/callback', 'SameSite=None', 'Secure'].sort(),
  );
  expect(flow.cookie).toMatch(/^rp_social_apple=ey/);
  // The other providers' answers are top-level redirects: their flow cookie stays Lax (and not Secure over http).
  const google = (await fetch(`${relying.api}/auth/google`, { redirect: 'manual' })).headers.get(
    'set-cookie',
  )!;
  expect(google.split('; ').slice(1).sort()).toEqual([
    'HttpOnly',
    'Max-Age=600',
    'Path=/api/auth',
    'SameSite=Lax',
  ]);
  // A real Apple refuses the old redirect flow: the form post is the only way back.
  const withoutFormPost = new URL(flow.authorize);
  withoutFormPost.searchParams.delete('response_mode');
  expect((await fetch(withoutFormPost)).status).toBe(400);

  // A session cookie without X-CSRF-Token rides along: the kit neither counts it nor blocks the post.
  const before = await signInWithApple(appleIdToken());
  const staleSession = before.headers.get('set-cookie')!.match(/rp_session=[^;]+/)![0];
  const events = await eventCount();
  const done = await postToCallback(flow.action, flow.form, `${flow.cookie}; ${staleSession}`);
  const answer = await json(done);
  expect({ status: done.status, user: (answer.user as Entity | undefined)?.email }).toEqual({
    status: 200,
    user: 'mia@example.com',
  });
  // The sign-in is recorded (SessionStarted): the refusals below count on this to see nothing was.
  expect(await eventCount()).toBeGreaterThan(events);
  const cookies = done.headers.getSetCookie();
  // The flow is spent; the session cookie keeps its attributes.
  expect(cookies).toContain(
    'rp_social_apple=; Path=/api/auth/apple/callback; HttpOnly; SameSite=None; Max-Age=0; Secure',
  );
  const session = cookies.find((cookie) => cookie.startsWith('rp_session=rps_'))!;
  expect(session.split('; ').slice(1)).toEqual([
    'Path=/api',
    'HttpOnly',
    'SameSite=Lax',
    expect.stringMatching(/^Max-Age=\d+$/),
  ]);
  const me = await fetch(`${relying.api}/auth/token-priority`, {
    headers: { Authorization: `Bearer ${String(answer.session)}` },
  });
  expect((await json(me)).credential).toMatchObject({ kind: 'session' });
  // The same answer again: Apple refuses the used code.
  expect((await postToCallback(flow.action, flow.form, flow.cookie)).status).toBe(502);
});

test("Apple: the callback is a POST; a GET one is refused, and Apple's flow needs https off loopback", async () => {
  const flow = await startAppleFlow();
  const events = await eventCount();
  const query = new URLSearchParams({ code: flow.form.code!, state: flow.form.state! });
  const viaGet = await fetch(`${flow.action}?${query.toString()}`, {
    headers: { cookie: flow.cookie },
    redirect: 'manual',
  });
  expect([viaGet.status, viaGet.headers.get('allow'), viaGet.headers.get('set-cookie')]).toEqual([
    405,
    'POST',
    null,
  ]);
  expect((await json(viaGet)).message).toContain('POST /auth/apple/callback');
  // Other providers have no POST callback (and take no form there).
  const googlePost = (body: string, contentType: string) =>
    fetch(`${relying.api}/auth/google/callback`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body,
    });
  expect((await googlePost('{"code":"c","state":"s"}', 'application/json')).status).toBe(404);
  expect((await googlePost('code=c&state=s', 'application/x-www-form-urlencoded')).status).toBe(415);
  // Over plain http a browser drops a Secure cookie except on loopback: the flow does not start there.
  // (fetch will not send another Host, node:http does.)
  const plain = await new Promise<{ status: number; setCookie: string[] | undefined; body: string }>(
    (resolve, reject) => {
      const target = new URL(`${relying.api}/auth/apple`);
      get(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          headers: { host: 'records.example' },
        },
        (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (body += chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, setCookie: response.headers['set-cookie'], body }),
          );
        },
      ).on('error', reject);
    },
  );
  expect([plain.status, plain.setCookie]).toEqual([501, undefined]);
  expect((JSON.parse(plain.body) as { message: string }).message).toContain('https');
  expect(await eventCount()).toBe(events);
});

test("Apple's form post: a wrong or missing state, no flow cookie, a malformed body or Apple's refusal writes nothing", async () => {
  nextIdToken = appleIdToken();
  const googleStart = await fetch(`${relying.api}/auth/google`, { redirect: 'manual' });
  const googleFlow = googleStart.headers
    .get('set-cookie')!
    .split(';')[0]!
    .replace(/^rp_social=/, '');
  const googleState = new URL(googleStart.headers.get('location')!).searchParams.get('state')!;
  const signedIn = await signInWithApple(appleIdToken());
  const session = signedIn.headers.get('set-cookie')!.match(/rp_session=[^;]+/)![0];

  const cases: Array<[string, (flow: AppleFlow) => Promise<Response>, number, string]> = [
    [
      'a wrong state',
      (flow) => postToCallback(flow.action, { ...flow.form, state: 'forged' }, flow.cookie),
      400,
      'E4000',
    ],
    [
      'no state',
      (flow) => postToCallback(flow.action, { code: flow.form.code!, user: flow.form.user! }, flow.cookie),
      400,
      'E4001',
    ],
    ['no flow cookie', (flow) => postToCallback(flow.action, flow.form), 400, 'E4000'],
    [
      'no flow cookie, a session cookie without X-CSRF-Token',
      (flow) => postToCallback(flow.action, flow.form, session),
      400,
      'E4000',
    ],
    [
      "Google's flow and state",
      (flow) =>
        postToCallback(flow.action, { ...flow.form, state: googleState }, `rp_social_apple=${googleFlow}`),
      400,
      'E4000',
    ],
    [
      'neither code nor error',
      (flow) => postToCallback(flow.action, { state: flow.form.state! }, flow.cookie),
      400,
      'E4001',
    ],
    [
      'a state sent twice',
      (flow) =>
        postToCallback(
          flow.action,
          `code=${flow.form.code!}&state=${flow.form.state!}&state=${flow.form.state!}`,
          flow.cookie,
        ),
      400,
      'E4001',
    ],
    [
      'user that is not JSON',
      (flow) => postToCallback(flow.action, { ...flow.form, user: '{mia' }, flow.cookie),
      400,
      'E4001',
    ],
    [
      'an error that is not a word',
      (flow) => postToCallback(flow.action, { state: flow.form.state!, error: '<script>' }, flow.cookie),
      400,
      'E4001',
    ],
    [
      'a body that is not a form',
      (flow) => postToCallback(flow.action, 'code=x', flow.cookie, 'text/plain'),
      415,
      'E4150',
    ],
    [
      'Apple: the user cancelled',
      (flow) =>
        postToCallback(
          flow.action,
          { state: flow.form.state!, error: 'user_cancelled_authorize' },
          flow.cookie,
        ),
      401,
      'E4010',
    ],
  ];
  for (const [what, post, status, code] of cases) {
    const flow = await startAppleFlow();
    const events = await eventCount();
    const tokenCalls = appleTokenCalls;
    const refused = await post(flow);
    expect({ what, status: refused.status, code: (await json(refused)).code }).toEqual({
      what,
      status,
      code,
    });
    expect({
      what,
      session: refused.headers.getSetCookie().filter((cookie) => cookie.startsWith('rp_session')),
    }).toEqual({
      what,
      session: [],
    });
    expect({ what, tokenCalls: appleTokenCalls, events: await eventCount() }).toEqual({
      what,
      tokenCalls,
      events,
    });
  }

  // A post without the flow's state does not spend the flow: Apple's real answer still completes it.
  const flow = await startAppleFlow();
  const forged = await postToCallback(flow.action, { ...flow.form, state: 'forged' }, flow.cookie);
  expect([forged.status, forged.headers.get('set-cookie')]).toEqual([400, null]);
  expect((await postToCallback(flow.action, flow.form, flow.cookie)).status).toBe(200);
  // Apple's refusal spends it.
  const cancelled = await startAppleFlow();
  const refusal = await postToCallback(
    cancelled.action,
    { state: cancelled.form.state!, error: 'user_cancelled_authorize' },
    cancelled.cookie,
  );
  expect(refusal.headers.get('set-cookie')).toMatch(/^rp_social_apple=; .*Max-Age=0/);
});
