import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { callApi, exited, freePort, startPlatformProcess } from '../support/child-platform';
import { startHeldServer, type HeldServer } from '../support/held-server';

/**
 * A system's run backlog survives a `kill -9`: every request accepted before it runs after the restart, once
 * per request, whether it was running, parked, or not yet taken from the stream. The restarted platform takes
 * the dead one's drain over once its hold runs out (1 s here).
 */
const TOKEN = 'rpt_backlog-restart-token-0123456789abcdef';
const REQUESTS = 30;
jest.setTimeout(180_000);

let dataDir: string;
const children: ChildProcess[] = [];
let slow: HeldServer;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'records-backlog-'));
  slow = await startHeldServer();
});
afterAll(async () => {
  await slow.close();
  for (const running of children)
    if (running.exitCode === null && running.signalCode === null) {
      running.kill('SIGKILL');
      await exited(running);
    }
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(port: number): Promise<{ child: ChildProcess; url: string }> {
  const started = await startPlatformProcess(port, {
    DATA_DIR: dataDir,
    ADMIN_TOKEN: TOKEN,
    OUTBOUND_ALLOW_PRIVATE: 'true',
    OUTBOUND_TIMEOUT_MS: '60000',
    INTEGRATOR_CONCURRENCY: '4',
    INTEGRATOR_TENANT_CONCURRENCY: '2',
    INTEGRATOR_BACKLOG_LEASE_MS: '1000',
  });
  children.push(started.child);
  return started;
}

const api = <T>(url: string, method: string, path: string, body?: unknown): Promise<T> =>
  callApi<T>(url, TOKEN, method, path, body);

type Runs = { items: Array<{ status: string; requestId: string }> };

test('kill -9 with a backlog of slow runs: after the restart each accepted request runs once', async () => {
  const port = await freePort();
  const first = await start(port);
  const hook = await api<{ id: number; key: string }>(first.url, 'POST', '/webhook', { name: 'Slow' });
  const scenario = await api<{ id: number }>(first.url, 'POST', '/scenario', {
    name: 'Slow',
    webhookId: hook.id,
    steps: [{ kind: 'httpRequest', url: slow.url }],
  });
  for (let n = 0; n < REQUESTS; n++) {
    expect((await fetch(`${first.url}/hook/${hook.key}?n=${n}`, { method: 'POST' })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
  const deadline = Date.now() + 30_000;
  while (slow.held < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(slow.held).toBe(2);
  first.child.kill('SIGKILL');
  await exited(first.child);
  slow.release('drop');

  const second = await start(port);
  const until = Date.now() + 120_000;
  let runs: Runs = { items: [] };
  for (;;) {
    runs = await api<Runs>(second.url, 'GET', `/scenario/${scenario.id}/run?limit=100`);
    const done = runs.items.filter((run) => run.status === 'succeeded').length === REQUESTS;
    if (done || Date.now() > until) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  expect(runs.items.map((run) => run.status)).toEqual(Array(REQUESTS).fill('succeeded'));
  expect(new Set(runs.items.map((run) => run.requestId)).size).toBe(REQUESTS);
  // Each request's call once, and once more for each of the two that were under way at the kill.
  expect(slow.calls).toBeGreaterThanOrEqual(REQUESTS);
  expect(slow.calls).toBeLessThanOrEqual(REQUESTS + 2);
});
