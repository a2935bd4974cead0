import { machineConditions, percentile, printFigure } from './report';
import { api, bulkCreate, headers, runAgainstPlatform, waitUntilVisible } from './server';

/**
 * The records domain on the embedded adapters, server in its own process:
 * - bulk create through `POST /record/bulk` (target ≥ 10,000 records/s);
 * - with 100,000 records in one space: `GET /record` with a selective filter and `order` (target p99 ≤ 30 ms)
 *   and a page of 100 with `meta.total` (target p99 ≤ 50 ms).
 */
const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const BATCH = 1000;
const MODULES = 20;
const QUERIES = Number(process.env.BENCH_QUERIES ?? 300);
/** Bulk requests in flight at once: an importer overlaps preparing its next request with the server's work. */
const BULK_CLIENTS = Number(process.env.BENCH_BULK_CLIENTS ?? 2);

/** One query, `count` times in a row; the sorted durations in ms. */
async function timeQueries(url: string, pathOf: (index: number) => string, count: number): Promise<number[]> {
  const durations: number[] = [];
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    const response = await fetch(`${url}/api${pathOf(index)}`, { headers });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${pathOf(index)} answered ${response.status}`);
    durations.push(performance.now() - started);
  }
  return durations.sort((a, b) => a - b);
}

runAgainstPlatform('bench-records-', async (server) => {
  const space = await api<{ id: number }>(server.url, 'POST', '/space', { name: 'Bench' });
  const modules: number[] = [];
  for (let index = 0; index < MODULES; index++) {
    const module = await api<{ id: number }>(server.url, 'POST', '/module', {
      spaceId: space.body.id,
      name: `Module ${index}`,
    });
    modules.push(module.body.id);
    for (const field of [
      { key: 'amount', type: 'number' },
      { key: 'stage', type: 'select', config: { options: ['lead', 'qualified', 'won', 'lost'] } },
    ])
      await api(server.url, 'POST', '/field', { moduleId: module.body.id, name: field.key, ...field });
  }
  const stages = ['lead', 'qualified', 'won', 'lost'];

  let lastPosition = 0n;
  let nextOffset = 0;
  const sendBatches = async (): Promise<void> => {
    for (let offset = nextOffset; offset < RECORDS; offset = nextOffset) {
      nextOffset += BATCH;
      const items = Array.from({ length: Math.min(BATCH, RECORDS - offset) }, (_, index) => {
        const n = offset + index;
        return {
          moduleId: modules[n % MODULES]!,
          name: `Record ${n}`,
          fields: { amount: n % 10_000, stage: stages[n % stages.length]! },
        };
      });
      const position = await bulkCreate(server.url, items);
      if (position > lastPosition) lastPosition = position;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: BULK_CLIENTS }, sendBatches));
  const seconds = (performance.now() - started) / 1000;
  printFigure(
    'bulk_create_records',
    Math.round(RECORDS / seconds),
    'records/s',
    '>= 10000',
    `${RECORDS} records in requests of ${BATCH}, ${BULK_CLIENTS} in flight, answered (committed); projections follow`,
  );

  // The read models must hold every record before the list figures mean anything.
  const caughtUp = performance.now();
  await waitUntilVisible(server.url, lastPosition);
  process.stderr.write(
    `read models caught up ${((performance.now() - caughtUp) / 1000).toFixed(1)} s after the last bulk answer\n`,
  );

  const selective = await timeQueries(
    server.url,
    (index) =>
      `/record?filter=${encodeURIComponent(`moduleId=${modules[index % MODULES]};name~Record 1234%`)}&order=updatedAt;DESC&limit=20`,
    QUERIES,
  );
  printFigure(
    'list_selective_filter_ordered_p99',
    percentile(selective, 99),
    'ms',
    '<= 30',
    `${RECORDS} records: filter moduleId=<m>;name~Record 1234% order=updatedAt;DESC limit=20; p50 ${percentile(selective, 50).toFixed(2)} ms`,
  );
  const pages = await timeQueries(
    server.url,
    (index) =>
      `/record?filter=spaceId=${space.body.id}&order=id;ASC&limit=100&offset=${(index * 100) % RECORDS}`,
    QUERIES,
  );
  printFigure(
    'list_page_100_with_total_p99',
    percentile(pages, 99),
    'ms',
    '<= 50',
    `${RECORDS} records: filter spaceId=<s> order=id;ASC limit=100 with meta.total; p50 ${percentile(pages, 50).toFixed(2)} ms, ${machineConditions()}`,
  );
});
