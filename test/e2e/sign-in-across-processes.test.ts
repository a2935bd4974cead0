import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { totpCode } from '../../command-api/identity/totp';
import { exited, startServiceProcess } from '../support/child-platform';
import { filesHolding } from '../support/platform';

/**
 * The sign-in limits hold across command-api processes: two of them (and the projections) as separate
 * processes on one data folder, as `npm run service -- command-api` scales them, and attempts spread over both.
 */
const TOKEN = 'rpt_sign-in-across-processes-0123456789';
const PASSWORD = 'a long enough password';
jest.setTimeout(180_000);

let dataDir: string;
const children: ChildProcess[] = [];
let first: string;
let second: string;

const secretsKey = randomBytes(32).toString('base64');
// Both command-api processes need the same SECRETS_KEY: counter keys and pending logins derive from it.
const startService = (name: string) =>
  startServiceProcess(
    name,
    { DATA_DIR: dataDir, ADMIN_TOKEN: TOKEN, SECRETS_KEY: secretsKey, TRUST_PROXY_HOPS: '1' },
    children,
  );

function post(base: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${base}/api${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** Retries while the answer is 401: the projections process has yet to project the credential used. */
async function once(call: () => Promise<Response>): Promise<Response> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const response = await call();
    if (response.status !== 401 || Date.now() > deadline) return response;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function newMember(email: string): Promise<number> {
  const created = await once(() =>
    post(first, '/user', { email, name: 'Mia', password: PASSWORD }, { Authorization: `Bearer ${TOKEN}` }),
  );
  expect(created.status).toBe(201);
  return ((await created.json()) as { id: number }).id;
}

const login = (base: string, email: string, password: string, address: string) =>
  post(base, '/auth', { email, password }, { 'X-Forwarded-For': address });

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'records-sign-in-'));
  first = await startService('command-api');
  await startService('projections');
  second = await startService('command-api');
});

afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((child) => exited(child)));
  rmSync(dataDir, { recursive: true, force: true });
});

test('BF-01 across processes: failures split over two command-api processes still hit the limit', async () => {
  await newMember('spread@example.com');
  const unknown = await login(first, 'nobody@example.com', 'whatever it is', '10.5.0.1');
  const wrong = await login(second, 'spread@example.com', 'not the password', '10.5.0.2');
  const bodies = [unknown, wrong].map(async (response) => {
    const { requestId: _id, ...body } = (await response.json()) as Record<string, unknown>;
    return body;
  });
  expect([unknown.status, wrong.status]).toEqual([401, 401]);
  expect(await bodies[0]).toEqual(await bodies[1]);

  for (let attempt = 0; attempt < 5; attempt++)
    expect(
      (await login(attempt % 2 === 0 ? first : second, 'spread@example.com', 'still wrong', '10.5.0.3'))
        .status,
    ).toBe(401);
  for (const base of [first, second]) {
    const blocked = await login(base, 'spread@example.com', PASSWORD, '10.5.0.3');
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
  }
  // The owner elsewhere still gets in, at either process.
  expect((await login(second, 'spread@example.com', PASSWORD, '10.5.0.4')).status).toBe(200);
  expect((await login(first, 'spread@example.com', PASSWORD, '10.5.0.5')).status).toBe(200);
  // The shared attempt log keeps neither the email nor the address, only keyed hashes of them.
  expect(existsSync(join(dataDir, 'attempts.db'))).toBe(true);
  for (const text of ['spread@example.com', '10.5.0.3'])
    expect(filesHolding(dataDir, text).filter((name) => name.startsWith('attempts'))).toEqual([]);
});

test('BF-01 across processes: of attempts sent at once to both processes, no more than five get a password check', async () => {
  await newMember('burst@example.com');
  const statuses = await Promise.all(
    Array.from({ length: 12 }, async (_, index) => {
      const response = await login(
        index % 2 === 0 ? first : second,
        'burst@example.com',
        'guess',
        '10.5.1.1',
      );
      if (response.status === 429) expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      return response.status;
    }),
  );
  // Those refused at once counted nothing, the others once each (a MongoDB log may refuse more than needed).
  const failed = statuses.filter((status) => status === 401).length;
  expect(failed).toBeLessThanOrEqual(5);
  expect(statuses.filter((status) => status === 429)).toHaveLength(12 - failed);
  for (let attempt = failed; attempt < 5; attempt++)
    expect((await login(second, 'burst@example.com', 'guess', '10.5.1.1')).status).toBe(401);
  expect((await login(first, 'burst@example.com', PASSWORD, '10.5.1.1')).status).toBe(429);
});

test('TOTP-04 across processes: five wrong codes over two processes end the pending login', async () => {
  const userId = await newMember('two-steps@example.com');
  const signedIn = (await (await login(first, 'two-steps@example.com', PASSWORD, '10.6.0.1')).json()) as {
    session: string;
  };
  const auth = { Authorization: `Bearer ${signedIn.session}` };
  const added = await once(() =>
    post(second, `/user/${userId}/2fa`, { name: 'Phone', password: PASSWORD }, auth),
  );
  expect(added.status).toBe(201);
  const device = (await added.json()) as { id: string; secret: string };
  const confirmedAt = Math.floor(Date.now() / 1000);
  const confirmed = await post(
    second,
    `/user/${userId}/2fa/${device.id}/confirm`,
    { code: totpCode(device.secret, confirmedAt) },
    auth,
  );
  expect(confirmed.status).toBe(200);

  const started = await login(first, 'two-steps@example.com', PASSWORD, '10.6.0.1');
  const pending = (await started.json()) as { code: string; details: { pendingToken: string } };
  expect({ status: started.status, code: pending.code }).toEqual({ status: 403, code: 'E4031' });
  const pendingToken = pending.details.pendingToken;
  for (let attempt = 0; attempt < 5; attempt++)
    expect(
      (await post(attempt % 2 === 0 ? second : first, '/auth/2fa', { pendingToken, code: '123456' })).status,
    ).toBe(401);
  for (const base of [first, second]) {
    const late = await post(base, '/auth/2fa', {
      pendingToken,
      code: totpCode(device.secret, confirmedAt + 30),
    });
    expect(late.status).toBe(401);
    expect(JSON.stringify(await late.json())).toContain('sign in again');
  }
});

/** POST to the token endpoint as `clientId` with HTTP Basic, from `address`. */
function clientCall(base: string, clientId: string, secret: string, address: string) {
  return fetch(`${base}/api/auth/oauth/token`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
      'X-Forwarded-For': address,
    },
    body: 'grant_type=client_credentials',
  });
}

async function newClient(): Promise<{ clientId: string; clientSecret: string }> {
  const created = await once(() =>
    post(
      first,
      '/auth/oauth/client',
      { clientName: 'Guessed', redirectUris: ['http://127.0.0.1/cb'], scope: 'record:read' },
      { Authorization: `Bearer ${TOKEN}` },
    ),
  );
  expect(created.status).toBe(201);
  return (await created.json()) as { clientId: string; clientSecret: string };
}

/** A throttled answer: 429 in OAuth's error shape, with a Retry-After. */
async function expectThrottled(response: Response): Promise<void> {
  expect(response.status).toBe(429);
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(await response.json()).toEqual({
    error: 'temporarily_unavailable',
    error_description: expect.stringMatching(/too many failed client authentications; try again in \d+ s/),
  });
}

// A right secret passes client authentication and reaches the grant check: unsupported_grant_type.
const PASSED = 400;

test('OA-22 across processes: wrong client secrets spread over two processes are throttled per client and address', async () => {
  const client = await newClient();
  expect((await clientCall(first, client.clientId, client.clientSecret, '10.7.0.1')).status).toBe(PASSED);
  for (let attempt = 0; attempt < 10; attempt++) {
    const refused = await clientCall(
      attempt % 2 === 0 ? first : second,
      client.clientId,
      'wrong',
      '10.7.0.1',
    );
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: 'invalid_client' });
  }
  // Past the limit even the right secret goes unchecked, at either process.
  for (const base of [first, second])
    await expectThrottled(await clientCall(base, client.clientId, client.clientSecret, '10.7.0.1'));
  await expectThrottled(await clientCall(second, client.clientId, 'wrong', '10.7.0.1'));
  // The client itself, from its own address, still gets in: a stranger cannot lock it out from elsewhere.
  expect((await clientCall(second, client.clientId, client.clientSecret, '10.7.0.2')).status).toBe(PASSED);
  // Every client endpoint counts: revoke and introspect authenticate the same way.
  for (const path of ['revoke', 'introspect']) {
    const refused = await fetch(`${first}/api/auth/oauth/${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Forwarded-For': '10.7.0.1' },
      body: new URLSearchParams({
        client_id: client.clientId,
        client_secret: client.clientSecret,
        token: 'x',
      }),
    });
    await expectThrottled(refused);
  }
  // The attempt log holds neither the client id nor the address.
  for (const text of [client.clientId, '10.7.0.1'])
    expect(filesHolding(dataDir, text).filter((name) => name.startsWith('attempts'))).toEqual([]);
});

test('OA-22 across processes: one address guessing over many clients is throttled per address', async () => {
  const client = await newClient();
  for (let attempt = 0; attempt < 30; attempt++) {
    const unknownClient = `rpc_${randomBytes(12).toString('hex')}`;
    const base = attempt % 2 === 0 ? first : second;
    expect((await clientCall(base, unknownClient, 'guess', '10.7.1.1')).status).toBe(401);
  }
  await expectThrottled(await clientCall(first, client.clientId, client.clientSecret, '10.7.1.1'));
  await expectThrottled(await clientCall(second, 'not-even-a-client-id', 'guess', '10.7.1.1'));
  expect((await clientCall(first, client.clientId, client.clientSecret, '10.7.1.2')).status).toBe(PASSED);
});

test('OA-22 across processes: wrong secrets sent at once to both processes are all counted', async () => {
  const client = await newClient();
  const statuses = await Promise.all(
    Array.from({ length: 8 }, (_, index) =>
      clientCall(index % 2 === 0 ? first : second, client.clientId, 'guess', '10.7.2.1').then(
        (response) => response.status,
      ),
    ),
  );
  expect(statuses).toEqual(Array.from({ length: 8 }, () => 401));
  for (let attempt = 8; attempt < 10; attempt++)
    expect((await clientCall(second, client.clientId, 'guess', '10.7.2.1')).status).toBe(401);
  await expectThrottled(await clientCall(first, client.clientId, client.clientSecret, '10.7.2.1'));
});
