import { createHash } from 'node:crypto';
import { registerClient as register, tokenRequest, type OAuthClient as Client } from '../support/oauth';
import { json, startPlatform, type Entity, type TestPlatform } from '../support/platform';

jest.setTimeout(60_000);

let platform: TestPlatform;
type Json = Record<string, unknown>;
const REDIRECT = 'https://app.example/cb';
const PASSWORD = 'a long enough password';
const HOSTILE_NAME = '<script>alert("owned")</script> & Co';

let member: Entity;
let memberToken: string;
let client: Client;

const registerClient = (clientName: string, scope = 'record:read record:create') =>
  register(platform, { clientName, redirectUris: [REDIRECT], scope });

/** A browser session of `email`: its cookie (`rp_session=…`). */
async function signIn(email: string): Promise<string> {
  const response = await fetch(`${platform.api}/auth`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  expect(response.status).toBe(200);
  return response.headers.get('set-cookie')!.split(';')[0]!;
}

const authorizeQuery = (of: Client, extra: Record<string, string> = {}) =>
  new URLSearchParams({
    response_type: 'code',
    client_id: of.clientId,
    redirect_uri: REDIRECT,
    state: 'state ✓ <x>',
    ...extra,
  }).toString();

/** The consent page a browser gets for `of`'s authorization request. */
async function consentPage(cookie: string, of = client, extra: Record<string, string> = {}) {
  const response = await fetch(`${platform.api}/auth/oauth/authorize?${authorizeQuery(of, extra)}`, {
    headers: { Cookie: cookie },
    redirect: 'manual',
  });
  const html = await response.text();
  const ticket = /name="ticket" value="([^"]+)"/.exec(html)?.[1];
  return { response, html, ticket: ticket! };
}

/** The page's form as a browser sends it: the session cookie, no X-CSRF-Token. */
function answer(cookie: string, ticket: string, decision: string, headers: Record<string, string> = {}) {
  return fetch(`${platform.api}/auth/oauth/authorize`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie, ...headers },
    body: new URLSearchParams({ ticket, decision }).toString(),
    redirect: 'manual',
  });
}

const exchange = (of: Client, code: string): Promise<Response> =>
  tokenRequest(
    platform,
    '/auth/oauth/token',
    of,
    { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
    of.clientSecret,
  );

/** Tokens for `of` from `memberToken`'s user, the programmatic way (Bearer: no consent page). */
async function grantByBearer(of: Client): Promise<Json> {
  const response = await fetch(`${platform.api}/auth/oauth/authorize?${authorizeQuery(of)}`, {
    headers: { Authorization: `Bearer ${memberToken}` },
    redirect: 'manual',
  });
  expect(response.status).toBe(302);
  const code = new URL(response.headers.get('location')!).searchParams.get('code')!;
  return json(await exchange(of, code));
}

const asBearer = (token: unknown, path = '/record') =>
  fetch(`${platform.api}${path}`, { headers: { Authorization: `Bearer ${String(token)}` } });

/** A refused consent answer: a 400 page, and nowhere to go. */
async function expectRefusalPage(response: Response, reason: string): Promise<void> {
  expect({ status: response.status, location: response.headers.get('location') }).toEqual({
    status: 400,
    location: null,
  });
  expect(response.headers.get('content-type')).toContain('text/html');
  expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(await response.text()).toContain(reason);
}
const ANSWERED = 'answered already';
const BAD_TICKET = 'invalid, expired, or belongs to another session';

beforeAll(async () => {
  platform = await startPlatform();
  const users = [];
  for (const email of ['consent@example.com', 'other@example.com'])
    users.push(
      await json<Entity>(
        await platform.call('POST', '/user', { body: { email, name: email, password: PASSWORD } }),
      ),
    );
  member = users[0]!;
  memberToken = String(
    (await json(await platform.call('POST', `/auth/${member.id}/token`, { body: { name: 'cli' } }))).token,
  );
  client = await registerClient(HOSTILE_NAME);
});

afterAll(async () => {
  await platform?.stop();
});

test('OA-08/OA-09 a browser session gets a consent page naming the client, scopes and lifetimes, safe to show', async () => {
  const cookie = await signIn('consent@example.com');
  const { response, html } = await consentPage(cookie, client, { scope: 'record:read' });
  expect(response.status).toBe(200);
  expect(response.headers.get('location')).toBeNull();
  expect(response.headers.get('content-type')).toContain('text/html');
  expect(response.headers.get('referrer-policy')).toBe('no-referrer');
  expect(response.headers.get('cache-control')).toBe('no-store');
  const policy = response.headers.get('content-security-policy')!;
  expect(policy).toContain("frame-ancestors 'none'");
  expect(policy).toContain("default-src 'none'");
  expect(policy).toContain("base-uri 'none'");
  // The only inline style is the one the policy names by hash; nothing is loaded from anywhere.
  const style = /<style>([^<]*)<\/style>/.exec(html)![1]!;
  expect(policy).toContain(`style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`);
  expect(html).not.toMatch(/<script|\bsrc=|\bhref=|@import|url\(/i);
  // The client's name is shown, escaped; so is what it asks for and for how long.
  expect(html).not.toContain(HOSTILE_NAME);
  expect(html).toContain('&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt; &amp; Co');
  expect(html).toContain('<code>record:read</code>');
  expect(html).not.toContain('record:create');
  expect(html).toContain('60 seconds');
  expect(html).toContain('30 days');
  expect(html).toContain('https://app.example/cb');
  expect(html).toMatch(/<button[^>]*value="allow"[^>]*>Allow<\/button>/);
  expect(html).toMatch(/<button[^>]*value="deny"[^>]*>Deny<\/button>/);
  expect(html).toMatch(/<form method="post" action="[^"]*\/api\/auth\/oauth\/authorize">/);
});

test('OA-08 Allow issues the code and redirects as before (state, iss); the code gives tokens for the user', async () => {
  const cookie = await signIn('consent@example.com');
  const { ticket } = await consentPage(cookie, client, { scope: 'record:read' });
  const allowed = await answer(cookie, ticket, 'allow', { Origin: new URL(platform.api).origin });
  expect(allowed.status).toBe(302);
  const location = new URL(allowed.headers.get('location')!);
  expect(location.origin + location.pathname).toBe(REDIRECT);
  expect(location.searchParams.get('state')).toBe('state ✓ <x>');
  expect(location.searchParams.get('iss')).toBe(platform.api);
  const tokens = await exchange(client, location.searchParams.get('code')!);
  expect(tokens.status).toBe(200);
  const body = await json(tokens);
  expect(body.scope).toBe('record:read');
  const introspected = await tokenRequest(
    platform,
    '/auth/oauth/introspect',
    client,
    { token: String(body.access_token) },
    client.clientSecret,
  );
  expect(await json(introspected)).toMatchObject({ active: true, sub: String(member.id) });
  // The same page answered again: refused, no second code.
  await expectRefusalPage(await answer(cookie, ticket, 'allow'), ANSWERED);
  await expectRefusalPage(await answer(cookie, ticket, 'deny'), ANSWERED);
});

test('OA-08 Deny goes back with access_denied, the state and iss, and issues nothing', async () => {
  const cookie = await signIn('consent@example.com');
  const { ticket } = await consentPage(cookie);
  const denied = await answer(cookie, ticket, 'deny');
  expect(denied.status).toBe(302);
  const location = new URL(denied.headers.get('location')!);
  expect(location.origin + location.pathname).toBe(REDIRECT);
  expect(location.searchParams.get('error')).toBe('access_denied');
  expect(location.searchParams.get('state')).toBe('state ✓ <x>');
  expect(location.searchParams.get('iss')).toBe(platform.api);
  expect(location.searchParams.get('code')).toBeNull();
  await expectRefusalPage(await answer(cookie, ticket, 'allow'), ANSWERED);
});

test('OA-08 tampered, expired, foreign-session, cross-site, bearer-sent and malformed answers get the 400 page', async () => {
  const cookie = await signIn('consent@example.com');
  const { ticket } = await consentPage(cookie);
  const [header, payload, signature] = ticket.split('.');
  const flipped = `${header}.${payload}.${signature!.startsWith('A') ? 'B' : 'A'}${signature!.slice(1)}`;
  await expectRefusalPage(await answer(cookie, flipped, 'allow'), BAD_TICKET);
  // The request inside the ticket changed (another redirect URI): the signature no longer holds.
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as { req: Json };
  claims.req.redirect_uri = 'https://evil.example/';
  const forged = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
  await expectRefusalPage(await answer(cookie, forged, 'allow'), BAD_TICKET);
  // Another session of the same user, and another user's session.
  await expectRefusalPage(await answer(await signIn('consent@example.com'), ticket, 'allow'), BAD_TICKET);
  await expectRefusalPage(await answer(await signIn('other@example.com'), ticket, 'allow'), BAD_TICKET);
  // Posted from another site, or without the browser session at all.
  await expectRefusalPage(
    await answer(cookie, ticket, 'allow', { Origin: 'https://evil.example' }),
    'another site',
  );
  await expectRefusalPage(await answer(cookie, ticket, 'allow', { Origin: 'null' }), 'another site');
  await expectRefusalPage(
    await fetch(`${platform.api}/auth/oauth/authorize`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Bearer ${memberToken}`,
      },
      body: new URLSearchParams({ ticket, decision: 'allow' }).toString(),
      redirect: 'manual',
    }),
    'browser session',
  );
  await expectRefusalPage(await answer(cookie, ticket, 'maybe'), 'malformed');
  await expectRefusalPage(await answer(cookie, '', 'allow'), BAD_TICKET);
  // Ten minutes and a second later, the page has expired.
  const now = Date.now();
  const clock = jest.spyOn(Date, 'now').mockReturnValue(now + 601_000);
  try {
    await expectRefusalPage(await answer(cookie, ticket, 'allow'), BAD_TICKET);
  } finally {
    clock.mockRestore();
  }
  // Still good after all that: nothing above spent it.
  expect((await answer(cookie, ticket, 'allow')).status).toBe(302);
});

test('OA-08 a request the client may not make goes back with its error before any page', async () => {
  const cookie = await signIn('consent@example.com');
  const { response } = await consentPage(cookie, client, { scope: 'record:delete' });
  expect(response.status).toBe(302);
  expect(new URL(response.headers.get('location')!).searchParams.get('error')).toBe('invalid_scope');
  const unknown = await consentPage(cookie, { clientId: 'rpc_000000000000000000000000', clientSecret: '' });
  expect([unknown.response.status, unknown.response.headers.get('location')]).toEqual([400, null]);
});

test('OA-33 users list the grants they gave (client, scope, dates; no secrets) and revoke one', async () => {
  const calendar = await registerClient('Calendar', 'record:read');
  const mailer = await registerClient('Mailer', 'record:read');
  const calendarTokens = await grantByBearer(calendar);
  const mailerTokens = await grantByBearer(mailer);
  // A grant given on the consent page is listed the same way.
  const cookie = await signIn('consent@example.com');
  const { ticket } = await consentPage(cookie, mailer);
  const allowed = await answer(cookie, ticket, 'allow');
  await exchange(mailer, new URL(allowed.headers.get('location')!).searchParams.get('code')!);

  const listed = await asBearer(memberToken, '/auth/oauth/grant');
  expect(listed.status).toBe(200);
  expect(listed.headers.get('cache-control')).toBe('no-store');
  const text = await listed.text();
  expect(text).not.toMatch(/Hash|rpr_|refresh/);
  const { items } = JSON.parse(text) as { items: Json[] };
  const mine = items.filter((grant) => [calendar.clientId, mailer.clientId].includes(String(grant.clientId)));
  expect(mine).toHaveLength(3);
  const calendarGrant = mine.find((grant) => grant.clientId === calendar.clientId)!;
  expect(calendarGrant).toEqual({
    grantId: expect.stringMatching(/^[0-9a-f]{32}$/),
    clientId: calendar.clientId,
    clientName: 'Calendar',
    scope: 'record:read',
    createdAt: expect.any(String),
    expiresAt: expect.any(String),
  });
  const days = (Date.parse(String(calendarGrant.expiresAt)) - Date.now()) / 86_400_000;
  expect(days).toBeGreaterThan(29.9);
  expect(days).toBeLessThanOrEqual(30);
  // Someone else's list does not hold them; an OAuth client may not read or revoke its user's grants.
  const others = await json<{ items: Json[] }>(await platform.call('GET', '/auth/oauth/grant'));
  expect(others.items.map((grant) => grant.clientId)).not.toContain(calendar.clientId);
  expect((await asBearer(calendarTokens.access_token, '/auth/oauth/grant')).status).toBe(403);
  const byClient = await fetch(`${platform.api}/auth/oauth/grant/${String(calendarGrant.grantId)}`, {
    method: 'DELETE',
    headers: { Authorization: `Bearer ${String(calendarTokens.access_token)}` },
  });
  expect(byClient.status).toBe(403);

  // Revoking a grant kills its tokens on the next request; the other client's keep working.
  const notMine = await platform.call('DELETE', `/auth/oauth/grant/${String(calendarGrant.grantId)}`);
  expect(notMine.status).toBe(404);
  expect((await platform.call('DELETE', '/auth/oauth/grant/not-a-grant')).status).toBe(400);
  expect((await asBearer(calendarTokens.access_token)).status).toBe(200);
  const revoked = await fetch(`${platform.api}/auth/oauth/grant/${String(calendarGrant.grantId)}`, {
    method: 'DELETE',
    headers: { Authorization: `Bearer ${memberToken}` },
  });
  expect([revoked.status, await json(revoked)]).toEqual([
    200,
    { grantId: calendarGrant.grantId, revoked: true },
  ]);
  expect((await asBearer(calendarTokens.access_token)).status).toBe(401);
  const refresh = await tokenRequest(
    platform,
    '/auth/oauth/token',
    calendar,
    { grant_type: 'refresh_token', refresh_token: String(calendarTokens.refresh_token) },
    calendar.clientSecret,
  );
  expect([refresh.status, (await json(refresh)).error]).toEqual([400, 'invalid_grant']);
  expect((await asBearer(mailerTokens.access_token)).status).toBe(200);
  const after = await json<{ items: Json[] }>(await asBearer(memberToken, '/auth/oauth/grant'));
  expect(after.items.map((grant) => grant.clientId)).not.toContain(calendar.clientId);
  expect(after.items.filter((grant) => grant.clientId === mailer.clientId)).toHaveLength(2);
});
