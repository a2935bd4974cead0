import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited, freePort, startPlatformProcess } from '../support/child-platform';

/**
 * `kill -9` while records are written and embedded: after the restart the vector projection takes up where its
 * checkpoint was, and the index converges on the records as they stand — every live record searchable once,
 * each found by its own text.
 */
const TOKEN = 'rpt_semantic-crash-token-0123456789ab';
jest.setTimeout(240_000);

let dataDir: string;
let child: ChildProcess | undefined;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'records-semantic-crash-'));
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
    SEMANTIC_SEARCH: 'true',
  }));
  return url;
}

function call(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  return fetch(`${url}/api${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${TOKEN}`,
      ...(body !== undefined && { 'Content-Type': 'application/json' }),
      ...headers,
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
}

const TOPICS = ['invoice payment', 'parcel delivery', 'password login', 'kitten photo', 'server outage'];

test('kill -9 during writes: after the restart every live record is searchable once, by its own text', async () => {
  const port = await freePort();
  let url = await startServer(port);
  const space = (await (await call(url, 'POST', '/space', { name: 'Crash' })).json()) as { id: number };
  const module = (await (
    await call(url, 'POST', '/module', { spaceId: space.id, name: 'Notes' })
  ).json()) as {
    id: number;
  };
  let acknowledged = 0;
  let highest = 0n;
  let stop = false;
  const writer = async (worker: number) => {
    for (let n = 0; !stop; n++) {
      try {
        const response = await call(url, 'POST', '/record', {
          moduleId: module.id,
          name: `Note ${worker}-${n} about ${TOPICS[(worker + n) % TOPICS.length]}`,
        });
        if (response.status !== 201) return;
        acknowledged++;
        const position = BigInt(response.headers.get('x-position')!);
        if (position > highest) highest = position;
      } catch {
        return;
      }
    }
  };
  const writers = Array.from({ length: 4 }, (_, worker) => writer(worker));
  while (acknowledged < 150) await new Promise((resolve) => setTimeout(resolve, 10));
  child!.kill('SIGKILL');
  await exited(child!);
  stop = true;
  await Promise.all(writers);

  url = await startServer(port);
  const records = (await (
    await call(url, 'GET', `/record?filter=moduleId=${module.id}&limit=1000`)
  ).json()) as {
    items: Array<{ id: number; name: string }>;
    meta: { total: number };
  };
  expect(records.meta.total).toBeGreaterThanOrEqual(acknowledged);
  // Wait for the vectors of every acknowledged write (504 while the projection catches up).
  const similar = (query: string, limit: number) =>
    call(
      url,
      'GET',
      `/record/vector/similar?space_id=${space.id}&limit=${limit}&query=${encodeURIComponent(query)}`,
      undefined,
      { 'X-Min-Position': String(highest) },
    );
  const deadline = Date.now() + 180_000;
  let answer = await similar('note', 1000);
  while (answer.status === 504 && Date.now() < deadline) answer = await similar('note', 1000);
  expect(answer.status).toBe(200);
  const all = (await answer.json()) as { items: Array<{ id: number }>; meta: { searched: number } };
  expect(all.meta.searched).toBe(records.meta.total);
  expect(new Set(all.items.map((item) => item.id)).size).toBe(records.meta.total);
  // A sample, each found first by its own name.
  for (const record of records.items.filter((_, index) => index % 25 === 0)) {
    const found = (await (await similar(record.name, 3)).json()) as {
      items: Array<{ id: number; similarity: number }>;
    };
    expect(found.items[0]).toMatchObject({ id: record.id });
    expect(found.items[0]!.similarity).toBeGreaterThan(0.99);
  }
});
