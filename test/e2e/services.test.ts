import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { exited, startServiceProcess } from '../support/child-platform';

const TOKEN = 'rpt_services-test-token-0123456789abcdef';
jest.setTimeout(120_000);

let dataDir: string;
const children: ChildProcess[] = [];

const startService = (name: string) =>
  startServiceProcess(name, { DATA_DIR: dataDir, ADMIN_TOKEN: TOKEN }, children);

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'records-services-'));
});

afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((child) => exited(child)));
  rmSync(dataDir, { recursive: true, force: true });
});

test('command-api, query-api and projections as separate processes: a write is read back through X-Min-Position', async () => {
  const commands = await startService('command-api');
  await startService('projections');
  const queries = await startService('query-api');
  const headers = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };

  const space = await fetch(`${commands}/api/space`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'Split' }),
  });
  expect(space.status).toBe(201);
  const spaceId = ((await space.json()) as { id: number }).id;
  const position = space.headers.get('x-position')!;

  const deadline = Date.now() + 20_000;
  let read: Response;
  do {
    // The query API authenticates from the identity read model, which the projections process builds.
    read = await fetch(`${queries}/api/space/${spaceId}`, {
      headers: { ...headers, 'X-Min-Position': position },
    });
    if (read.status !== 401) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  } while (Date.now() < deadline);
  expect(read.status).toBe(200);
  expect(await read.json()).toMatchObject({ id: spaceId, name: 'Split' });

  expect((await fetch(`${queries}/api/space`, { method: 'POST', headers, body: '{}' })).status).toBe(404);
  expect((await fetch(`${commands}/api/space/${spaceId}`, { headers })).status).toBe(404);
});
