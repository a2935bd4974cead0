import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOGIN_LIMITS, LoginThrottle } from '../../command-api/identity/login-throttle';
import { createSqliteAttemptLog } from '../../infra/attempts/sqlite';
import { hashToken, newCsrfToken, newSessionToken } from '../../contracts/secrets';
import { tokenAuthenticator } from '../../infra/http/authenticate';
import { SessionActivity } from '../../infra/http/session-activity';
import { createSqliteReadStore } from '../../infra/read-store/sqlite';
import { ReadModels } from '../../infra/read-store/read-models';
import type { ReadStore } from '../../infra/read-store/port';

const MINUTE = 60_000;
const START = Date.parse('2026-11-22T08:00:00Z');

describe('session lifetimes (SE-03)', () => {
  let directory: string;
  let store: ReadStore;
  let clock: number;
  const session = newSessionToken();
  const csrf = newCsrfToken();

  const authenticatorOn = (activity: SessionActivity) =>
    tokenAuthenticator(new ReadModels(store), {
      identityPosition: () => 1n,
      sessions: { idleMs: 20 * MINUTE, activity },
      now: () => clock,
    });

  beforeEach(async () => {
    directory = mkdtempSync(join(tmpdir(), 'sessions-'));
    store = createSqliteReadStore({ path: join(directory, 'read-models.db') });
    clock = START;
    await store.apply([
      {
        op: 'upsert',
        collection: 'users',
        position: 1n,
        doc: { id: 'acme.5', tenant: 'acme', userId: 5, role: 'member', active: true },
      },
      {
        op: 'upsert',
        collection: 'sessions',
        position: 2n,
        doc: {
          id: hashToken(session),
          tenant: 'acme',
          userId: 5,
          csrfHash: hashToken(csrf),
          absoluteExpiresAt: new Date(START + 12 * 60 * MINUTE).toISOString(),
          createdAt: new Date(START).toISOString(),
        },
      },
    ]);
  });

  afterEach(async () => {
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  });

  test('SE-03 every use slides the 20-minute idle timeout; 20 idle minutes end the session', async () => {
    const authenticate = authenticatorOn(new SessionActivity(store, MINUTE));
    for (let step = 0; step < 5; step++) {
      clock += 19 * MINUTE;
      expect((await authenticate('acme', session))?.credential.kind).toBe('session');
    }
    clock += 20 * MINUTE + 1;
    expect(await authenticate('acme', session)).toBeNull();
  });

  test('SE-03 the absolute cap ends even a busy session', async () => {
    const authenticate = authenticatorOn(new SessionActivity(store, MINUTE));
    for (clock = START; clock < START + 12 * 60 * MINUTE; clock += 10 * MINUTE)
      expect(await authenticate('acme', session)).not.toBeNull();
    expect(await authenticate('acme', session)).toBeNull();
  });

  test('use seen by another process counts: activity is shared through the store', async () => {
    const activity = new SessionActivity(store, MINUTE);
    clock += 10 * MINUTE;
    expect(await authenticatorOn(activity)('acme', session)).not.toBeNull();
    await new Promise((resolve) => setImmediate(resolve));
    // Another process, which never saw the session, 25 minutes after login and 15 after its last use.
    clock += 15 * MINUTE;
    expect(await authenticatorOn(new SessionActivity(store, MINUTE))('acme', session)).not.toBeNull();
  });

  test('SE-04 a write by cookie needs the session CSRF token', async () => {
    const authenticate = authenticatorOn(new SessionActivity(store, MINUTE));
    await expect(authenticate('acme', session, { csrfToken: 'wrong' })).rejects.toThrow('X-CSRF-Token');
    await expect(authenticate('acme', session, { csrfToken: null })).rejects.toThrow('X-CSRF-Token');
    expect(await authenticate('acme', session, { csrfToken: csrf })).not.toBeNull();
  });

  test('a session is worthless in another tenant and once its user is deactivated', async () => {
    const authenticate = authenticatorOn(new SessionActivity(store, MINUTE));
    expect(await authenticate('globex', session)).toBeNull();
    await store.apply([
      { op: 'patch', collection: 'users', position: 3n, id: 'acme.5', set: { active: false } },
    ]);
    const fresh = tokenAuthenticator(new ReadModels(store), {
      identityPosition: () => 2n,
      sessions: { idleMs: 20 * MINUTE, activity: new SessionActivity(store, MINUTE) },
      now: () => clock,
    });
    expect(await fresh('acme', session)).toBeNull();
  });
});

describe('BF-01 login throttling', () => {
  let clock = START;
  /** A throttle on an attempt log of its own. */
  const throttleOn = (now: () => number) =>
    new LoginThrottle({
      log: createSqliteAttemptLog({ path: ':memory:' }),
      keySecret: Buffer.alloc(32),
      now,
    });
  const throttle = throttleOn(() => clock);

  test('after 5 failures of one account from one address, attempts wait, longer with each failure', async () => {
    for (let attempt = 0; attempt < LOGIN_LIMITS.accountAndAddress.failures; attempt++) {
      expect(await throttle.retryAfterSeconds('acme', 'mia@example.com', '10.0.0.1')).toBe(0);
      await throttle.begin('acme', 'mia@example.com', '10.0.0.1');
    }
    expect(await throttle.retryAfterSeconds('acme', 'mia@example.com', '10.0.0.1')).toBe(60);
    // The owner, from their own address, is not locked out by a stranger's guesses.
    expect(await throttle.retryAfterSeconds('acme', 'mia@example.com', '10.0.0.2')).toBe(0);
    clock += 61_000;
    await throttle.begin('acme', 'mia@example.com', '10.0.0.1');
    expect(await throttle.retryAfterSeconds('acme', 'mia@example.com', '10.0.0.1')).toBe(120);
    clock += 16 * MINUTE;
    expect(await throttle.retryAfterSeconds('acme', 'mia@example.com', '10.0.0.1')).toBe(0);
  });

  test('one address guessing many accounts is stopped at 30 failures', async () => {
    const spray = throttleOn(() => clock);
    for (let account = 0; account < LOGIN_LIMITS.address.failures; account++)
      await spray.begin('acme', `user${account}@example.com`, '10.9.9.9');
    expect(await spray.retryAfterSeconds('acme', 'anyone@example.com', '10.9.9.9')).toBeGreaterThan(0);
    expect(await spray.retryAfterSeconds('acme', 'anyone@example.com', '10.9.9.8')).toBe(0);
  });

  test('a success clears the failures of that account from that address', async () => {
    const own = throttleOn(() => clock);
    for (let attempt = 0; attempt < 4; attempt++) await own.begin('acme', 'mia@example.com', '10.0.0.3');
    await (await own.begin('acme', 'mia@example.com', '10.0.0.3')).succeeded();
    await own.begin('acme', 'mia@example.com', '10.0.0.3');
    expect(await own.retryAfterSeconds('acme', 'mia@example.com', '10.0.0.3')).toBe(0);
  });
});
