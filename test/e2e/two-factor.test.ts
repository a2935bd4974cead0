import { totpCode } from '../../command-api/identity/totp';
import { filesHolding, json, startPlatform, type Entity, type TestPlatform } from '../support/platform';

jest.setTimeout(60_000);

let platform: TestPlatform;
const PASSWORD = 'a long enough password';
let userNumber = 0;

function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${platform.api}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** A member with a password, signed in: their email and session bearer header. */
async function signedInMember(): Promise<{ user: Entity; email: string; auth: Record<string, string> }> {
  userNumber += 1;
  const email = `twofa${userNumber}@example.com`;
  const user = await json<Entity>(
    await platform.call('POST', '/user', { body: { email, name: 'Mia', password: PASSWORD } }),
  );
  const login = await json(await post('/auth', { email, password: PASSWORD }));
  return { user, email, auth: { Authorization: `Bearer ${String(login.session)}` } };
}

/** Enrols and confirms an authenticator; its secret and the recovery codes. */
async function enrol(user: Entity, auth: Record<string, string>) {
  const added = await post(`/user/${user.id}/2fa`, { name: 'Phone', password: PASSWORD }, auth);
  expect(added.status).toBe(201);
  const device = await json(added);
  const now = Math.floor(Date.now() / 1000);
  const confirmed = await post(
    `/user/${user.id}/2fa/${String(device.id)}/confirm`,
    { code: totpCode(String(device.secret), now) },
    auth,
  );
  expect(confirmed.status).toBe(200);
  return {
    device,
    secret: String(device.secret),
    recoveryCodes: (await json(confirmed)).recoveryCodes as string[],
    confirmedAt: now,
  };
}

async function pendingLogin(email: string): Promise<string> {
  const response = await post('/auth', { email, password: PASSWORD });
  const body = await json(response);
  expect({ status: response.status, code: body.code }).toEqual({ status: 403, code: 'E4031' });
  expect(response.headers.get('set-cookie')).toBeNull();
  return String((body.details as Record<string, unknown>).pendingToken);
}

beforeAll(async () => {
  platform = await startPlatform();
});

afterAll(async () => {
  await platform.stop();
});

test('TOTP-03 enrolment: a 160-bit seed shown once with its otpauth URI and QR code, confirmed by a code, sealed at rest', async () => {
  const { user, auth } = await signedInMember();
  const added = await json(await post(`/user/${user.id}/2fa`, { name: 'Phone', password: PASSWORD }, auth));
  expect(added).toMatchObject({
    confirmed: false,
    secret: expect.stringMatching(/^[A-Z2-7]{32}$/),
    otpauthUri: expect.stringMatching(/^otpauth:\/\/totp\//),
    qrCode: expect.stringMatching(/^data:image\/png;base64,/),
  });
  const wrong = await post(`/user/${user.id}/2fa/${String(added.id)}/confirm`, { code: '000000' }, auth);
  expect(wrong.status).toBe(400);
  const state = await json(await platform.call('GET', `/user/${user.id}/2fa`));
  expect(state).toMatchObject({
    enabled: false,
    devices: [{ id: added.id, name: 'Phone', confirmed: false }],
  });
  expect(filesHolding(platform.dataDir, String(added.secret))).toEqual([]);
  // Settings ask for the password again (SE-05), and are the user's own.
  expect(
    (await post(`/user/${user.id}/2fa`, { name: 'x', password: 'wrong password here' }, auth)).status,
  ).toBe(403);
  expect((await platform.call('POST', `/user/${user.id}/2fa`, { body: { password: PASSWORD } })).status).toBe(
    403,
  );
});

test('E4031 then POST /auth/2fa: a fresh code completes the login; TOTP-02 the same code never works twice', async () => {
  const { user, email, auth } = await signedInMember();
  const { secret, confirmedAt } = await enrol(user, auth);
  // The confirming code's step is spent: the next step's code signs in.
  const next = totpCode(secret, confirmedAt + 30);
  const first = await pendingLogin(email);
  const done = await post('/auth/2fa', { pendingToken: first, code: next });
  expect(done.status).toBe(200);
  const session = await json(done);
  expect(session.session).toMatch(/^rps_/);
  expect(done.headers.get('set-cookie')).toContain('rp_session=');
  expect(
    (
      await platform.call('GET', `/user/${user.id}`, {
        headers: { Authorization: `Bearer ${String(session.session)}` },
      })
    ).status,
  ).toBe(200);

  const second = await pendingLogin(email);
  expect((await post('/auth/2fa', { pendingToken: second, code: next })).status).toBe(401);
  expect(
    (await post('/auth/2fa', { pendingToken: second, code: totpCode(secret, confirmedAt) })).status,
  ).toBe(401);
  // SE-01: a completed pending login cannot be used again.
  expect(
    (await post('/auth/2fa', { pendingToken: first, code: totpCode(secret, confirmedAt + 60) })).status,
  ).toBe(401);
});

test('TOTP-04 five wrong codes end the pending login; a forged or foreign pending token is refused', async () => {
  const { user, email, auth } = await signedInMember();
  const { secret, confirmedAt } = await enrol(user, auth);
  const pending = await pendingLogin(email);
  for (let attempt = 0; attempt < 5; attempt++)
    expect((await post('/auth/2fa', { pendingToken: pending, code: '123456' })).status).toBe(401);
  const late = await post('/auth/2fa', { pendingToken: pending, code: totpCode(secret, confirmedAt + 30) });
  expect(late.status).toBe(401);
  expect(JSON.stringify(await json(late))).toContain('sign in again');
  expect(
    (await post('/auth/2fa', { pendingToken: pending.slice(0, -2) + 'xx', code: '123456' })).status,
  ).toBe(401);
  for (const body of [{ pendingToken: pending }, { pendingToken: pending, code: '1', recoveryCode: 'x' }, {}])
    expect((await post('/auth/2fa', body)).status).toBe(400);
});

test('TOTP-05 recovery codes: each signs in once; renewing them voids the old ones; removing the last device turns 2FA off', async () => {
  const { user, email, auth } = await signedInMember();
  const { device, recoveryCodes } = await enrol(user, auth);
  expect(recoveryCodes).toHaveLength(10);
  expect(new Set(recoveryCodes).size).toBe(10);
  const [code, other] = recoveryCodes as [string, string];
  expect(
    (await post('/auth/2fa', { pendingToken: await pendingLogin(email), recoveryCode: code.toUpperCase() }))
      .status,
  ).toBe(200);
  expect(
    (await post('/auth/2fa', { pendingToken: await pendingLogin(email), recoveryCode: code })).status,
  ).toBe(401);
  expect(await json(await platform.call('GET', `/user/${user.id}/2fa`))).toMatchObject({
    enabled: true,
    recoveryCodesLeft: 9,
  });

  const renewed = await json(await post(`/user/${user.id}/2fa/recovery-codes`, { password: PASSWORD }, auth));
  expect(renewed.recoveryCodes).toHaveLength(10);
  expect(
    (await post('/auth/2fa', { pendingToken: await pendingLogin(email), recoveryCode: other })).status,
  ).toBe(401);

  const removed = await fetch(`${platform.api}/user/${user.id}/2fa/${String(device.id)}`, {
    method: 'DELETE',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ password: PASSWORD }),
  });
  expect(removed.status).toBe(200);
  expect(await json(await platform.call('GET', `/user/${user.id}/2fa`))).toMatchObject({
    enabled: false,
    devices: [],
    recoveryCodesLeft: 0,
  });
  expect((await post('/auth', { email, password: PASSWORD })).status).toBe(200);
});
