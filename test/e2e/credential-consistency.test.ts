import type { ChildProcess } from 'node:child_process';
import { exited, startServiceProcess } from '../support/child-platform';
import { ADMIN_TOKEN, json, startPlatform, type TestPlatform } from '../support/platform';

/**
 * DESIGN §6: an answer about a credential sees every write acknowledged before its request arrived. Each
 * loop writes on the command side and at once asks the query side, many times over, and counts wrong answers:
 * with the whole platform in one process, and with a query API in a process of its own on the same data.
 */
jest.setTimeout(300_000);

const ROUNDS = 200;
const REDIRECT = 'http://127.0.0.1/callback';
const PASSWORD = 'a long enough password';

interface Sides {
  /** Where writes go (the whole platform). */
  readonly commands: string;
  /** Where reads go: the same platform, or a query-api process of its own. */
  readonly queries: string;
}

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
// Two introspections a round: above the default allowance of one resource server (OA-34).
const PLATFORM_ENV = { TRUST_PROXY_HOPS: '1', OAUTH_INTROSPECTIONS_PER_MINUTE: '100000' };

function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  return fetch(`${base}/api${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    redirect: 'manual',
  });
}

async function created(response: Response): Promise<Record<string, unknown>> {
  expect([200, 201]).toContain(response.status);
  return json(response);
}

/** A client, a code authorized by the admin, and the access token it is exchanged for. */
async function issueToken(commands: string) {
  const client = (await created(
    await call(commands, 'POST', '/auth/oauth/client', admin, {
      clientName: 'Loop',
      redirectUris: [REDIRECT],
      scope: 'record:read',
    }),
  )) as { clientId: string; clientSecret: string };
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: REDIRECT,
  });
  const authorized = await call(commands, 'GET', `/auth/oauth/authorize?${query.toString()}`, admin);
  const code = new URL(authorized.headers.get('location')!).searchParams.get('code')!;
  const exchanged = await fetch(`${commands}/api/auth/oauth/token`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }).toString(),
  });
  expect(exchanged.status).toBe(200);
  const { access_token: accessToken } = await json<{ access_token: string }>(exchanged);
  return { client, accessToken };
}

/** OA-35/OA-36: a resource server's introspection of `token`. */
async function introspect(
  commands: string,
  caller: { clientId: string; clientSecret: string },
  token: string,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${commands}/api/auth/oauth/introspect`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: `Basic ${Buffer.from(`${caller.clientId}:${caller.clientSecret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ token }).toString(),
  });
  expect(response.status).toBe(200);
  return json(response);
}

const tokenInfo = (queries: string, token: string) =>
  call(queries, 'GET', `/auth/oauth/token-info?token=${encodeURIComponent(token)}`, {});

/** Runs `round` ROUNDS times; the descriptions of the wrong answers (none expected). */
async function loop(round: (index: number) => Promise<string[]>): Promise<string[]> {
  const wrong: string[] = [];
  for (let index = 0; index < ROUNDS; index++) wrong.push(...(await round(index)));
  return wrong;
}

function suite(name: string, start: () => Promise<{ sides: Sides; stop: () => Promise<void> }>) {
  describe(name, () => {
    let sides: Sides;
    let stop: () => Promise<void>;
    let memberId: number;
    let resourceServer: { clientId: string; clientSecret: string };

    beforeAll(async () => {
      ({ sides, stop } = await start());
      resourceServer = (await created(
        await call(sides.commands, 'POST', '/auth/oauth/client', admin, {
          clientName: 'Resource server',
          redirectUris: [REDIRECT],
          scope: 'record:read',
        }),
      )) as { clientId: string; clientSecret: string };
      const member = await created(
        await call(sides.commands, 'POST', '/user', admin, {
          email: 'loop@example.com',
          name: 'Loop',
          password: PASSWORD,
        }),
      );
      memberId = Number(member.id);
    });
    afterAll(() => stop());

    test('OA-38: issue token → token-info, introspect, userinfo, grants → delete client → the same, never a wrong answer', async () => {
      const wrong = await loop(async (index) => {
        const { client, accessToken } = await issueToken(sides.commands);
        const found: string[] = [];
        const fresh = await tokenInfo(sides.queries, accessToken);
        if (fresh.status !== 200) found.push(`${index}: a fresh token was reported ${fresh.status}`);
        const asBearer = await call(sides.queries, 'GET', '/auth/oauth/userinfo', {
          Authorization: `Bearer ${accessToken}`,
        });
        if (asBearer.status !== 200) found.push(`${index}: userinfo answered ${asBearer.status}`);
        const grants = await json<{ items: { clientId: string }[] }>(
          await call(sides.queries, 'GET', '/auth/oauth/grant', admin),
        );
        if (!grants.items.some((grant) => grant.clientId === client.clientId))
          found.push(`${index}: the consent given is not listed among the grants`);
        const introspected = await introspect(sides.commands, resourceServer, accessToken);
        if (introspected.active !== true) found.push(`${index}: introspection called a fresh token inactive`);
        expect(
          (await call(sides.commands, 'DELETE', `/auth/oauth/client/${client.clientId}`, admin)).status,
        ).toBe(200);
        const gone = await tokenInfo(sides.queries, accessToken);
        if (gone.status !== 400) found.push(`${index}: a deleted client's token was reported ${gone.status}`);
        const refused = await call(sides.queries, 'GET', '/auth/oauth/userinfo', {
          Authorization: `Bearer ${accessToken}`,
        });
        if (refused.status !== 401)
          found.push(`${index}: a deleted client's token was let in (${refused.status})`);
        const inactive = await introspect(sides.commands, resourceServer, accessToken);
        if (inactive.active !== false)
          found.push(`${index}: introspection called a deleted client's token active`);
        return found;
      });
      expect(wrong).toEqual([]);
    });

    test('OA-33: revoke a grant → token-info and the bearer check refuse it at once', async () => {
      const wrong = await loop(async (index) => {
        const { accessToken } = await issueToken(sides.commands);
        const grants = await json<{ items: { grantId: string }[] }>(
          await call(sides.queries, 'GET', '/auth/oauth/grant', admin),
        );
        const grantId = grants.items[0]!.grantId;
        expect((await call(sides.commands, 'DELETE', `/auth/oauth/grant/${grantId}`, admin)).status).toBe(
          200,
        );
        const found: string[] = [];
        const info = await tokenInfo(sides.queries, accessToken);
        if (info.status !== 400) found.push(`${index}: a revoked grant's token was reported ${info.status}`);
        const listed = await json<{ items: { grantId: string }[] }>(
          await call(sides.queries, 'GET', '/auth/oauth/grant', admin),
        );
        if (listed.items.some((grant) => grant.grantId === grantId))
          found.push(`${index}: a revoked grant is still listed`);
        const used = await call(sides.queries, 'GET', '/record', { Authorization: `Bearer ${accessToken}` });
        if (used.status !== 401) found.push(`${index}: a revoked grant's token was let in (${used.status})`);
        return found;
      });
      expect(wrong).toEqual([]);
    });

    test('TK-06: issue an API token → use it and list it → revoke it → refused and unlisted', async () => {
      const wrong = await loop(async (index) => {
        const token = await created(
          await call(sides.commands, 'POST', `/auth/${memberId}/token`, admin, { name: `loop ${index}` }),
        );
        const bearer = { Authorization: `Bearer ${String(token.token)}` };
        const found: string[] = [];
        const used = await call(sides.queries, 'GET', `/user/${memberId}`, bearer);
        if (used.status !== 200) found.push(`${index}: a fresh API token was refused (${used.status})`);
        const listed = await call(sides.queries, 'GET', `/auth/${memberId}/token/${String(token.id)}`, admin);
        if (listed.status !== 200) found.push(`${index}: a fresh API token is not listed (${listed.status})`);
        expect(
          (await call(sides.commands, 'DELETE', `/auth/${memberId}/token/${String(token.id)}`, admin)).status,
        ).toBe(200);
        const refused = await call(sides.queries, 'GET', `/user/${memberId}`, bearer);
        if (refused.status !== 401)
          found.push(`${index}: a revoked API token was let in (${refused.status})`);
        const unlisted = await call(
          sides.queries,
          'GET',
          `/auth/${memberId}/token/${String(token.id)}`,
          admin,
        );
        if (unlisted.status !== 404) found.push(`${index}: a revoked API token is still listed`);
        return found;
      });
      expect(wrong).toEqual([]);
    });

    test('SE-02: sign in → use the session → sign out → refused', async () => {
      const wrong = await loop(async (index) => {
        const signedIn = await created(
          await call(
            sides.commands,
            'POST',
            '/auth',
            { 'X-Forwarded-For': `10.9.${index % 250}.1` },
            { email: 'loop@example.com', password: PASSWORD },
          ),
        );
        const bearer = { Authorization: `Bearer ${String(signedIn.session)}` };
        const found: string[] = [];
        const used = await call(sides.queries, 'GET', `/user/${memberId}`, bearer);
        if (used.status !== 200) found.push(`${index}: a fresh session was refused (${used.status})`);
        expect((await call(sides.commands, 'DELETE', '/auth', bearer)).status).toBe(200);
        const refused = await call(sides.queries, 'GET', `/user/${memberId}`, bearer);
        if (refused.status !== 401) found.push(`${index}: an ended session was let in (${refused.status})`);
        return found;
      });
      expect(wrong).toEqual([]);
    });

    test('TK-06: deactivate → the token is refused; reactivate → the old token stays refused', async () => {
      const wrong = await loop(async (index) => {
        const token = await created(
          await call(sides.commands, 'POST', `/auth/${memberId}/token`, admin, { name: `kept ${index}` }),
        );
        const bearer = { Authorization: `Bearer ${String(token.token)}` };
        const found: string[] = [];
        expect((await call(sides.commands, 'POST', `/user/${memberId}/deactivate`, admin)).status).toBe(200);
        const deactivated = await call(sides.queries, 'GET', `/user/${memberId}`, bearer);
        if (deactivated.status !== 401) found.push(`${index}: a deactivated user's token was let in`);
        const user = await json(await call(sides.queries, 'GET', `/user/${memberId}`, admin));
        if (user.active !== false) found.push(`${index}: the user is not shown deactivated`);
        expect((await call(sides.commands, 'POST', `/user/${memberId}/activate`, admin)).status).toBe(200);
        const reactivated = await call(sides.queries, 'GET', `/user/${memberId}`, bearer);
        if (reactivated.status !== 401) found.push(`${index}: reactivation brought an old token back`);
        const listed = await json<{ items: unknown[] }>(
          await call(sides.queries, 'GET', `/auth/${memberId}/token`, admin),
        );
        if (listed.items.length !== 0) found.push(`${index}: a revoked token is still listed`);
        return found;
      });
      expect(wrong).toEqual([]);
    });
  });
}

suite('one process', async () => {
  const platform: TestPlatform = await startPlatform(PLATFORM_ENV);
  return { sides: { commands: platform.url, queries: platform.url }, stop: () => platform.stop() };
});

suite('a query API in a process of its own, on the same data', async () => {
  const platform: TestPlatform = await startPlatform(PLATFORM_ENV);
  const children: ChildProcess[] = [];
  const queries = await startServiceProcess(
    'query-api',
    { DATA_DIR: platform.dataDir, ADMIN_TOKEN },
    children,
  );
  return {
    sides: { commands: platform.url, queries },
    async stop() {
      for (const child of children) child.kill('SIGTERM');
      await Promise.all(children.map((child) => exited(child)));
      await platform.stop();
    },
  };
});
