import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeContract, mongoAvailability, type AdapterRun } from '../support/adapter-report';
import { exited, freePort, output, spawnBin, waitUntilReady } from '../support/child-platform';
import { dropMongoDatabase } from '../support/mongo';

/**
 * `~` / `!~` filters with many `%` over long values, through real HTTP. The platform runs in a child
 * process: a matcher that backtracked would freeze it, and the requests here would then time out (a
 * platform in this process would freeze the test runner's timers with it).
 */

const TOKEN = 'rpt_like-filter-token-0123456789abcdef';
jest.setTimeout(120_000);

interface Started {
  readonly url: string;
  readonly child: ChildProcess;
  readonly dataDir: string;
}

async function startPlatform(env: Record<string, string>): Promise<Started> {
  const dataDir = mkdtempSync(join(tmpdir(), 'records-like-'));
  const port = await freePort();
  const child = spawnBin('platform.ts', [], {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: TOKEN,
    ...env,
  });
  const logs = output(child);
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(url).catch(async (error: unknown) => {
    child.kill('SIGKILL');
    await exited(child);
    throw new Error(`${String(error)}\n${logs()}`);
  });
  return { url, child, dataDir };
}

async function stopPlatform(started: Started | undefined): Promise<void> {
  if (!started) return;
  if (started.child.exitCode === null) {
    started.child.kill('SIGTERM');
    await exited(started.child);
  }
  rmSync(started.dataDir, { recursive: true, force: true });
}

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

async function call(url: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${url}/api${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${TOKEN}`,
      ...(body !== undefined && { 'Content-Type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A module of records named by `names`; their ids in that order. */
async function seedRecords(
  url: string,
  names: readonly string[],
): Promise<{ moduleId: number; ids: number[] }> {
  const space = await call(url, 'POST', '/space', { name: 'Like' });
  const module = await call(url, 'POST', '/module', { spaceId: space.body.id, name: 'Long names' });
  const moduleId = module.body.id as number;
  const ids: number[] = [];
  for (let start = 0; start < names.length; start += 1000) {
    const bulk = await call(url, 'POST', '/record/bulk', {
      items: names.slice(start, start + 1000).map((name) => ({ moduleId, name })),
    });
    expect(bulk.status).toBe(200);
    for (const item of bulk.body.items as { status: number; id: number }[]) {
      expect(item.status).toBe(201);
      ids.push(item.id);
    }
  }
  return { moduleId, ids };
}

/** A list of the module's records under `filter`, `%` encoded; waits until the read models caught up. */
function listPath(moduleId: number, filter: string): string {
  return `/record?filter=${encodeURIComponent(`moduleId=${moduleId};${filter}`)}&order=id;ASC&limit=100`;
}

async function listIds(url: string, path: string): Promise<{ status: number; ids: number[] }> {
  const answer = await call(url, 'GET', path);
  const items = (answer.body.items as { id: number }[] | undefined) ?? [];
  return { status: answer.status, ids: items.map((item) => item.id) };
}

const RUNS: readonly (readonly [string, AdapterRun, () => Record<string, string>])[] = [
  ['sqlite read store', { kind: 'embedded' }, () => ({})],
  [
    'mongodb read store',
    mongoAvailability(process.env.MONGO_URL),
    () => ({
      READ_STORE: 'mongodb',
      MONGO_URL: process.env.MONGO_URL!,
      MONGO_DATABASE: `like_${randomUUID().slice(0, 8)}`,
    }),
  ],
];

for (const [adapter, availability, env] of RUNS) {
  describeContract('like filter e2e', adapter, availability, () => {
    let platform: Started | undefined;
    let environment: Record<string, string>;
    let moduleId: number;
    let ids: number[];

    beforeAll(async () => {
      environment = env();
      platform = await startPlatform(environment);
      // Names at the 500-character limit: the old matcher tried every way to split them among the `%`.
      ({ moduleId, ids } = await seedRecords(platform.url, [
        'a'.repeat(500),
        `${'a'.repeat(499)}b`,
        `${'ab'.repeat(250)}`,
        'Beta',
      ]));
      // The records are projected before the lists below (which then need not wait for them).
      for (let deadline = Date.now() + 20_000; Date.now() < deadline;) {
        if ((await listIds(platform.url, listPath(moduleId, 'name~%'))).ids.length === 4) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    });

    afterAll(async () => {
      await stopPlatform(platform);
      if (environment.MONGO_DATABASE)
        await dropMongoDatabase(environment.MONGO_URL, environment.MONGO_DATABASE);
    });

    test.each([
      ['~ with 30 % pieces, matching two long names', `name~${'%a'.repeat(30)}%b`, [1, 2]],
      ['~ with 60 % pieces, matching none', `name~${'%a'.repeat(60)}%c`, []],
      ['~ with overlapping pieces', `name~${'%aab'.repeat(20)}%`, []],
      ['~ with many two-letter pieces', `name~${'%ab'.repeat(100)}`, [2]],
      ['!~ with 30 % pieces', `name!~${'%a'.repeat(30)}%b`, [0, 3]],
      ['~ with _ and regex syntax, literal', 'name~%.*%_%', []],
    ])('%s answers correctly while another request is served', async (_description, filter, expected) => {
      const url = platform!.url;
      const heavy = listIds(url, listPath(moduleId, filter));
      const other = call(url, 'GET', `/record/${ids[3]}`);
      const [list, record] = await Promise.all([heavy, other]);
      expect(list).toEqual({ status: 200, ids: expected.map((index) => ids[index]) });
      expect(record).toMatchObject({ status: 200, body: { id: ids[3], name: 'Beta' } });
    });
  });
}
