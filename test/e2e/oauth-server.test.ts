import nodeCrypto, { createHash, randomBytes } from 'node:crypto';
import {
  registerClient as register,
  tokenRequest as postForm,
  type OAuthClient as Client,
} from '../support/oauth';
import { ADMIN_TOKEN, filesHolding, json, startPlatform, type TestPlatform } from '../support/platform';
import { routesOf } from '../support/routes';

jest.setTimeout(60_000);

let platform: TestPlatform;
type Json = Record<string, unknown>;
const REDIRECT = 'http://127.0.0.1/callback';

const verifier = () => randomBytes(32).toString('base64url');
const challengeOf = (value: string) => createHash('sha256').update(value).digest('base64url');

const registerClient = (body: Json = {}): Promise<Client> =>
  register(platform, {
    redirectUris: [REDIRECT, 'https://app.example/cb'],
    scope: 'record:read record:create',
    ...body,
  });

/** GET /auth/oauth/authorize as the admin; the redirect's parameters, or the status when there is none. */
async function authorize(
  query: Record<string, string>,
): Promise<{ status: number; location: URL | null; body: Json | null }> {
  const response = await fetch(
    `${platform.api}/auth/oauth/authorize?${new URLSearchParams(query).toString()}`,
    {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      redirect: 'manual',
    },
  );
  const location = response.headers.get('location');
  // OA-09/OA-10: every answer of the endpoint refuses framing and referrers; redirects are 302s.
  expect(response.headers.get('content-security-policy')).toBe("frame-ancestors 'none'");
  expect(response.headers.get('referrer-policy')).toBe('no-referrer');
  if (location) expect(response.status).toBe(302);
  return {
    status: response.status,
    location: location ? new URL(location) : null,
    body: location ? null : await json(response),
  };
}

async function codeFor(client: Client, extra: Record<string, string> = {}): Promise<string> {
  const answer = await authorize({
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: REDIRECT,
    state: 's',
    ...extra,
  });
  expect(answer.status).toBe(302);
  return answer.location!.searchParams.get('code')!;
}

const tokenRequest = (
  path: string,
  client: Client,
  form: Record<string, string>,
  secret = client.clientSecret,
): Promise<Response> => postForm(platform, path, client, form, secret);

async function exchange(client: Client, code: string, extra: Record<string, string> = {}): Promise<Response> {
  return tokenRequest('/auth/oauth/token', client, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    ...extra,
  });
}

const asBearer = (token: string) =>
  fetch(`${platform.api}/record`, { headers: { Authorization: `Bearer ${token}` } });

/** Small, so OA-34 reaches it; every other test introspects with a client of its own, a few times. */
const INTROSPECTIONS_PER_MINUTE = 5;

beforeAll(async () => {
  platform = await startPlatform({ OAUTH_INTROSPECTIONS_PER_MINUTE: String(INTROSPECTIONS_PER_MINUTE) });
});

afterAll(async () => {
  await platform.stop();
});

test('OA-10/11/13 the code flow with PKCE: 302 (never 307) with a 256-bit code, the state and iss; the exchange gives the spec shape; the token works', async () => {
  const client = await registerClient();
  const codeVerifier = verifier();
  const answer = await authorize({
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: REDIRECT,
    state: 'état ✓ long '.repeat(20),
    scope: 'record:read',
    code_challenge: challengeOf(codeVerifier),
    code_challenge_method: 'S256',
  });
  expect(answer.status).toBe(302);
  expect(answer.location!.origin + answer.location!.pathname).toBe(REDIRECT);
  expect(answer.location!.searchParams.get('state')).toBe('état ✓ long '.repeat(20));
  expect(answer.location!.searchParams.get('iss')).toBe(`${platform.api}`);
  const code = answer.location!.searchParams.get('code')!;
  expect(Buffer.from(code, 'base64url').length).toBeGreaterThanOrEqual(32);

  const tokens = await exchange(client, code, { code_verifier: codeVerifier });
  expect(tokens.status).toBe(200);
  expect(tokens.headers.get('cache-control')).toBe('no-store');
  expect(tokens.headers.get('pragma')).toBe('no-cache');
  const body = await json(tokens);
  expect(body).toEqual({
    access_token: expect.stringMatching(/^eyJ/),
    token_type: 'Bearer',
    expires_in: 3600,
    refresh_token: expect.stringMatching(/^rpr_/),
    scope: 'record:read',
  });
  expect((await asBearer(String(body.access_token))).status).toBe(200);
  // The token carries the scope's rights only.
  const write = await fetch(`${platform.api}/space`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${String(body.access_token)}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'x' }),
  });
  expect(write.status).toBe(403);
  const info = await json(
    await fetch(`${platform.api}/auth/oauth/token-info?token=${String(body.access_token)}`),
  );
  expect(info).toEqual({ client_id: client.clientId, scope: ['record:read'], exp: expect.any(Number) });
});

test('OA-01/OA-02 redirect URIs match exactly (a loopback port aside); unknown clients and near misses are not redirected to', async () => {
  const client = await registerClient();
  const base = { response_type: 'code', client_id: client.clientId, state: 's' };
  expect((await authorize({ ...base, redirect_uri: 'http://127.0.0.1:54321/callback' })).status).toBe(302);
  for (const redirectUri of [
    'https://app.example/cb/',
    'https://APP.example/cb',
    'https://app.example/cb?x=1',
    'https://app.example/cb/more',
    'https://app.example%2Fcb',
    'https://user@app.example/cb',
    'https://app.example/cb#frag',
    'http://app.example/cb',
    'http://127.0.0.1:54321/other',
  ]) {
    const answer = await authorize({ ...base, redirect_uri: redirectUri });
    expect({ redirectUri, status: answer.status, location: answer.location }).toEqual({
      redirectUri,
      status: 400,
      location: null,
    });
  }
  const unknown = await authorize({
    ...base,
    client_id: 'rpc_000000000000000000000000',
    redirect_uri: REDIRECT,
  });
  expect([unknown.status, unknown.location, unknown.body?.error]).toEqual([400, null, 'invalid_request']);
});

test('OA-03/04/05/06/07 other errors go back to the client with the state', async () => {
  const client = await registerClient();
  const base = {
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: REDIRECT,
    state: 'keep me',
  };
  const errorOf = async (query: Record<string, string>) => {
    const answer = await authorize(query);
    expect(answer.status).toBe(302);
    return [answer.location!.searchParams.get('error'), answer.location!.searchParams.get('state')];
  };
  expect(await errorOf({ ...base, response_type: 'token' })).toEqual([
    'unsupported_response_type',
    'keep me',
  ]);
  expect(await errorOf({ ...base, scope: 'record:delete' })).toEqual(['invalid_scope', 'keep me']);
  expect(
    await errorOf({ ...base, code_challenge: challengeOf(verifier()), code_challenge_method: 'plain' }),
  ).toEqual(['invalid_request', 'keep me']);
  expect(await errorOf({ ...base, code_challenge: 'short', code_challenge_method: 'S256' })).toEqual([
    'invalid_request',
    'keep me',
  ]);
  const refreshOnly = await registerClient({ grantTypes: ['refresh_token'] });
  expect(await errorOf({ ...base, client_id: refreshOnly.clientId })).toEqual([
    'unauthorized_client',
    'keep me',
  ]);
});

test('OA-15/16/17/18 a code is single-use, bound to its client, redirect URI and PKCE challenge', async () => {
  const client = await registerClient();
  const other = await registerClient();
  const codeVerifier = verifier();
  const code = await codeFor(client, {
    code_challenge: challengeOf(codeVerifier),
    code_challenge_method: 'S256',
  });
  const errorOf = async (response: Response) => [response.status, (await json(response)).error];
  expect(await errorOf(await exchange(other, code, { code_verifier: codeVerifier }))).toEqual([
    400,
    'invalid_grant',
  ]);
  expect(
    await errorOf(
      await exchange(client, code, { code_verifier: codeVerifier, redirect_uri: 'https://app.example/cb' }),
    ),
  ).toEqual([400, 'invalid_grant']);
  expect(await errorOf(await exchange(client, code, { code_verifier: verifier() }))).toEqual([
    400,
    'invalid_grant',
  ]);
  expect(await errorOf(await exchange(client, code))).toEqual([400, 'invalid_grant']);
  const first = await json(await exchange(client, code, { code_verifier: codeVerifier }));
  expect((await asBearer(String(first.access_token))).status).toBe(200);
  // Replayed: refused, and everything the code gave is revoked.
  expect(await errorOf(await exchange(client, code, { code_verifier: codeVerifier }))).toEqual([
    400,
    'invalid_grant',
  ]);
  expect((await asBearer(String(first.access_token))).status).toBe(401);
  const refresh = await tokenRequest('/auth/oauth/token', client, {
    grant_type: 'refresh_token',
    refresh_token: String(first.refresh_token),
  });
  expect(refresh.status).toBe(400);
  // A verifier for a code issued without a challenge is a downgrade attempt.
  const plainCode = await codeFor(client);
  expect(await errorOf(await exchange(client, plainCode, { code_verifier: codeVerifier }))).toEqual([
    400,
    'invalid_grant',
  ]);
});

test('OA-19/20/21 client authentication: Basic or body, never a wrong secret; unknown grant types', async () => {
  const client = await registerClient();
  const wrong = await exchange(client, await codeFor(client), {}).then(() =>
    tokenRequest(
      '/auth/oauth/token',
      client,
      { grant_type: 'authorization_code', code: 'x' },
      'not-the-secret',
    ),
  );
  expect(wrong.status).toBe(401);
  expect(wrong.headers.get('www-authenticate')).toContain('Basic');
  expect((await json(wrong)).error).toBe('invalid_client');
  const viaBody = await fetch(`${platform.api}/auth/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'authorization_code',
      code: await codeFor(client),
      redirect_uri: REDIRECT,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    }),
  });
  expect(viaBody.status).toBe(200);
  const malformed = await fetch(`${platform.api}/auth/oauth/token`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: `Basic ${Buffer.from(`${client.clientId}:%E0%A4%A`).toString('base64')}`,
    },
    body: 'grant_type=authorization_code&code=x',
  });
  expect([malformed.status, (await json(malformed)).error]).toEqual([401, 'invalid_client']);
  const unsupported = await tokenRequest('/auth/oauth/token', client, { grant_type: 'password' });
  expect([unsupported.status, (await json(unsupported)).error]).toEqual([400, 'unsupported_grant_type']);
});

test('OA-23/24/25 refresh rotates; renew is the same; a rotated token presented again revokes the grant', async () => {
  const client = await registerClient();
  const first = await json(await exchange(client, await codeFor(client)));
  const second = await json(
    await tokenRequest('/auth/oauth/token', client, {
      grant_type: 'refresh_token',
      refresh_token: String(first.refresh_token),
    }),
  );
  expect(second.refresh_token).not.toBe(first.refresh_token);
  const third = await json(
    await tokenRequest('/auth/oauth/renew', client, { refresh_token: String(second.refresh_token) }),
  );
  expect(third.access_token).toMatch(/^eyJ/);
  expect((await asBearer(String(third.access_token))).status).toBe(200);
  const reused = await tokenRequest('/auth/oauth/token', client, {
    grant_type: 'refresh_token',
    refresh_token: String(first.refresh_token),
  });
  expect([reused.status, (await json(reused)).error]).toEqual([400, 'invalid_grant']);
  expect((await asBearer(String(third.access_token))).status).toBe(401);
  const latest = await tokenRequest('/auth/oauth/renew', client, {
    refresh_token: String(third.refresh_token),
  });
  expect(latest.status).toBe(400);
});

test('OA-30/31/32/35/36 revoke answers 200 always; a token of another client stays valid; a revoked refresh token takes its access token along; introspection says active or only active: false', async () => {
  const client = await registerClient();
  const other = await registerClient();
  const tokens = await json(await exchange(client, await codeFor(client)));
  const foreign = await tokenRequest('/auth/oauth/revoke', other, { token: String(tokens.access_token) });
  expect([foreign.status, await json(foreign)]).toEqual([200, { revoked: true }]);
  expect((await asBearer(String(tokens.access_token))).status).toBe(200);
  const introspected = await json(
    await tokenRequest('/auth/oauth/introspect', client, { token: String(tokens.access_token) }),
  );
  expect(introspected).toEqual({
    active: true,
    client_id: client.clientId,
    scope: expect.any(String),
    sub: '1',
    token_type: 'Bearer',
    exp: expect.any(Number),
    iat: expect.any(Number),
    aud: 'records-platform',
  });
  expect(Number(introspected.exp) - Number(introspected.iat)).toBe(3600);
  const own = await tokenRequest('/auth/oauth/revoke', client, { token: String(tokens.refresh_token) });
  expect(own.status).toBe(200);
  expect((await asBearer(String(tokens.access_token))).status).toBe(401);
  expect(
    await json(await tokenRequest('/auth/oauth/introspect', client, { token: String(tokens.access_token) })),
  ).toEqual({ active: false });
  expect(await json(await tokenRequest('/auth/oauth/introspect', client, { token: 'garbage' }))).toEqual({
    active: false,
  });
  expect((await tokenRequest('/auth/oauth/revoke', client, { token: 'garbage' })).status).toBe(200);
  const info = await fetch(`${platform.api}/auth/oauth/token-info?token=${String(tokens.access_token)}`);
  expect([info.status, (await json(info)).error]).toEqual([400, 'invalid_token']);
});

test('OA-38 deleting a client kills its tokens at once; OA-11 the discovery document names the endpoints', async () => {
  const client = await registerClient();
  const tokens = await json(await exchange(client, await codeFor(client)));
  expect((await asBearer(String(tokens.access_token))).status).toBe(200);
  expect((await platform.call('DELETE', `/auth/oauth/client/${client.clientId}`)).status).toBe(200);
  expect((await asBearer(String(tokens.access_token))).status).toBe(401);

  const metadata = await json(await fetch(`${platform.url}/.well-known/oauth-authorization-server`));
  expect(metadata).toMatchObject({
    issuer: platform.api,
    authorization_endpoint: `${platform.api}/auth/oauth/authorize`,
    token_endpoint: `${platform.api}/auth/oauth/token`,
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
  });
});

test('OA-29 a password change or a deactivation revokes the OAuth grants the user gave', async () => {
  const client = await registerClient();
  const member = await json(
    await platform.call('POST', '/user', {
      body: { email: 'oa29@example.com', name: 'Grantor', password: 'a long enough password' },
    }),
  );
  const memberToken = String(
    (await json(await platform.call('POST', `/auth/${String(member.id)}/token`, { body: { name: 'b' } })))
      .token,
  );
  const grantTokens = async () => {
    const answer = await fetch(
      `${platform.api}/auth/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT }).toString()}`,
      { headers: { Authorization: `Bearer ${memberToken}` }, redirect: 'manual' },
    );
    const code = new URL(answer.headers.get('location')!).searchParams.get('code')!;
    return json(await exchange(client, code));
  };
  const first = await grantTokens();
  expect((await asBearer(String(first.access_token))).status).toBe(200);
  await platform.call('PUT', `/user/${String(member.id)}/password`, {
    body: { password: 'another long password' },
  });
  expect((await asBearer(String(first.access_token))).status).toBe(401);
  const refresh = await tokenRequest('/auth/oauth/token', client, {
    grant_type: 'refresh_token',
    refresh_token: String(first.refresh_token),
  });
  expect(refresh.status).toBe(400);
  const second = await grantTokens();
  expect((await asBearer(String(second.access_token))).status).toBe(200);
  await platform.call('POST', `/user/${String(member.id)}/deactivate`);
  await platform.call('POST', `/user/${String(member.id)}/activate`);
  expect((await asBearer(String(second.access_token))).status).toBe(401);
});

test('OA-26 no grace period: R1→R2→R3, then R1, or R2 right after its rotation, is refused and the whole family dies', async () => {
  const client = await registerClient();
  const renew = (refreshToken: unknown) =>
    tokenRequest('/auth/oauth/token', client, {
      grant_type: 'refresh_token',
      refresh_token: String(refreshToken),
    });
  /** R1→R2→R3 with the access token of each step. */
  const family = async () => {
    const first = await json(await exchange(client, await codeFor(client)));
    const second = await json(await renew(first.refresh_token));
    const third = await json(await renew(second.refresh_token));
    expect(third.refresh_token).toMatch(/^rpr_/);
    return [first, second, third] as const;
  };
  const expectFamilyRevoked = async (tokens: readonly Json[]) => {
    for (const step of tokens) expect((await asBearer(String(step.access_token))).status).toBe(401);
    const latest = await renew(tokens[2]!.refresh_token);
    expect([latest.status, (await json(latest)).error]).toEqual([400, 'invalid_grant']);
  };

  const oldest = await family();
  const replayedR1 = await renew(oldest[0].refresh_token);
  expect([replayedR1.status, (await json(replayedR1)).error]).toEqual([400, 'invalid_grant']);
  await expectFamilyRevoked(oldest);

  // The immediate predecessor, at once: no grace for it either.
  const recent = await family();
  expect((await asBearer(String(recent[2].access_token))).status).toBe(200);
  const replayedR2 = await renew(recent[1].refresh_token);
  expect([replayedR2.status, (await json(replayedR2)).error]).toEqual([400, 'invalid_grant']);
  await expectFamilyRevoked(recent);
});

test('OA-22 client secrets are compared as SHA-256 digests with timingSafeEqual, and the stores hold no usable secret', async () => {
  const client = await registerClient();
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  const compare = jest.spyOn(nodeCrypto, 'timingSafeEqual');
  /** The timingSafeEqual calls one client authentication makes, as (presented, stored) digests. */
  const comparisonsFor = async (clientId: string, secret: string) => {
    compare.mockClear();
    const answer = await postForm(platform, '/auth/oauth/introspect', { clientId }, { token: 'x' }, secret);
    return {
      status: answer.status,
      calls: compare.mock.calls.map((call) =>
        call.map((view) => Buffer.from(view.buffer, view.byteOffset, view.byteLength)),
      ),
    };
  };
  try {
    const secret = client.clientSecret;
    const wrongFirst = `${secret[0] === 'A' ? 'B' : 'A'}${secret.slice(1)}`;
    const wrongLast = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    const right = await comparisonsFor(client.clientId, secret);
    const first = await comparisonsFor(client.clientId, wrongFirst);
    const last = await comparisonsFor(client.clientId, wrongLast);
    const unknown = await comparisonsFor('rpc_000000000000000000000000', wrongLast);
    expect([right.status, first.status, last.status, unknown.status]).toEqual([200, 401, 401, 401]);
    // One comparison each, of two 32-byte digests: the presented secret's SHA-256 against the stored one.
    expect(right.calls).toEqual([[digest(secret), digest(secret)]]);
    expect(first.calls).toEqual([[digest(wrongFirst), digest(secret)]]);
    expect(last.calls).toEqual([[digest(wrongLast), digest(secret)]]);
    expect(unknown.calls).toHaveLength(1);
    for (const call of [...first.calls, ...last.calls, ...unknown.calls])
      expect(call.map((buffer) => buffer.length)).toEqual([32, 32]);
  } finally {
    compare.mockRestore();
  }
  // The stores keep the digest only: a dump gives nothing to authenticate with.
  expect(filesHolding(platform.dataDir, client.clientSecret)).toEqual([]);
  expect(filesHolding(platform.dataDir, digest(client.clientSecret).toString('hex')).length).toBeGreaterThan(
    0,
  );
});

test('OA-12 no open redirector: no GET route of either API sends a browser to a URL given in a parameter', async () => {
  const client = await registerClient();
  const routes = routesOf(platform.running.services.app);
  const gets = [...new Set(routes.filter(([method]) => method === 'GET').map(([, path]) => path))];
  // Both APIs are in the tree (reads and the GETs that write), not just a few app-level routes.
  expect(gets).toEqual(
    expect.arrayContaining([
      '/api/auth/oauth/authorize',
      '/api/auth/google',
      '/api/auth/oauth/client/:clientId',
      '/api/record/:recordId',
      '/.well-known/oauth-authorization-server',
    ]),
  );
  expect(gets.length).toBeGreaterThan(40);
  const evil = 'https://evil.example/';
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client.clientId,
    state: 's',
    ...Object.fromEntries(
      ['redirect_uri', 'redirect', 'return_to', 'next', 'url', 'continue'].map((name) => [name, evil]),
    ),
  }).toString();
  const answers: Array<{ path: string; status: number; location: string | null }> = [];
  for (const route of gets) {
    const path = route.replace(/:\w+/g, '1').replace(/\*\w+/g, 'x');
    const credentials: Array<Record<string, string>> = [{ Authorization: `Bearer ${ADMIN_TOKEN}` }, {}];
    for (const headers of credentials) {
      const response = await fetch(`${platform.url}${path}?${query}`, { headers, redirect: 'manual' });
      await response.arrayBuffer();
      answers.push({ path, status: response.status, location: response.headers.get('location') });
    }
  }
  const redirected = answers.filter(({ location }) => location !== null && /evil\.example/i.test(location));
  expect(redirected).toEqual([]);
  expect(answers.filter(({ status }) => status === 500)).toEqual([]);
  // The authorization endpoint was asked with the unregistered redirect URI: 400, no redirect at all.
  expect(answers.filter(({ path }) => path === '/api/auth/oauth/authorize')).toEqual([
    { path: '/api/auth/oauth/authorize', status: 400, location: null },
    { path: '/api/auth/oauth/authorize', status: 400, location: null },
  ]);
});

test('OA-37 a regenerated secret replaces the old one at once', async () => {
  const client = await registerClient();
  const rotated = await json(
    await platform.call('PUT', `/auth/oauth/client/${client.clientId}`, { body: { regenerateSecret: true } }),
  );
  const refresh = { grant_type: 'refresh_token', refresh_token: 'rpr_not-a-token' };
  const old = await tokenRequest('/auth/oauth/token', client, refresh);
  expect([old.status, (await json(old)).error]).toEqual([401, 'invalid_client']);
  // The new secret authenticates the client: the request then fails on its made-up grant only.
  const fresh = await tokenRequest('/auth/oauth/token', client, refresh, String(rotated.clientSecret));
  expect([fresh.status, (await json(fresh)).error]).toEqual([400, 'invalid_grant']);
});

test('OA-34 introspection is for authenticated clients only, and each may make so many a minute', async () => {
  const client = await registerClient();
  const other = await registerClient();
  const tokens = await json(await exchange(client, await codeFor(client)));
  const introspect = (caller: Client, secret?: string) =>
    tokenRequest('/auth/oauth/introspect', caller, { token: String(tokens.access_token) }, secret);
  const stranger = await introspect(client, 'wrong-secret-'.repeat(4));
  expect([stranger.status, (await json(stranger)).error]).toEqual([401, 'invalid_client']);
  for (let call = 0; call < INTROSPECTIONS_PER_MINUTE; call++) {
    expect((await json(await introspect(client))).active).toBe(true);
  }
  const refused = await introspect(client);
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(await json(refused)).toMatchObject({ error: 'temporarily_unavailable' });
  // The allowance is the client's own: another client is still answered.
  expect((await json(await introspect(other))).active).toBe(true);
});
