import { createHmac } from 'node:crypto';
import {
  ClientAuthThrottle,
  LoginThrottle,
  SecondFactorAttempts,
} from '../../command-api/identity/login-throttle';
import {
  CLIENT_AUTH_LIMITS,
  clientAuthCounters,
  LOGIN_LIMITS,
  MAX_DELAY_MS,
  loginCounters,
  othersThan,
  retryAfterSeconds,
  secondFactorAttemptAllowed,
  waitMs,
} from '../../command-api/identity/domain/sign-in-limits';
import type { AttemptLog } from '../../infra/attempts/port';
import { createSqliteAttemptLog } from '../../infra/attempts/sqlite';

const MINUTE = 60_000;
const START = Date.parse('2026-11-23T08:00:00Z');
const { accountAndAddress } = LOGIN_LIMITS;

/** `count` failures one second apart, the last at `last`. */
const failures = (count: number, last: number) =>
  Array.from({ length: count }, (_, index) => last - (count - 1 - index) * 1000);

describe('BF-01 sign-in limits (pure)', () => {
  test('below the limit nothing waits; at it the wait is a minute from the latest failure', () => {
    expect(waitMs(failures(4, START), accountAndAddress, START)).toBe(0);
    expect(waitMs(failures(5, START), accountAndAddress, START)).toBe(MINUTE);
    expect(waitMs(failures(5, START), accountAndAddress, START + 20_000)).toBe(40_000);
    expect(waitMs(failures(5, START), accountAndAddress, START + MINUTE)).toBe(0);
  });

  test('each failure past the limit doubles the wait, up to 15 minutes', () => {
    expect(waitMs(failures(6, START), accountAndAddress, START)).toBe(2 * MINUTE);
    expect(waitMs(failures(7, START), accountAndAddress, START)).toBe(4 * MINUTE);
    expect(waitMs(failures(20, START), accountAndAddress, START)).toBe(MAX_DELAY_MS);
  });

  test('failures outside the window do not count, in whatever order they come', () => {
    const old = START - accountAndAddress.windowMs;
    expect(
      waitMs([START, old, START - 1000, old - 5, START - 2000, START - 3000], accountAndAddress, START),
    ).toBe(0);
    expect(
      waitMs([START - 4000, START, START - 1000, START - 2000, START - 3000], accountAndAddress, START),
    ).toBe(MINUTE);
  });

  test('the longest wait of the counters wins, in whole seconds rounded up', () => {
    expect(
      retryAfterSeconds(
        [
          { times: failures(5, START), limit: accountAndAddress },
          { times: failures(31, START - 1500), limit: LOGIN_LIMITS.address },
          { times: [], limit: LOGIN_LIMITS.account },
        ],
        START,
      ),
    ).toBe(119);
    expect(retryAfterSeconds([{ times: failures(5, START), limit: accountAndAddress }], START + 59_001)).toBe(
      1,
    );
    expect(retryAfterSeconds([], START)).toBe(0);
  });

  test('a failure moves three counters: account and address, address, account', () => {
    expect(loginCounters('acme', 'mia@example.com', '10.0.0.1').map(({ key }) => key)).toEqual([
      'account+address acme mia@example.com 10.0.0.1',
      'address 10.0.0.1',
      'account acme mia@example.com',
    ]);
  });

  test('a failed client authentication moves its own three counters, apart from the login ones', () => {
    const keys = clientAuthCounters('acme', 'rpc_0123', '10.0.0.1').map(({ key }) => key);
    expect(keys).toEqual([
      'client+address acme rpc_0123 10.0.0.1',
      'client-address 10.0.0.1',
      'client acme rpc_0123',
    ]);
    const loginKeys = loginCounters('acme', 'rpc_0123', '10.0.0.1').map(({ key }) => key);
    expect(keys.filter((key) => loginKeys.includes(key))).toEqual([]);
    expect(CLIENT_AUTH_LIMITS.client.failures).toBeGreaterThan(CLIENT_AUTH_LIMITS.address.failures);
  });

  test('an attempt counted with the others finds the others', () => {
    expect(othersThan([START - 5, START, START], START)).toEqual([START - 5, START]);
    expect(othersThan([START - 5], START)).toEqual([START - 5]);
  });

  test('TOTP-04 five codes per pending login, not six', () => {
    expect([1, 5, 6].map(secondFactorAttemptAllowed)).toEqual([true, true, false]);
  });
});

describe('sign-in throttles over an attempt log', () => {
  let log: AttemptLog;
  let clock: number;
  const options = () => ({ log, keySecret: Buffer.alloc(32, 7), now: () => clock });

  const hashedKey = (counter: string) =>
    createHmac('sha256', Buffer.alloc(32, 7)).update(counter, 'utf8').digest('base64url');

  beforeEach(() => {
    log = createSqliteAttemptLog({ path: ':memory:' });
    clock = START;
  });

  afterEach(async () => {
    await log.close();
  });

  test('BF-01 two throttles on one log (two processes) count the failures together', async () => {
    const [first, second] = [new LoginThrottle(options()), new LoginThrottle(options())];
    for (let attempt = 0; attempt < 5; attempt++)
      await (attempt % 2 === 0 ? first : second).begin('acme', 'mia@example.com', '10.0.0.1');
    expect(await first.retryAfterSeconds('acme', 'mia@example.com', '10.0.0.1')).toBe(60);
    expect(await second.retryAfterSeconds('acme', 'mia@example.com', '10.0.0.1')).toBe(60);
  });

  test('the log holds neither email nor address, and keys differ with the server key', async () => {
    const spy: string[] = [];
    const recording: AttemptLog = {
      ...log,
      add: (key, at, expiresAt) => (spy.push(key), log.add(key, at, expiresAt)),
    };
    await new LoginThrottle({ ...options(), log: recording }).begin('acme', 'mia@example.com', '10.0.0.1');
    await new LoginThrottle({ ...options(), log: recording, keySecret: Buffer.alloc(32, 8) }).begin(
      'acme',
      'mia@example.com',
      '10.0.0.1',
    );
    expect(spy).toHaveLength(6);
    expect(new Set(spy).size).toBe(6);
    for (const key of spy) expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  test('BF-01 attempts that arrive at once get no more passwords checked than the limit', async () => {
    const throttles = [new LoginThrottle(options()), new LoginThrottle(options())];
    const attempts = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        throttles[index % 2]!.begin('acme', 'mia@example.com', '10.0.0.9'),
      ),
    );
    expect(attempts.filter(({ waitSeconds }) => waitSeconds === 0)).toHaveLength(5);
    expect(Math.min(...attempts.map(({ waitSeconds }) => waitSeconds).filter(Boolean))).toBe(60);
    // The refused ones counted nothing: five failures stand, and the next attempt waits a minute.
    expect(await throttles[0]!.retryAfterSeconds('acme', 'mia@example.com', '10.0.0.9')).toBe(60);
  });

  test('BF-01 a success takes its own attempt back from every counter', async () => {
    const throttle = new LoginThrottle(options());
    for (let account = 0; account < 29; account++)
      await throttle.begin('acme', `user${account}@example.com`, '10.0.0.8');
    await (await throttle.begin('acme', 'mia@example.com', '10.0.0.8')).succeeded();
    // 29 failures from the address, not 30: it is not held up.
    expect(await throttle.retryAfterSeconds('acme', 'anyone@example.com', '10.0.0.8')).toBe(0);
    await throttle.begin('acme', 'another@example.com', '10.0.0.8');
    expect(await throttle.retryAfterSeconds('acme', 'anyone@example.com', '10.0.0.8')).toBe(60);
  });

  test('OA-22 client authentication: ten failures per client and address over two throttles, then a wait that doubles', async () => {
    const [first, second] = [new ClientAuthThrottle(options()), new ClientAuthThrottle(options())];
    const fail = async (throttle: ClientAuthThrottle, address: string) => {
      const attempt = await throttle.begin('acme', 'rpc_1', address);
      if (attempt.waitSeconds === 0) await attempt.failed();
      return attempt.waitSeconds;
    };
    for (let attempt = 0; attempt < 10; attempt++)
      expect(await fail(attempt % 2 === 0 ? first : second, '10.0.1.1')).toBe(0);
    expect(await fail(first, '10.0.1.1')).toBe(60);
    // Another address of the same client is not held up; a success there clears only its own failures.
    await fail(second, '10.0.1.2');
    const elsewhere = await second.begin('acme', 'rpc_1', '10.0.1.2');
    expect(elsewhere.waitSeconds).toBe(0);
    await elsewhere.succeeded();
    expect(await log.list(hashedKey('client+address acme rpc_1 10.0.1.2'), clock)).toEqual([]);
    expect(await fail(second, '10.0.1.1')).toBe(60);
    clock += MINUTE;
    expect(await fail(first, '10.0.1.1')).toBe(0);
    expect(await fail(first, '10.0.1.1')).toBe(120);
  });

  test('OA-22 a right secret writes nothing to the log', async () => {
    const writes: string[] = [];
    const recording: AttemptLog = {
      ...log,
      add: (key, at, expiresAt) => (writes.push(key), log.add(key, at, expiresAt)),
      clear: (key) => (writes.push(key), log.clear(key)),
    };
    const throttle = new ClientAuthThrottle({ ...options(), log: recording });
    for (let call = 0; call < 5; call++)
      await (await throttle.begin('acme', 'rpc_2', '10.0.2.1')).succeeded();
    expect(writes).toEqual([]);
  });

  test('TOTP-04 a pending login is admitted five times, then refused until it expires', async () => {
    const [first, second] = [new SecondFactorAttempts(options()), new SecondFactorAttempts(options())];
    const expiresAt = START + 5 * MINUTE;
    const answers: boolean[] = [];
    for (let attempt = 0; attempt < 7; attempt++)
      answers.push(await (attempt % 2 === 0 ? first : second).admit('jti-1', expiresAt));
    expect(answers).toEqual([true, true, true, true, true, false, false]);
    expect(await first.admit('jti-2', expiresAt)).toBe(true);
    // Refusals add nothing: the log keeps five attempts for the refused pending login.
    clock = expiresAt;
    expect(await log.sweep(clock)).toBe(6);
  });

  test('TOTP-04 attempts sent at once get no more than five codes checked', async () => {
    const throttles = [new SecondFactorAttempts(options()), new SecondFactorAttempts(options())];
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, index) => throttles[index % 2]!.admit('jti-burst', START + MINUTE)),
    );
    expect(answers.filter(Boolean)).toHaveLength(5);
  });
});
