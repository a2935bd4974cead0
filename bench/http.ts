import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/support/child-platform';
import { rawSingleAppendRate } from './raw-append';
import { machineConditions, percentile, printFigure } from './report';
import {
  api,
  benchModule,
  headers,
  load,
  postRecordLoad,
  rssMb,
  runAgainstPlatform,
  serverOf,
  TOKEN,
  type Server,
} from './server';

/**
 * The HTTP figures of the one-process platform (embedded adapters), the server in its own process and the
 * load generator (autocannon) in this one, on the same 2-core machine:
 * - POST /record throughput and p99 (targets ≥ 2,000 requests/s, p99 ≤ 25 ms, and of issue 33: p99 ≤ 15 ms
 *   and ≥ 0.4× raw single-event appends into SQLite measured in the same run, just before);
 * - GET /record/{id} throughput (target ≥ 5,000/s, and ≥ 0.6× a bare express route in the same run);
 * - write-to-visible lag (POST, then the GET that first sees it; target p99 ≤ 10 ms), idle and under load;
 * - resident memory of the server under that load (target ≤ 300 MB).
 */
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

/** The bare express app of bare-express-server.ts, in its own process like the platform. */
async function startBareExpress(): Promise<Server> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--require', require.resolve('tsx/cjs'), join(__dirname, 'bare-express-server.ts')],
    {
      env: { ...process.env, PORT: String(port) },
      stdio: 'ignore',
    },
  );
  return serverOf(child, port);
}

/** GET load on `url` (random ids up to `maxId`) with autocannon. */
function getLoad(url: string, maxId: number): Promise<autocannon.Result> {
  return load({
    url,
    headers,
    connections: CONNECTIONS,
    duration: DURATION_S,
    requests: [
      {
        method: 'GET',
        setupRequest: (request) => ({
          ...request,
          path: `/api/record/${1 + Math.floor(Math.random() * maxId)}`,
        }),
      },
    ],
  });
}

/** The records projection's write-to-visible lag quantile, measured in the server (commit → applied). */
async function serverVisibleLagMs(url: string, quantile: string): Promise<number> {
  const metrics = await (await fetch(`${url}/metrics`)).text();
  const match = new RegExp(
    `projection_visible_lag_seconds\\{quantile="${quantile}",projection="records"\\} ([0-9.e+-]+)`,
  ).exec(metrics);
  if (!match) throw new Error('projection_visible_lag_seconds missing from /metrics');
  return Number(match[1]) * 1000;
}

/** POST a record, then GET it (no header: one-process read-your-writes); the GET's time is the lag seen. */
async function measureLag(
  url: string,
  moduleId: number,
  until: () => boolean,
  maxSamples: number,
): Promise<number[]> {
  const samples: number[] = [];
  while (samples.length < maxSamples && !until()) {
    const created = await api<{ id: number }>(url, 'POST', '/record', { moduleId, name: 'lag probe' });
    const start = performance.now();
    const read = await fetch(`${url}/api/record/${created.body.id}`, { headers });
    await read.arrayBuffer();
    if (read.status !== 200) throw new Error(`lag probe read answered ${read.status}`);
    samples.push(performance.now() - start);
  }
  return samples.sort((a, b) => a - b);
}

/**
 * The same loads driven by wrk (a C client, far lighter than autocannon on a 2-core machine) when it is
 * installed (`apt-get install wrk`); skipped, with a line saying so, when it is not.
 */
async function wrkFigures(url: string, moduleId: number, maxId: number): Promise<void> {
  if (spawnSync('wrk', ['--version']).error) {
    process.stdout.write('wrk not installed: the wrk figures are skipped (apt-get install wrk)\n');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  try {
    const post = join(dir, 'post.lua');
    writeFileSync(
      post,
      `wrk.method = "POST"\nwrk.body = '${JSON.stringify({ moduleId, name: 'Bench record', fields: { amount: 1200 } })}'\nwrk.headers["Content-Type"] = "application/json"\n`,
    );
    const get = join(dir, 'get.lua');
    writeFileSync(
      get,
      `request = function() return wrk.format("GET", "/api/record/" .. math.random(1, ${maxId})) end\n`,
    );
    for (const [name, script, path, target] of [
      ['post_record_throughput_wrk', post, '/api/record', '>= 2000'],
      ['get_record_throughput_wrk', get, '/', '>= 5000'],
    ] as const) {
      const run = spawnSync(
        'wrk',
        [
          '-t1',
          `-c${CONNECTIONS}`,
          `-d${DURATION_S}s`,
          '--latency',
          '-H',
          `Authorization: Bearer ${TOKEN}`,
          '-s',
          script,
          `${url}${path}`,
        ],
        { encoding: 'utf8' },
      );
      const rate = /Requests\/sec:\s+([\d.]+)/.exec(run.stdout);
      const p99 = /99%\s+([\d.]+)(us|ms|s)/.exec(run.stdout);
      const errors = /Non-2xx or 3xx responses: (\d+)/.exec(run.stdout);
      const p99Ms = p99 ? Number(p99[1]) * (p99[2] === 'us' ? 0.001 : p99[2] === 's' ? 1000 : 1) : NaN;
      printFigure(
        name,
        Math.round(Number(rate?.[1] ?? NaN)),
        'requests/s',
        target,
        `wrk, ${CONNECTIONS} connections, ${DURATION_S} s, p99 ${p99Ms} ms, ${errors?.[1] ?? 0} non-2xx`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

runAgainstPlatform('bench-http-', async (server) => {
  const { module, body } = await benchModule(server.url);

  const idle = await measureLag(server.url, module.body.id, () => false, 1000);
  printFigure(
    'write_to_visible_lag_idle_p99',
    await serverVisibleLagMs(server.url, '0.99'),
    'ms',
    '<= 10',
    `server-side, commit → applied in the records projection; p50 ${(await serverVisibleLagMs(server.url, '0.5')).toFixed(2)} ms`,
  );
  printFigure(
    'write_then_read_idle_p99',
    percentile(idle, 99),
    'ms',
    undefined,
    `client view: POST answered → GET answered with the record; p50 ${percentile(idle, 50).toFixed(2)} ms, ${idle.length} samples`,
  );

  // The creates' baseline, in this process while the platform idles: raw appends, one event a transaction.
  const rawDir = mkdtempSync(join(tmpdir(), 'bench-http-raw-'));
  const rawAppends = await rawSingleAppendRate(rawDir).finally(() =>
    rmSync(rawDir, { recursive: true, force: true }),
  );

  let loadDone = false;
  const lagUnderLoad = measureLag(server.url, module.body.id, () => loadDone, 100_000);
  const posts = await postRecordLoad(server.url, body, CONNECTIONS, DURATION_S);
  loadDone = true;
  const loaded = await lagUnderLoad;
  const rssAfterPosts = rssMb(server.pid, 'VmRSS');
  printFigure(
    'post_record_throughput',
    Math.round(posts.requests.average),
    'requests/s',
    '>= 2000',
    `${CONNECTIONS} connections, ${DURATION_S} s, ${posts.non2xx} non-2xx, ${posts.errors} errors`,
  );
  printFigure(
    'raw_single_event_append_baseline',
    Math.round(rawAppends),
    'events/s',
    undefined,
    'better-sqlite3 on the event table, one event per IMMEDIATE transaction, synchronous=NORMAL, just before the POST load',
  );
  printFigure('post_record_to_raw_append', posts.requests.average / rawAppends, '×', '>= 0.4');
  printFigure(
    'post_record_latency_p99',
    posts.latency.p99,
    'ms',
    '<= 25 (issue 33: <= 15)',
    `p50 ${posts.latency.p50} ms`,
  );
  printFigure(
    'write_to_visible_lag_under_load_p99',
    await serverVisibleLagMs(server.url, '0.99'),
    'ms',
    '<= 10',
    `server-side during the POST load (60 s window); p50 ${(await serverVisibleLagMs(server.url, '0.5')).toFixed(2)} ms`,
  );
  printFigure(
    'write_then_read_under_load_p99',
    percentile(loaded, 99),
    'ms',
    undefined,
    `client view incl. queueing behind ${CONNECTIONS} connections; p50 ${percentile(loaded, 50).toFixed(2)} ms, ${loaded.length} samples`,
  );

  const maxId = (
    await api<{ items: Array<{ id: number }> }>(server.url, 'GET', '/record?order=id;DESC&limit=1')
  ).body.items[0]!.id;
  const gets = await getLoad(server.url, maxId);
  printFigure(
    'get_record_throughput',
    Math.round(gets.requests.average),
    'requests/s',
    '>= 5000',
    `${CONNECTIONS} connections, ${DURATION_S} s, ${gets.non2xx} non-2xx, p99 ${gets.latency.p99} ms, ${maxId} records`,
  );
  await wrkFigures(server.url, module.body.id, maxId);
  const bare = await startBareExpress();
  try {
    const bareGets = await getLoad(bare.url, maxId);
    printFigure(
      'get_bare_express_reference',
      Math.round(bareGets.requests.average),
      'requests/s',
      undefined,
      `the ceiling for comparison: an express 5 route answering JSON from memory, same autocannon load; p99 ${bareGets.latency.p99} ms`,
    );
    printFigure(
      'get_record_to_bare_express',
      gets.requests.average / bareGets.requests.average,
      '×',
      '>= 0.6',
    );
  } finally {
    await bare.stop();
  }
  printFigure(
    'server_rss_after_load',
    Math.round(Math.max(rssAfterPosts, rssMb(server.pid, 'VmRSS'))),
    'MB',
    '<= 300',
  );
  printFigure('server_peak_rss', Math.round(rssMb(server.pid, 'VmHWM')), 'MB', '<= 300', machineConditions());
});
