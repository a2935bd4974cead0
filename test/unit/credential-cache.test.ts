/**
 * The authenticator's cache is shared by every system: made-up credentials (anyone can send any number,
 * unauthenticated) fill only the room kept for refusals, never evicting the principals of real credentials.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { hashToken, newSessionToken, SESSION_PREFIX } from '../../contracts/secrets';
import { tokenAuthenticator } from '../../infra/http/authenticate';
import { SessionActivity } from '../../infra/http/session-activity';
import { ReadModels } from '../../infra/read-store/read-models';
import { createSqliteReadStore } from '../../infra/read-store/sqlite';
import type { ReadStore } from '../../infra/read-store/port';

const START = Date.parse('2026-11-22T08:00:00Z');
let directory: string;
let store: ReadStore;
const session = newSessionToken();

beforeEach(async () => {
  directory = mkdtempSync(join(tmpdir(), 'credential-cache-'));
  store = createSqliteReadStore({ path: join(directory, 'read-models.db') });
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
        csrfHash: hashToken('csrf'),
        absoluteExpiresAt: new Date(START + 3_600_000).toISOString(),
        createdAt: new Date(START).toISOString(),
      },
    },
  ]);
});
afterEach(async () => {
  await store.close();
  rmSync(directory, { recursive: true, force: true });
});

test('a flood of made-up credentials from another system does not evict a real one', async () => {
  const readModels = new ReadModels(store);
  const reads = jest.spyOn(readModels, 'get');
  const authenticate = tokenAuthenticator(readModels, {
    identityPosition: () => 1n,
    sessions: { idleMs: 3_600_000, activity: new SessionActivity(store, 60_000) },
    now: () => START + 1000,
  });
  expect((await authenticate('acme', session))?.userId).toBe('5');
  const flood = fc.sample(fc.string({ minLength: 1, maxLength: 40 }), 10_500);
  for (const [index, junk] of flood.entries())
    expect(await authenticate('globex', `${SESSION_PREFIX}${index}-${junk}`)).toBeNull();
  reads.mockClear();
  expect((await authenticate('acme', session))?.userId).toBe('5');
  // Served from the cache: the flood filled only the refusals' room.
  expect(reads).not.toHaveBeenCalled();
  // A refused credential is still refused, whether or not it is still remembered.
  expect(await authenticate('globex', `${SESSION_PREFIX}0-${flood[0]!}`)).toBeNull();
});
