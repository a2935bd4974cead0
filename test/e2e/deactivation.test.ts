import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_TOKEN, json, startPlatform, type TestPlatform } from '../support/platform';

/**
 * TK-06: a deactivation revokes the user's API tokens for good, the bootstrap admin's ADMIN_TOKEN among them:
 * a start issues no token to a deactivated admin, nor the revoked value again once reactivated; a new
 * ADMIN_TOKEN value is issued as a changed value always is.
 */
jest.setTimeout(60_000);

const RENEWED = 'rpt_renewed-admin-token-0123456789abcdef';

test('the bootstrap admin deactivated: the platform still starts; the revoked ADMIN_TOKEN stays revoked, a new one counts', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'records-deactivation-'));
  const call = (url: string, token: string, method: string, path: string, body?: unknown) =>
    fetch(`${url}/api${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  let platform: TestPlatform | undefined;
  try {
    platform = await startPlatform({ DATA_DIR: dataDir });
    const other = await json<{ id: number }>(
      await call(platform.url, ADMIN_TOKEN, 'POST', '/user', {
        email: 'second-admin@example.com',
        name: 'Second',
        role: 'admin',
      }),
    );
    const otherToken = (
      await json<{ token: string }>(
        await call(platform.url, ADMIN_TOKEN, 'POST', `/auth/${other.id}/token`, { name: 'ops' }),
      )
    ).token;
    expect((await call(platform.url, otherToken, 'POST', '/user/1/deactivate')).status).toBe(200);
    expect((await call(platform.url, ADMIN_TOKEN, 'GET', '/user/1')).status).toBe(401);
    await platform.stop();

    platform = await startPlatform({ DATA_DIR: dataDir });
    expect((await call(platform.url, ADMIN_TOKEN, 'GET', '/user/1')).status).toBe(401);
    expect(await json(await call(platform.url, otherToken, 'GET', '/auth/1/token'))).toMatchObject({
      items: [],
    });
    expect((await call(platform.url, otherToken, 'POST', '/user/1/activate')).status).toBe(200);
    // Reactivation alone brings no token back.
    expect((await call(platform.url, ADMIN_TOKEN, 'GET', '/user/1')).status).toBe(401);
    await platform.stop();

    platform = await startPlatform({ DATA_DIR: dataDir });
    expect((await call(platform.url, ADMIN_TOKEN, 'GET', '/user/1')).status).toBe(401);
    await platform.stop();

    platform = await startPlatform({ DATA_DIR: dataDir, ADMIN_TOKEN: RENEWED });
    expect((await call(platform.url, RENEWED, 'GET', '/user/1')).status).toBe(200);
    expect((await call(platform.url, ADMIN_TOKEN, 'GET', '/user/1')).status).toBe(401);
  } finally {
    await platform?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
