import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { callApi, exited, freePort, output, spawnBin, waitUntilReady } from '../support/child-platform';

/**
 * The reproduction as a process: `$length($pad("x", $number(n)))` with n = 200000000 used to make V8
 * abort the platform, and again at every start, as the accepted request was run again. Now the run fails once
 * with why, the platform stays up, and after a `kill -9` it starts and stays up.
 */
const TOKEN = 'rpt_poison-restart-token-0123456789abcdef';
jest.setTimeout(120_000);

let dataDir: string;
const children: ChildProcess[] = [];

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'records-poison-'));
});
afterAll(async () => {
  for (const running of children)
    if (running.exitCode === null && running.signalCode === null) {
      running.kill('SIGKILL');
      await exited(running);
    }
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(port: number): Promise<{ child: ChildProcess; url: string; logs: () => string }> {
  const child = spawnBin('platform.ts', [], {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: TOKEN,
  });
  children.push(child);
  const logs = output(child);
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(url).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${logs()}`);
  });
  return { child, url, logs };
}

const api = <T>(url: string, method: string, path: string, body?: unknown): Promise<T> =>
  callApi<T>(url, TOKEN, method, path, body);

type Runs = { items: Array<{ status: string; error?: string }> };

async function failedRuns(url: string, scenarioId: number): Promise<Runs> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const runs = await api<Runs>(url, 'GET', `/scenario/${scenarioId}/run`);
    if (runs.items.some((run) => run.status === 'failed') || Date.now() > deadline) return runs;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

test('the poison request fails its run once; the platform stays up, and after kill -9 starts and stays up', async () => {
  const port = await freePort();
  const first = await start(port);
  const hook = await api<{ id: number; key: string }>(first.url, 'POST', '/webhook', { name: 'Poison' });
  const scenario = await api<{ id: number }>(first.url, 'POST', '/scenario', {
    name: 'Poison',
    webhookId: hook.id,
    steps: [{ kind: 'setVariable', name: 'size', value: { expr: '$length($pad("x", $number(n)))' } }],
  });
  const answer = await fetch(`${first.url}/hook/${hook.key}?n=200000000`);
  expect(answer.status).toBeLessThan(500);
  const runs = await failedRuns(first.url, scenario.id);
  expect(runs.items).toHaveLength(1);
  expect(runs.items[0]!.error).toMatch(
    /^step 0 \(setVariable\): .*was ended: it (used more than \d+ MB of memory|ran longer than \d+ ms)$/,
  );
  expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
  expect(first.child.exitCode).toBeNull();

  // A second poison request, then kill -9 at once: the restart may run it again, and must survive it.
  await fetch(`${first.url}/hook/${hook.key}?n=300000000`);
  first.child.kill('SIGKILL');
  await exited(first.child);

  const second = await start(port);
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  expect({ exitCode: second.child.exitCode, signal: second.child.signalCode }).toEqual({
    exitCode: null,
    signal: null,
  });
  expect((await fetch(`${second.url}/healthz`)).status).toBe(200);
  const after = await api<Runs>(second.url, 'GET', `/scenario/${scenario.id}/run`);
  expect(after.items.map((run) => run.status)).toEqual(['failed', 'failed']);
});
