import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { exited, freePort, output, spawnBin, waitUntilReady } from '../support/child-platform';

jest.setTimeout(90_000);

const TOKEN = 'rpt_logging-test-admin-token-0123456789';
const PASSWORD = 'the admin password, never logged';
let child: ChildProcess | undefined;
let dataDir: string;

afterAll(async () => {
  if (child) {
    child.kill('SIGTERM');
    await exited(child);
  }
  rmSync(dataDir, { recursive: true, force: true });
});

test('BF-02 every sign-in success and failure is logged, with no password, token or session id in the logs', async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'auth-logging-'));
  const port = await freePort();
  child = spawnBin('platform.ts', [], {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: TOKEN,
    ADMIN_EMAIL: 'root@example.com',
    ADMIN_PASSWORD: PASSWORD,
    LOG_LEVEL: 'info',
  });
  const logs = output(child);
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(url);
  const login = (password: string) =>
    fetch(`${url}/api/auth`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'root@example.com', password }),
    });
  expect((await login('a wrong password')).status).toBe(401);
  const success = await login(PASSWORD);
  expect(success.status).toBe(200);
  const { session } = (await success.json()) as { session: string };
  await fetch(`${url}/api/space`, { headers: { Authorization: `Bearer ${session}` } });

  const lines = logs()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const events = lines
    .filter((line) => typeof line.event === 'string')
    .map((line) => [line.event, line.email]);
  expect(events).toEqual([
    ['login.failed', 'root@example.com'],
    ['login.succeeded', 'root@example.com'],
  ]);
  const text = logs();
  for (const secret of [PASSWORD, 'a wrong password', TOKEN, session])
    expect(text.includes(secret)).toBe(false);
});
