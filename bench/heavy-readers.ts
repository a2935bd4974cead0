import { Agent } from 'node:http';
import { callHost, type HostAnswer as Answer } from '../test/support/host-call';
import { machineConditions, percentile, printFigure } from './report';
import { api, headers, runAgainstPlatform, TOKEN } from './server';

/**
 * One heavy reader must not starve everyone: system A (`test`) holds 100,000 records and 8 clients send it
 * the costliest valid lists they can (no-prefix `~` patterns with many `%` pieces, orders on unindexed
 * columns, deep offsets, totals), while one client reads a record of system B (`acme`) by id again and
 * again and another lists B's records. Figures: B's point-read latency and rate alone and under A's load
 * (target p99 ≤ 50 ms), B's list latency under that load, A's answers by status. The server runs with the environment's settings (READ_THREADS, QUERY_BUDGET_MS, …).
 */
const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const HEAVY_CLIENTS = Number(process.env.BENCH_HEAVY_CLIENTS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const BASELINE_SECONDS = 5;
const BATCH = 1000;

/** Valid lists whose every row goes through `~`, sorted where no index helps, paged deep, with a total. */
const HEAVY_LISTS = [
  `filter=${encodeURIComponent('name~%r%e%c%o%r%d%n%u%m%b%e%r%')}&order=createdAt;DESC&offset=90000&limit=100`,
  `filter=${encodeURIComponent('name~%1%2%3%4%5%;createdBy!~%z%z%z%')}&order=updatedBy;ASC&limit=1000`,
  `filter=${encodeURIComponent('name!~%q%q%q%q%q%')}&order=createdAt;ASC&offset=50000&limit=1000`,
  `filter=${encodeURIComponent('name~%e%e%e%e%e%e%e%e%')}&order=updatedAt;DESC&offset=99000&limit=1000`,
  // As many conditions as a filter may have (100), each true of every record: 100 `~` calls per record.
  `filter=${encodeURIComponent(Array.from({ length: 100 }, (_, index) => `name!~%q%${index}%`).join(';'))}&order=createdAt;DESC&offset=99000`,
];

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

const call = (url: string, host: string, token: string, method: string, path: string, body?: unknown) =>
  callHost(url, host, token, method, path, body, agent);

async function createdId(answer: Promise<Answer>): Promise<number> {
  const { status, text } = await answer;
  if (status !== 201) throw new Error(`create answered ${status}: ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { id: number }).id;
}

/** Sends one of B's GETs until `until` (at least once); the sorted latencies in ms. */
async function reads(
  url: string,
  token: string,
  path: string,
  until: number,
): Promise<{ sorted: number[]; seconds: number }> {
  const durations: number[] = [];
  const started = performance.now();
  do {
    const begun = performance.now();
    const answer = await call(url, 'acme.localhost', token, 'GET', path);
    if (answer.status !== 200)
      throw new Error(`B's GET ${path} answered ${answer.status}: ${answer.text.slice(0, 200)}`);
    durations.push(performance.now() - begun);
  } while (performance.now() < until);
  return { sorted: durations.sort((a, b) => a - b), seconds: (performance.now() - started) / 1000 };
}

function printPointReads(label: string, reads: { sorted: number[]; seconds: number }, target?: string): void {
  const notes = `${reads.sorted.length} reads, ${machineConditions()}`;
  printFigure(`heavy-readers.${label}.p50`, percentile(reads.sorted, 50), 'ms', undefined, notes);
  printFigure(`heavy-readers.${label}.p99`, percentile(reads.sorted, 99), 'ms', target, notes);
  printFigure(`heavy-readers.${label}.rate`, Math.round(reads.sorted.length / reads.seconds), 'req/s');
}

runAgainstPlatform('bench-heavy-readers-', async (server) => {
  const space = await api<{ id: number }>(server.url, 'POST', '/space', { name: 'Big' });
  const module = await api<{ id: number }>(server.url, 'POST', '/module', {
    spaceId: space.body.id,
    name: 'Many',
  });
  for (let start = 0; start < RECORDS; start += BATCH) {
    const items = Array.from({ length: Math.min(BATCH, RECORDS - start) }, (_, index) => ({
      moduleId: module.body.id,
      name: `Record number ${start + index} of the heavy readers benchmark`,
    }));
    const response = await fetch(`${server.url}/api/record/bulk`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ items }),
    });
    if (response.status !== 200) throw new Error(`bulk create answered ${response.status}`);
    await response.arrayBuffer();
  }
  const provisioned = await api<{ token: string }>(server.url, 'POST', '/system', {
    system: 'acme',
    adminEmail: 'owner@acme.example',
  });
  const acmeToken = provisioned.body.token;
  const onB = (method: string, path: string, body: unknown): Promise<Answer> =>
    call(server.url, 'acme.localhost', acmeToken, method, path, body);
  const bSpace = await createdId(onB('POST', '/space', { name: 'Small' }));
  const bModule = await createdId(onB('POST', '/module', { spaceId: bSpace, name: 'Few' }));
  let bRecord = 0;
  for (let index = 0; index < 5; index++)
    bRecord = await createdId(onB('POST', '/record', { moduleId: bModule, name: `Record ${index}` }));
  // The projections' catch-up after the bulk load is not what this measures: wait for it (504: not yet).
  while ((await call(server.url, 'acme.localhost', acmeToken, 'GET', `/record/${bRecord}`)).status === 504);
  await new Promise((resolve) => setTimeout(resolve, 1000));

  printPointReads(
    'b-get-alone',
    await reads(server.url, acmeToken, `/record/${bRecord}`, performance.now() + BASELINE_SECONDS * 1000),
  );

  const outcomes = new Map<number, number>();
  const heavyDurations: number[] = [];
  const until = performance.now() + SECONDS * 1000;
  const heavyClient = async (client: number): Promise<void> => {
    for (let index = client; performance.now() < until; index += HEAVY_CLIENTS) {
      const begun = performance.now();
      const answer = await call(
        server.url,
        'test.localhost',
        TOKEN,
        'GET',
        `/record?${HEAVY_LISTS[index % HEAVY_LISTS.length]}`,
      );
      heavyDurations.push(performance.now() - begun);
      outcomes.set(answer.status, (outcomes.get(answer.status) ?? 0) + 1);
    }
  };
  const [pointReads, listReads] = await Promise.all([
    reads(server.url, acmeToken, `/record/${bRecord}`, until),
    // B's own lists share the read threads with A's: each waits for at most the queries already running.
    reads(server.url, acmeToken, '/record?limit=10', until),
    ...Array.from({ length: HEAVY_CLIENTS }, (_, client) => heavyClient(client)),
  ]);
  printPointReads('b-get-under-load', pointReads, '≤ 50 ms');
  printPointReads('b-list-under-load', listReads);
  const count = (status: number): number => outcomes.get(status) ?? 0;
  const others = [...outcomes.entries()].filter(([status]) => ![200, 422, 429].includes(status));
  const notes = `${HEAVY_CLIENTS} clients, ${RECORDS} records, ${SECONDS} s`;
  printFigure('heavy-readers.a-completed', count(200), 'lists', undefined, notes);
  printFigure('heavy-readers.a-refused-too-expensive', count(422), 'lists', undefined, 'E4220');
  printFigure('heavy-readers.a-refused-queue-full', count(429), 'lists', undefined, 'E4290');
  printFigure(
    'heavy-readers.a-other',
    others.reduce((sum, [, n]) => sum + n, 0),
    'answers',
    undefined,
    JSON.stringify(others),
  );
  heavyDurations.sort((a, b) => a - b);
  printFigure('heavy-readers.a-latency.p50', percentile(heavyDurations, 50), 'ms');
  agent.destroy();
});
