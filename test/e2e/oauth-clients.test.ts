import { filesHolding, json, startPlatform, type Page, type TestPlatform } from '../support/platform';

jest.setTimeout(60_000);

let platform: TestPlatform;
type Client = Record<string, unknown>;

beforeAll(async () => {
  platform = await startPlatform();
});

afterAll(async () => {
  await platform.stop();
});

async function register(body: Record<string, unknown>): Promise<Client> {
  const response = await platform.call('POST', '/auth/oauth/client', { body });
  const answer = await json<Client>(response);
  expect({ status: response.status, answer }).toEqual({ status: 201, answer });
  return answer;
}

test('OA-37 a client is registered with a secret shown once; reads and lists never show it', async () => {
  const client = await register({ clientName: 'CRM sync', redirectUris: ['https://crm.example/callback'] });
  expect(client).toEqual({
    clientId: expect.stringMatching(/^rpc_[0-9a-f]{24}$/),
    clientName: 'CRM sync',
    redirectUris: ['https://crm.example/callback'],
    scope: '',
    grantTypes: ['authorization_code', 'refresh_token'],
    clientSecret: expect.stringMatching(/^rpcs_[A-Za-z0-9_-]{43}$/),
  });
  const read = await json<Client>(
    await platform.call('GET', `/auth/oauth/client/${String(client.clientId)}`),
  );
  expect(read).toMatchObject({ clientId: client.clientId, clientName: 'CRM sync' });
  expect(read).not.toHaveProperty('clientSecret');
  const list = await json<Page<Client>>(await platform.call('GET', '/auth/oauth/client'));
  expect(list.items.map((item) => item.clientId)).toContain(client.clientId);
  expect(JSON.stringify(list)).not.toContain('secret');
  expect(filesHolding(platform.dataDir, String(client.clientSecret))).toEqual([]);
});

test('OA-39 redirect URIs: up to 5, https or loopback http, no fragment, user information or wildcard', async () => {
  const client = await register({
    clientName: 'Local tool',
    redirectUris: ['http://127.0.0.1:8765/cb', 'http://[::1]/cb', 'http://localhost:3000/cb'],
    scope: 'record:read record:write',
    grantTypes: ['authorization_code'],
  });
  expect(client).toMatchObject({ scope: 'record:read record:write', grantTypes: ['authorization_code'] });
  for (const redirectUris of [
    ['http://crm.example/cb'],
    ['https://crm.example/cb#frag'],
    ['https://user:pass@crm.example/cb'],
    ['https://*.crm.example/cb'],
    ['not a url'],
    [],
    ['https://a.example/1', 'https://a.example/1'],
    Array.from({ length: 6 }, (_, index) => `https://a.example/${index}`),
  ]) {
    const response = await platform.call('POST', '/auth/oauth/client', {
      body: { clientName: 'x', redirectUris },
    });
    expect({ redirectUris, status: response.status }).toEqual({ redirectUris, status: 400 });
  }
  for (const body of [
    { clientName: '', redirectUris: ['https://a.example/cb'] },
    { clientName: 'x', redirectUris: ['https://a.example/cb'], grantTypes: ['implicit'] },
    { clientName: 'x', redirectUris: ['https://a.example/cb'], scope: 'two  spaces' },
    { clientName: 'x', redirectUris: ['https://a.example/cb'], extra: true },
  ])
    expect((await platform.call('POST', '/auth/oauth/client', { body })).status).toBe(400);
});

test('changes: settings, a chosen secret (32+ characters), a regenerated secret; delete removes the client', async () => {
  const client = await register({ clientName: 'Rotating', redirectUris: ['https://r.example/cb'] });
  const path = `/auth/oauth/client/${String(client.clientId)}`;
  const renamed = await json<Client>(
    await platform.call('PUT', path, { body: { clientName: 'Rotated', scope: 'a b' } }),
  );
  expect(renamed).toMatchObject({ clientName: 'Rotated', scope: 'a b' });
  expect(renamed).not.toHaveProperty('clientSecret');
  const rotated = await json<Client>(await platform.call('PUT', path, { body: { regenerateSecret: true } }));
  expect(rotated.clientSecret).toMatch(/^rpcs_/);
  expect(rotated.clientSecret).not.toBe(client.clientSecret);
  expect((await platform.call('PUT', path, { body: { clientSecret: 'x'.repeat(40) } })).status).toBe(200);
  for (const body of [
    { clientSecret: 'short' },
    { clientSecret: 'x'.repeat(40), regenerateSecret: true },
    { redirectUris: ['http://evil.example/cb'] },
  ])
    expect((await platform.call('PUT', path, { body })).status).toBe(400);
  expect((await platform.call('DELETE', path)).status).toBe(200);
  expect((await platform.call('GET', path)).status).toBe(404);
  expect((await platform.call('PUT', path, { body: { clientName: 'again' } })).status).toBe(404);
  expect((await platform.call('GET', '/auth/oauth/client/rpc_000000000000000000000000')).status).toBe(404);
  expect((await platform.call('PUT', '/auth/oauth/client/not-a-client', { body: {} })).status).toBe(400);
});

test('OA-40 clients are managed with the oauthClient right', async () => {
  const member = await json<Client>(
    await platform.call('POST', '/user', {
      body: { email: 'member@example.com', name: 'Member', permissions: { record: ['read'] } },
    }),
  );
  const token = await json<Client>(
    await platform.call('POST', `/auth/${String(member.id)}/token`, { body: { name: 't' } }),
  );
  const headers = { Authorization: `Bearer ${String(token.token)}` };
  expect((await platform.call('GET', '/auth/oauth/client', { headers })).status).toBe(403);
  expect(
    (
      await platform.call('POST', '/auth/oauth/client', {
        headers,
        body: { clientName: 'x', redirectUris: ['https://a.example/cb'] },
      })
    ).status,
  ).toBe(403);
});

test('client registrations and changes are in the audit trail, without their secret hashes', async () => {
  const client = await register({ clientName: 'Audited', redirectUris: ['https://audited.example/cb'] });
  await platform.call('PUT', `/auth/oauth/client/${String(client.clientId)}`, {
    body: { regenerateSecret: true },
  });
  const audit = await json<Page<Client>>(
    await platform.call(
      'GET',
      `/audit?filter=streamId=oauthClient-test.${String(client.clientId)}&order=position;ASC`,
    ),
  );
  expect(audit.items.map((entry) => [entry.type, entry.userId])).toEqual([
    ['OAuthClientRegistered', '1'],
    ['OAuthClientSecretSet', '1'],
  ]);
  expect(JSON.stringify(audit)).not.toContain('secretHash');
});
