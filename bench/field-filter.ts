import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, spawnBin } from '../test/support/child-platform';
import { machineConditions, percentile, printFigure } from './report';
import { api, headers, serverOf, TOKEN, type Server } from './server';

/**
 * Record lists filtered and ordered on a field value: 100,000 records in one module, then lists of 100
 * through `GET /module/{moduleId}/item` with a range filter on a number field ordered by it, and an option of
 * a select ordered by the number (target p99 ≤ 30 ms each), on the SQLite read store and, when `MONGO_URL`
 * is set, on the MongoDB read store (FerretDB in CI).
 */
const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 300);
const BATCH = 1000;
const STAGES = ['lead', 'qualified', 'won', 'lost'];

async function startPlatformWith(dataDir: string, env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const child = spawnBin('platform.ts', [], {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: TOKEN,
    LOG_LEVEL: 'warn',
    ...env,
  });
  return serverOf(child, port);
}

async function timeQueries(url: string, pathOf: (index: number) => string): Promise<number[]> {
  const durations: number[] = [];
  for (let index = 0; index < QUERIES; index++) {
    const started = performance.now();
    const response = await fetch(`${url}/api${pathOf(index)}`, { headers });
    const body = (await response.json()) as { items: unknown[] };
    if (response.status !== 200 || body.items.length === 0)
      throw new Error(`${pathOf(index)} answered ${response.status} with ${body.items?.length} items`);
    durations.push(performance.now() - started);
  }
  return durations.sort((a, b) => a - b);
}

async function run(store: string, env: Record<string, string>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-field-filter-'));
  const server = await startPlatformWith(dataDir, env);
  try {
    const space = await api<{ id: number }>(server.url, 'POST', '/space', { name: 'Bench' });
    const module = await api<{ id: number }>(server.url, 'POST', '/module', {
      spaceId: space.body.id,
      name: 'Deals',
    });
    const moduleId = module.body.id;
    for (const field of [
      { key: 'amount', type: 'number' },
      { key: 'stage', type: 'select', config: { options: STAGES } },
      { key: 'due', type: 'date' },
    ])
      await api(server.url, 'POST', '/field', { moduleId, name: field.key, ...field });

    let lastPosition = 0n;
    const loaded = performance.now();
    for (let offset = 0; offset < RECORDS; offset += BATCH) {
      const items = Array.from({ length: Math.min(BATCH, RECORDS - offset) }, (_, index) => {
        const n = offset + index;
        // A scrambled amount, so that the order of creation says nothing about the order of amounts.
        const amount = (n * 7919) % 100_000;
        const due = `2024-${String((n % 12) + 1).padStart(2, '0')}-${String((n % 28) + 1).padStart(2, '0')}`;
        return { moduleId, name: `Deal ${n}`, fields: { amount, stage: STAGES[n % STAGES.length]!, due } };
      });
      const response = await fetch(`${server.url}/api/record/bulk`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ items }),
      });
      const answer = (await response.json()) as { meta?: { failed: number } };
      if (response.status !== 200 || answer.meta?.failed !== 0)
        throw new Error(`bulk create answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
      const position = BigInt(response.headers.get('x-position') ?? '0');
      if (position > lastPosition) lastPosition = position;
    }
    for (;;) {
      const visible = await fetch(`${server.url}/api/record?limit=1`, {
        headers: { ...headers, 'x-min-position': String(lastPosition) },
      });
      await visible.arrayBuffer();
      if (visible.status === 200) break;
      if (visible.status !== 504) throw new Error(`waiting for the read models answered ${visible.status}`);
    }
    process.stderr.write(
      `${store}: ${RECORDS} records created and projected in ${((performance.now() - loaded) / 1000).toFixed(1)} s\n`,
    );

    const item = `/module/${moduleId}/item`;
    const range = await timeQueries(server.url, (index) => {
      const from = (index * 9973) % 90_000;
      return `${item}?filter=${encodeURIComponent(`amount>=${from}`)}&order=amount;ASC&limit=100`;
    });
    printFigure(
      `field_filter_range_ordered_p99_${store}`,
      percentile(range, 99),
      'ms',
      '<= 30',
      `${RECORDS} records in one module: filter amount>=<n> order=amount;ASC limit=100 with meta.total; p50 ${percentile(range, 50).toFixed(2)} ms`,
    );
    const option = await timeQueries(server.url, (index) => {
      const stage = STAGES[index % STAGES.length]!;
      return `${item}?filter=${encodeURIComponent(`stage=${stage}`)}&order=amount;DESC&limit=100&offset=${index % 5}`;
    });
    printFigure(
      `field_filter_option_ordered_p99_${store}`,
      percentile(option, 99),
      'ms',
      '<= 30',
      `${RECORDS} records in one module: filter stage=<option> (1 in 4) order=amount;DESC limit=100 with meta.total; p50 ${percentile(option, 50).toFixed(2)} ms, ${machineConditions()}`,
    );
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

(async () => {
  await run('sqlite', {});
  const mongoUrl = process.env.MONGO_URL;
  if (!mongoUrl) {
    process.stdout.write('skipped field_filter_*_mongodb: MONGO_URL is not set (no MongoDB-wire server)\n');
    return;
  }
  await run('mongodb', {
    READ_STORE: 'mongodb',
    MONGO_URL: mongoUrl,
    MONGO_DATABASE: `bench_fields_${randomUUID().slice(0, 8)}`,
  });
})().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
