import { generators, Issuer } from 'openid-client';
import { ADMIN_TOKEN, json, startPlatform, type TestPlatform } from '../support/platform';

jest.setTimeout(60_000);

let platform: TestPlatform;
const REDIRECT = 'http://127.0.0.1:8765/callback';

beforeAll(async () => {
  platform = await startPlatform();
});

afterAll(async () => {
  await platform.stop();
});

/**
 * A well-known OAuth client library (openid-client 5, used as a plain OAuth 2.0 client) drives the flow
 * against the running server: discovery, authorization code + PKCE, refresh, introspection, revocation.
 */
test('openid-client: discovery, code + PKCE with iss checked, refresh, introspect, revoke', async () => {
  const registered = await json(
    await platform.call('POST', '/auth/oauth/client', {
      body: { clientName: 'Independent', redirectUris: [REDIRECT], scope: 'record:read' },
    }),
  );
  const issuer = await Issuer.discover(`${platform.url}/.well-known/oauth-authorization-server`);
  expect(issuer.metadata.issuer).toBe(platform.api);
  const client = new issuer.Client({
    client_id: String(registered.clientId),
    client_secret: String(registered.clientSecret),
    redirect_uris: [REDIRECT],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  });

  const codeVerifier = generators.codeVerifier();
  const state = generators.state();
  const authorizationUrl = client.authorizationUrl({
    scope: 'record:read',
    state,
    code_challenge: generators.codeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  });
  // The user agent: signed in as the admin, it follows the authorization request to the redirect.
  const consent = await fetch(authorizationUrl, {
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    redirect: 'manual',
  });
  expect(consent.status).toBe(302);
  const params = client.callbackParams(consent.headers.get('location')!);
  const tokens = await client.oauthCallback(REDIRECT, params, { code_verifier: codeVerifier, state });
  expect(tokens.token_type?.toLowerCase()).toBe('bearer');
  expect(tokens.scope).toBe('record:read');
  expect(
    (await fetch(`${platform.api}/record`, { headers: { Authorization: `Bearer ${tokens.access_token!}` } }))
      .status,
  ).toBe(200);

  const renewed = await client.refresh(tokens.refresh_token!);
  expect(renewed.refresh_token).not.toBe(tokens.refresh_token);
  expect((await client.introspect(renewed.access_token!)).active).toBe(true);

  await client.revoke(renewed.refresh_token!, 'refresh_token');
  expect((await client.introspect(renewed.access_token!)).active).toBe(false);
  expect(
    (await fetch(`${platform.api}/record`, { headers: { Authorization: `Bearer ${renewed.access_token!}` } }))
      .status,
  ).toBe(401);
});
