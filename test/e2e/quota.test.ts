import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited, startServiceProcess } from '../support/child-platform';
import { ADMIN_TOKEN, json, startPlatform, type TestPlatform } from '../support/platform';

jest.setTimeout(120_000);

let platform: TestPlatform;

beforeAll(async () => {
  platform = await startPlatform({ QUOTA_CALLS_PER_MINUTE: '5' });
});

afterAll(async () => {
  await platform.stop();
});

test('a system over its per-minute quota gets 429 with RateLimit-* and Retry-After', async () => {
  const anonymous = await fetch(`${platform.api}/space`);
  expect(anonymous.status).toBe(401);
  expect(anonymous.headers.get('ratelimit-limit')).toBeNull();
  const statuses: number[] = [];
  let last: Response | undefined;
  for (let i = 0; i < 7; i++) {
    last = await platform.call('GET', '/space');
    statuses.push(last.status);
    if (last.status === 200) expect(Number(last.headers.get('ratelimit-remaining'))).toBe(4 - i);
  }
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
  expect(last!.headers.get('ratelimit-limit')).toBe('5');
  expect(last!.headers.get('ratelimit-remaining')).toBe('0');
  expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
  expect((await json(last!)).code).toBe('E4290');
});

test("a system's quota holds across processes: a query-api process and the platform share it", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'records-quota-'));
  const env = { DATA_DIR: dataDir, QUOTA_CALLS_PER_MINUTE: '10' };
  const shared = await startPlatform(env);
  const children: ChildProcess[] = [];
  try {
    const queries = await startServiceProcess('query-api', { ...env, ADMIN_TOKEN }, children);
    // The quota's window is the calendar minute: start early in one so the calls below stay within it.
    if (Date.now() % 60_000 > 40_000)
      await new Promise((resolve) => setTimeout(resolve, 60_000 - (Date.now() % 60_000)));
    const statuses: number[] = [];
    for (let call = 0; call < 16; call++) {
      const base = call % 2 === 0 ? shared.url : queries;
      const response = await fetch(`${base}/api/space`, {
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      statuses.push(response.status);
    }
    // Each process alone would have let ten through; together they let ten, (a block is one call when the quota is under twenty).
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.slice(10)).toEqual([429, 429, 429, 429, 429, 429]);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((child) => exited(child)));
    await shared.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
