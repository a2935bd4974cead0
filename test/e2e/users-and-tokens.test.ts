import {
  ADMIN_TOKEN,
  filesHolding,
  json,
  startPlatform,
  type Entity,
  type Page,
  type TestPlatform,
} from '../support/platform';

jest.setTimeout(60_000);

let platform: TestPlatform;

/** A call with the given bearer token (the admin's when none). */
function as(token: string, method: string, path: string, body?: unknown): Promise<Response> {
  return platform.call(method, path, {
    headers: { Authorization: `Bearer ${token}` },
    ...(body !== undefined && { body }),
  });
}

async function ok<T = Entity>(response: Response, status = 200): Promise<T> {
  const body = await json<T>(response);
  expect({ status: response.status, body }).toEqual({ status, body });
  return body;
}

let userCount = 0;
async function newUser(fields: Record<string, unknown> = {}): Promise<Entity> {
  userCount += 1;
  return ok(
    await as(ADMIN_TOKEN, 'POST', '/user', {
      email: `user${userCount}@example.com`,
      name: `User ${userCount}`,
      ...fields,
    }),
    201,
  );
}

async function newToken(
  userId: number,
  fields: Record<string, unknown> = {},
  by = ADMIN_TOKEN,
): Promise<Entity> {
  return ok(await as(by, 'POST', `/auth/${userId}/token`, { name: 'integration', ...fields }), 201);
}

beforeAll(async () => {
  platform = await startPlatform();
});

afterAll(async () => {
  await platform.stop();
});

describe('users', () => {
  test('administrators create, read, change, deactivate and activate users; every change is an event', async () => {
    const user = await newUser({ password: 'correct horse battery', permissions: { record: ['read'] } });
    expect(user).toEqual({
      id: user.id,
      email: user.email,
      name: user.name,
      role: 'member',
      active: true,
      permissions: { record: ['read'] },
    });
    const read = await ok(await as(ADMIN_TOKEN, 'GET', `/user/${user.id}`));
    expect(read).toMatchObject({ id: user.id, active: true, permissions: { record: ['read'] } });
    expect(JSON.stringify(read)).not.toContain('scrypt');

    await ok(await as(ADMIN_TOKEN, 'PUT', `/user/${user.id}`, { name: 'Renamed', role: 'admin' }));
    await ok(await as(ADMIN_TOKEN, 'POST', `/user/${user.id}/deactivate`));
    expect(await ok(await as(ADMIN_TOKEN, 'GET', `/user/${user.id}`))).toMatchObject({
      name: 'Renamed',
      role: 'admin',
      active: false,
    });
    await ok(await as(ADMIN_TOKEN, 'POST', `/user/${user.id}/activate`));

    const list = await ok<Page>(await as(ADMIN_TOKEN, 'GET', '/user?filter=active=true&order=id;ASC'));
    expect(list.items.map((item) => item.id)).toContain(user.id);
    const audit = await ok<Page<Record<string, unknown>>>(
      await as(ADMIN_TOKEN, 'GET', `/audit?filter=streamId=user-test.${String(user.id)}&order=position;ASC`),
    );
    expect(audit.items.map((entry) => entry.type)).toEqual([
      'UserRegistered',
      'UserChanged',
      'UserDeactivated',
      'UserActivated',
    ]);
  });

  test('an email belongs to one user (any case); bad input is a 400 naming the field', async () => {
    const user = await newUser();
    const again = await as(ADMIN_TOKEN, 'POST', '/user', {
      email: String(user.email).toUpperCase(),
      name: 'Twin',
    });
    expect(again.status).toBe(409);
    expect(
      (await as(ADMIN_TOKEN, 'POST', '/user', { email: 'admin@example.com', name: 'Admin twin' })).status,
    ).toBe(409);
    for (const body of [
      { email: 'not-an-email', name: 'x' },
      { email: 'short@example.com', name: 'x', password: 'short' },
      { email: 'role@example.com', name: 'x', role: 'owner' },
      { email: 'extra@example.com', name: 'x', extra: true },
      { email: 'perm@example.com', name: 'x', permissions: { record: ['write'] } },
    ]) {
      const response = await as(ADMIN_TOKEN, 'POST', '/user', body);
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
    }
  });

  test('members do not manage users, and administrators cannot lock themselves out', async () => {
    const member = await newUser();
    const token = String((await newToken(Number(member.id))).token);
    expect((await as(token, 'POST', '/user', { email: 'nope@example.com', name: 'Nope' })).status).toBe(403);
    expect((await as(token, 'GET', '/user')).status).toBe(403);
    expect((await as(token, 'GET', '/user/1')).status).toBe(403);
    expect((await as(token, 'GET', `/user/${member.id}`)).status).toBe(200);
    expect((await as(token, 'PUT', `/user/${member.id}`, { role: 'admin' })).status).toBe(403);
    expect((await as(ADMIN_TOKEN, 'POST', '/user/1/deactivate')).status).toBe(409);
    expect((await as(ADMIN_TOKEN, 'PUT', '/user/1', { role: 'member' })).status).toBe(409);
  });

  test("passwords: users change their own with the current one; administrators set anyone's", async () => {
    const member = await newUser({ password: 'first password 1' });
    const token = String((await newToken(Number(member.id))).token);
    const change = (by: string, body: unknown) => as(by, 'PUT', `/user/${member.id}/password`, body);
    expect((await change(token, { password: 'second password 2' })).status).toBe(403);
    expect(
      (await change(token, { password: 'second password 2', currentPassword: 'wrong one' })).status,
    ).toBe(403);
    expect(
      (await change(token, { password: 'second password 2', currentPassword: 'first password 1' })).status,
    ).toBe(200);
    expect((await change(ADMIN_TOKEN, { password: 'third password 3' })).status).toBe(200);
    expect((await change(ADMIN_TOKEN, { password: 'short' })).status).toBe(400);
    const other = await newUser();
    expect(
      (await as(token, 'PUT', `/user/${other.id}/password`, { password: 'not yours at all' })).status,
    ).toBe(403);
  });
});

describe('private API tokens', () => {
  test('TK-01 tokens are prefixed, 256-bit, and carry a checksum: a mistyped one is refused', async () => {
    const member = await newUser();
    const created = await newToken(Number(member.id));
    const value = String(created.token);
    expect(value).toMatch(/^rpt_[0-9A-Za-z]{49}$/);
    expect((await as(value, 'GET', `/user/${member.id}`)).status).toBe(200);
    const last = value.at(-10) === 'a' ? 'b' : 'a';
    const typo = value.slice(0, -10) + last + value.slice(-9);
    expect((await as(typo, 'GET', `/user/${member.id}`)).status).toBe(401);
  });

  test('TK-02 the value is shown once; only its hash is stored; later the prefix and last 4 are shown', async () => {
    const member = await newUser();
    const created = await newToken(Number(member.id), { name: 'CI' });
    const value = String(created.token);
    expect(created).toMatchObject({
      name: 'CI',
      prefix: 'rpt_',
      last4: value.slice(-4),
      permissions: null,
      expiresAt: null,
    });
    const listed = await ok<Page>(await as(ADMIN_TOKEN, 'GET', `/auth/${member.id}/token`));
    expect(listed.items).toEqual([
      expect.objectContaining({ id: created.id, name: 'CI', prefix: 'rpt_', last4: value.slice(-4) }),
    ]);
    expect(JSON.stringify(listed)).not.toContain(value);
    const one = await ok(await as(ADMIN_TOKEN, 'GET', `/auth/${member.id}/token/${String(created.id)}`));
    expect(JSON.stringify(one)).not.toContain(value);
    // Nothing the platform stored (event log, read models, stream) holds the value.
    expect(filesHolding(platform.dataDir, value)).toEqual([]);
    // The scan sees what is stored: the admin's address is in the event log.
    expect(filesHolding(platform.dataDir, 'admin@example.com')).not.toEqual([]);
  });

  test('TK-03 a token is found by its hash: a token of another user or a made-up one is worth nothing', async () => {
    expect((await as('rpt_' + 'x'.repeat(60), 'GET', '/record')).status).toBe(401);
    expect((await as('not-even-close', 'GET', '/record')).status).toBe(401);
  });

  test('TK-04 per-module rights apply on every route, files and labels included; never beyond the owner', async () => {
    const member = await newUser({
      permissions: {
        record: ['read', 'update'],
        label: ['read'],
        token: ['create', 'read'],
      },
    });
    const readOnly = String((await newToken(Number(member.id), { permissions: { record: ['read'] } })).token);
    const space = await ok(await as(ADMIN_TOKEN, 'POST', '/space', { name: 'Rights' }), 201);
    const module = await ok(await as(ADMIN_TOKEN, 'POST', '/module', { spaceId: space.id, name: 'M' }), 201);
    const record = await ok(
      await as(ADMIN_TOKEN, 'POST', '/record', { moduleId: module.id, name: 'R' }),
      201,
    );
    const label = await ok(await as(ADMIN_TOKEN, 'POST', '/label', { name: 'L' }), 201);

    expect((await as(readOnly, 'GET', `/record/${record.id}`)).status).toBe(200);
    expect((await as(readOnly, 'GET', '/record')).status).toBe(200);
    expect((await as(readOnly, 'PUT', `/record/${record.id}`, { name: 'No' })).status).toBe(403);
    expect((await as(readOnly, 'POST', '/record', { moduleId: module.id, name: 'No' })).status).toBe(403);
    expect((await as(readOnly, 'GET', '/label')).status).toBe(403);
    expect((await as(readOnly, 'POST', `/record/${record.id}/label/${label.id}`)).status).toBe(403);
    const upload = await fetch(`${platform.api}/record/${record.id}/file?name=a.txt`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${readOnly}`, 'Content-Type': 'text/plain' },
      body: 'x',
    });
    expect(upload.status).toBe(403);
    expect((await as(readOnly, 'GET', `/record/${record.id}/file`)).status).toBe(200);
    expect((await as(readOnly, 'GET', '/space')).status).toBe(403);

    // More than the owner has, or than the credential that makes it: refused.
    const beyond = await as(ADMIN_TOKEN, 'POST', `/auth/${member.id}/token`, {
      name: 'x',
      permissions: { record: ['delete'] },
    });
    expect(beyond.status).toBe(403);
    expect(JSON.stringify(await json(beyond))).toContain('record:delete');
    // This token may make tokens, but it may only read records: what it makes cannot update them.
    const maker = String(
      (await newToken(Number(member.id), { permissions: { record: ['read'], token: ['create'] } })).token,
    );
    expect(
      (
        await as(maker, 'POST', `/auth/${member.id}/token`, {
          name: 'y',
          permissions: { record: ['read', 'update'] },
        })
      ).status,
    ).toBe(403);
    expect(
      (await as(maker, 'POST', `/auth/${member.id}/token`, { name: 'y', permissions: { record: ['read'] } }))
        .status,
    ).toBe(201);
    // A token without its own rights (null) follows its owner's, whatever they become, at once.
    const asOwner = String((await newToken(Number(member.id))).token);
    expect((await as(asOwner, 'PUT', `/record/${record.id}`, { name: 'Yes' })).status).toBe(200);
    await ok(await as(ADMIN_TOKEN, 'PUT', `/user/${member.id}`, { permissions: { record: ['read'] } }));
    expect((await as(asOwner, 'PUT', `/record/${record.id}`, { name: 'Not any more' })).status).toBe(403);
    expect((await as(asOwner, 'GET', `/record/${record.id}`)).status).toBe(200);
  });

  test("TK-05 only the user and administrators manage a user's tokens", async () => {
    const alice = await newUser();
    const bob = await newUser();
    const aliceToken = String((await newToken(Number(alice.id))).token);
    const bobToken = await newToken(Number(bob.id));
    expect((await as(aliceToken, 'POST', `/auth/${bob.id}/token`, { name: 'mine now' })).status).toBe(403);
    expect((await as(aliceToken, 'GET', `/auth/${bob.id}/token`)).status).toBe(403);
    expect((await as(aliceToken, 'GET', `/auth/${bob.id}/token/${String(bobToken.id)}`)).status).toBe(403);
    expect(
      (await as(aliceToken, 'PUT', `/auth/${bob.id}/token/${String(bobToken.id)}`, { name: 'x' })).status,
    ).toBe(403);
    expect((await as(aliceToken, 'DELETE', `/auth/${bob.id}/token/${String(bobToken.id)}`)).status).toBe(403);
    expect((await as(aliceToken, 'POST', `/auth/${alice.id}/token`, { name: 'own' })).status).toBe(201);
    expect(
      (await as(ADMIN_TOKEN, 'PUT', `/auth/${bob.id}/token/${String(bobToken.id)}`, { name: 'renamed' }))
        .status,
    ).toBe(200);
    // A token id of another user is not found under this one.
    expect((await as(ADMIN_TOKEN, 'GET', `/auth/${alice.id}/token/${String(bobToken.id)}`)).status).toBe(404);
    expect((await as(ADMIN_TOKEN, 'DELETE', `/auth/${alice.id}/token/${String(bobToken.id)}`)).status).toBe(
      404,
    );
  });

  test('TK-06 expiry, last use and a call counter; revocation and deactivation apply on the next request', async () => {
    const member = await newUser();
    const created = await newToken(Number(member.id));
    const value = String(created.token);
    expect(
      await ok(await as(ADMIN_TOKEN, 'GET', `/auth/${member.id}/token/${String(created.id)}`)),
    ).toMatchObject({ lastUsedAt: null, calls: 0 });
    await as(value, 'GET', `/user/${member.id}`);
    await as(value, 'GET', `/user/${member.id}`);
    const used = await ok(await as(ADMIN_TOKEN, 'GET', `/auth/${member.id}/token/${String(created.id)}`));
    expect(used).toMatchObject({ calls: 2, lastUsedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });

    await ok(await as(ADMIN_TOKEN, 'POST', `/user/${member.id}/deactivate`));
    expect((await as(value, 'GET', `/user/${member.id}`)).status).toBe(401);
    // A deactivation is final for credentials: reactivating gives back the right to sign in, not the token.
    await ok(await as(ADMIN_TOKEN, 'POST', `/user/${member.id}/activate`));
    expect((await as(value, 'GET', `/user/${member.id}`)).status).toBe(401);
    expect((await as(ADMIN_TOKEN, 'GET', `/auth/${member.id}/token/${String(created.id)}`)).status).toBe(404);

    const expiring = await newToken(Number(member.id), {
      expiresAt: new Date(Date.now() + 1500).toISOString(),
    });
    expect((await as(String(expiring.token), 'GET', `/user/${member.id}`)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    expect((await as(String(expiring.token), 'GET', `/user/${member.id}`)).status).toBe(401);
    const inLowerCase = await newToken(Number(member.id), { expiresAt: '2999-01-01t00:00:00+01:00' });
    expect(inLowerCase.expiresAt).toBe('2998-12-31T23:00:00.000Z');
    for (const expiresAt of ['2000-01-01T00:00:00Z', 'tomorrow', '2999-02-29T00:00:00Z'])
      expect(
        (await as(ADMIN_TOKEN, 'POST', `/auth/${member.id}/token`, { name: 'x', expiresAt })).status,
      ).toBe(400);
  });

  test("TK-05 an unknown user's tokens are a 404, like every unknown id; a known user's empty list a 200", async () => {
    for (const userId of ['99999', '2147483647']) {
      const response = await as(ADMIN_TOKEN, 'GET', `/auth/${userId}/token`);
      expect(response.status).toBe(404);
      expect(await json(response)).toMatchObject({ message: expect.stringContaining(`user ${userId}`) });
    }
    const member = await newUser();
    expect(await ok(await as(ADMIN_TOKEN, 'GET', `/auth/${member.id}/token`))).toMatchObject({ items: [] });
  });

  test('TK-07 a token counts only in a header, never in the query string', async () => {
    const response = await fetch(`${platform.api}/record?access_token=${ADMIN_TOKEN}&token=${ADMIN_TOKEN}`);
    expect(response.status).toBe(401);
  });

  test('TK-08 token creation, change and deletion are in the audit trail, with who did them', async () => {
    const member = await newUser();
    const created = await newToken(Number(member.id));
    await ok(
      await as(ADMIN_TOKEN, 'PUT', `/auth/${member.id}/token/${String(created.id)}`, { name: 'renamed' }),
    );
    await ok(await as(ADMIN_TOKEN, 'DELETE', `/auth/${member.id}/token/${String(created.id)}`));
    const audit = await ok<Page<Record<string, unknown>>>(
      await as(
        ADMIN_TOKEN,
        'GET',
        `/audit?filter=streamId=user-test.${String(member.id)}&order=position;ASC`,
      ),
    );
    expect(audit.items.map((entry) => [entry.type, entry.userId])).toEqual([
      ['UserRegistered', '1'],
      ['ApiTokenIssued', '1'],
      ['ApiTokenChanged', '1'],
      ['ApiTokenRevoked', '1'],
    ]);
  });

  test('a repeated token request with the same Idempotency-Key does not mint a second token', async () => {
    const member = await newUser();
    const send = () =>
      platform.call('POST', `/auth/${member.id}/token`, {
        body: { name: 'once' },
        headers: { 'Idempotency-Key': `token-${String(member.id)}` },
      });
    expect((await send()).status).toBe(201);
    expect((await send()).status).toBe(409);
    expect((await ok<Page>(await as(ADMIN_TOKEN, 'GET', `/auth/${member.id}/token`))).meta.total).toBe(1);
  });

  test('bad token requests are 400s naming the problem', async () => {
    const member = await newUser();
    for (const body of [
      {},
      { name: '' },
      { name: 'x', permissions: { record: ['erase'] } },
      { name: 'x', extra: 1 },
    ])
      expect((await as(ADMIN_TOKEN, 'POST', `/auth/${member.id}/token`, body)).status).toBe(400);
    expect((await as(ADMIN_TOKEN, 'GET', `/auth/${member.id}/token/not-a-uuid`)).status).toBe(400);
    expect((await as(ADMIN_TOKEN, 'POST', '/auth/999999/token', { name: 'x' })).status).toBe(404);
  });
});

test('field history answers each user with the changes they made, and the credential they used', async () => {
  const space = await ok(await as(ADMIN_TOKEN, 'POST', '/space', { name: 'History' }), 201);
  const module = await ok(
    await as(ADMIN_TOKEN, 'POST', '/module', { spaceId: space.id, name: 'Deals' }),
    201,
  );
  await ok(
    await as(ADMIN_TOKEN, 'POST', '/field', { moduleId: module.id, name: 'Stage', type: 'text' }),
    201,
  );
  const record = await ok(
    await as(ADMIN_TOKEN, 'POST', '/record', { moduleId: module.id, name: 'Deal' }),
    201,
  );
  const writer = await newUser({ permissions: { record: ['read', 'update'] } });
  const writerToken = await newToken(Number(writer.id));
  await ok(await as(String(writerToken.token), 'PUT', `/record/${record.id}`, { fields: { stage: 'Won' } }));
  await ok(await as(ADMIN_TOKEN, 'PUT', `/record/${record.id}`, { fields: { stage: 'Lost' } }));

  const history = async (token: string) =>
    (
      await ok<Page<Record<string, unknown>>>(
        await as(token, 'GET', `/auth/field-history/${module.id}/${record.id}`),
      )
    ).items;
  expect(await history(String(writerToken.token))).toEqual([
    expect.objectContaining({
      field: 'fields.stage',
      oldValue: null,
      newValue: 'Won',
      userId: String(writer.id),
      credentialId: `token:${String(writerToken.id)}`,
    }),
  ]);
  const adminChanges = await history(ADMIN_TOKEN);
  expect(adminChanges.map((change) => [change.field, change.newValue])).toEqual([
    ['fields.stage', 'Lost'],
    ['name', 'Deal'],
  ]);
  expect(adminChanges.every((change) => change.userId === '1')).toBe(true);
});

test('own account: a member without user or token rights still manages their own password and tokens, unless the credential is narrowed', async () => {
  const member = await newUser({ password: 'first password 1', permissions: { record: ['read'] } });
  const full = String((await newToken(Number(member.id))).token);
  const narrow = String((await newToken(Number(member.id), { permissions: { record: ['read'] } })).token);
  expect((await as(full, 'GET', `/user/${member.id}`)).status).toBe(200);
  expect((await as(full, 'GET', `/auth/${member.id}/token`)).status).toBe(200);
  expect(
    (await as(full, 'POST', `/auth/${member.id}/token`, { name: 'own', permissions: { record: ['read'] } }))
      .status,
  ).toBe(201);
  expect(
    (
      await as(full, 'PUT', `/user/${member.id}/password`, {
        password: 'second password 2',
        currentPassword: 'first password 1',
      })
    ).status,
  ).toBe(200);
  expect((await as(narrow, 'GET', `/user/${member.id}`)).status).toBe(403);
  expect((await as(narrow, 'POST', `/auth/${member.id}/token`, { name: 'no' })).status).toBe(403);
  expect(
    (
      await as(narrow, 'PUT', `/user/${member.id}/password`, {
        password: 'third password 3',
        currentPassword: 'second password 2',
      })
    ).status,
  ).toBe(403);
  // Not another account, whatever the credential.
  expect((await as(full, 'GET', '/user/1')).status).toBe(403);
});
