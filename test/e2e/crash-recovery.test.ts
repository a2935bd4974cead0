import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { exited, freePort, output, spawnBin, startPlatformProcess } from '../support/child-platform';

const TOKEN = 'rpt_crash-test-token-0123456789abcdef';
jest.setTimeout(180_000);

let dataDir: string;
let child: ChildProcess | undefined;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'records-crash-'));
});

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await exited(child);
  }
  rmSync(dataDir, { recursive: true, force: true });
});

async function startServer(port: number): Promise<string> {
  let url: string;
  ({ child, url } = await startPlatformProcess(port, {
    DATA_DIR: dataDir,
    ADMIN_TOKEN: TOKEN,
  }));
  return url;
}

async function call(url: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${url}/api${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${TOKEN}`,
      ...(body !== undefined && { 'Content-Type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
}

/** Every record as the query API serves it, in id order, hashed. */
async function recordsDigest(url: string): Promise<{ digest: string; count: number }> {
  const hash = createHash('sha256');
  let count = 0;
  for (let offset = 0; ; offset += 1000) {
    const page = (await (
      await call(url, 'GET', `/record?order=id;ASC&limit=1000&offset=${offset}`)
    ).json()) as { items: unknown[] };
    for (const item of page.items) hash.update(JSON.stringify(item));
    count += page.items.length;
    if (page.items.length < 1000) break;
  }
  return { digest: hash.digest('hex'), count };
}

test('kill -9 during a stream of writes loses no acknowledged write, and read models equal a full rebuild', async () => {
  const port = await freePort();
  let url = await startServer(port);
  const space = (await (await call(url, 'POST', '/space', { name: 'Crash' })).json()) as { id: number };
  const module = (await (
    await call(url, 'POST', '/module', { spaceId: space.id, name: 'Writes' })
  ).json()) as { id: number };

  const acknowledged = new Map<number, string>();
  let stop = false;
  const writer = async (worker: number): Promise<void> => {
    for (let i = 0; !stop && i < 100_000; i++) {
      const name = `w${worker}-${i}`;
      try {
        const response = await call(url, 'POST', '/record', { moduleId: module.id, name });
        if (response.status === 201) acknowledged.set(((await response.json()) as { id: number }).id, name);
      } catch {
        return;
      }
    }
  };
  const writers = Array.from({ length: 8 }, (_, worker) => writer(worker));
  const deadline = Date.now() + 20_000;
  while (acknowledged.size < 300 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  child!.kill('SIGKILL');
  await exited(child!);
  stop = true;
  await Promise.all(writers);
  expect(acknowledged.size).toBeGreaterThanOrEqual(300);

  url = await startServer(port);
  for (const [id, name] of acknowledged) {
    const response = await call(url, 'GET', `/record/${id}`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { name: string }).name).toBe(name);
  }

  const live = await recordsDigest(url);
  expect(live.count).toBeGreaterThanOrEqual(acknowledged.size);
  const replay = spawnBin('replay.ts', ['records'], { DATA_DIR: dataDir });
  const replayLogs = output(replay);
  expect(await exited(replay)).toBe(0);
  expect(replayLogs()).toMatch(/rebuilt records v1 → v2: \d+ events/);
  const switchDeadline = Date.now() + 10_000;
  let metrics = '';
  while (Date.now() < switchDeadline && !metrics.includes('projection="records",version="2"')) {
    metrics = await (await fetch(`${url}/metrics`)).text();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(metrics).toContain('projection="records",version="2"');
  const rebuilt = await recordsDigest(url);
  expect(rebuilt).toEqual(live);
});
