import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machineConditions, median, printFigure } from './report';
import { benchModule, postRecordLoad, rssMb, startServer } from './server';

/**
 * Models never slow the API (issue 33): `POST /record` throughput with semantic search on (the embedded
 * model embeds every record written, on its own thread, paced by EMBEDDING_BUSY_SHARE while requests come
 * in) against the same load with it off, in alternating rounds of the same run. Also the resident memory
 * under load without the model and with it (the model's part is the difference), and how long the vector
 * projection takes to catch up once the load stops.
 *
 * `npx tsx bench/models-and-api.ts`; BENCH_ROUNDS (3), BENCH_DURATION_S (10), BENCH_CONNECTIONS (16).
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

interface Round {
  readonly rate: number;
  readonly p99: number;
  readonly rssMb: number;
  readonly peakRssMb: number;
  /** With the model: seconds from the end of the load until every record written is embedded. */
  readonly catchUpS?: number;
}

async function vectorLag(url: string): Promise<number> {
  const metrics = await (await fetch(`${url}/metrics`)).text();
  const lag = /^projection_lag_positions\{projection="vectors",version="1"\} (\d+)$/m.exec(metrics)?.[1];
  if (lag === undefined) throw new Error('the platform reports no vector projection lag');
  return Number(lag);
}

async function round(semantic: boolean): Promise<Round> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-models-'));
  const server = await startServer(dataDir, { SEMANTIC_SEARCH: String(semantic) });
  try {
    const { body } = await benchModule(server.url);
    const posts = await postRecordLoad(server.url, body, CONNECTIONS, DURATION_S);
    if (posts.non2xx > 0 || posts.errors > 0)
      throw new Error(`${posts.non2xx} non-2xx answers and ${posts.errors} errors under load`);
    const rss = rssMb(server.pid, 'VmRSS');
    let catchUpS: number | undefined;
    if (semantic) {
      const stopped = performance.now();
      while ((await vectorLag(server.url)) > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      catchUpS = (performance.now() - stopped) / 1000;
    }
    return {
      rate: posts.requests.average,
      p99: posts.latency.p99,
      rssMb: rss,
      peakRssMb: rssMb(server.pid, 'VmHWM'),
      ...(catchUpS !== undefined && { catchUpS }),
    };
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  process.stdout.write(`# models and the API: ${machineConditions()}\n`);
  const on: Round[] = [];
  const off: Round[] = [];
  for (let index = 0; index < ROUNDS; index++) {
    for (const semantic of index % 2 === 0 ? [true, false] : [false, true]) {
      const measured = await round(semantic);
      (semantic ? on : off).push(measured);
      process.stdout.write(
        `# round ${index + 1}, semantic search ${semantic ? 'on' : 'off'}: ${Math.round(measured.rate)} requests/s, p99 ${measured.p99} ms, RSS ${measured.rssMb} MB (peak ${measured.peakRssMb} MB)${measured.catchUpS === undefined ? '' : `, vectors caught up ${measured.catchUpS.toFixed(1)} s after the load`}\n`,
      );
    }
  }
  const ratios = on.map((measured, index) => measured.rate / off[index]!.rate);
  const conditions = `autocannon ${CONNECTIONS} connections × ${DURATION_S} s per round, ${ROUNDS} rounds alternating, ${machineConditions()}`;
  printFigure(
    'models.post_record_with_model_to_without',
    median(ratios),
    'x',
    '>= 0.9',
    `median of the rounds' ratios (${ratios.map((ratio) => ratio.toFixed(2)).join(' ')}); with ${Math.round(median(on.map((r) => r.rate)))} requests/s, without ${Math.round(median(off.map((r) => r.rate)))}; ${conditions}`,
  );
  printFigure(
    'models.peak_rss_without_model',
    median(off.map((r) => r.peakRssMb)),
    'MB',
    '<= 300',
    `median peak RSS of the platform under the POST load, semantic search off; ${conditions}`,
  );
  printFigure(
    'models.model_rss_apart',
    median(on.map((r) => r.peakRssMb)) - median(off.map((r) => r.peakRssMb)),
    'MB',
    undefined,
    `median peak RSS with the model ${median(on.map((r) => r.peakRssMb))} MB less without it`,
  );
  printFigure(
    'models.vector_catch_up_s',
    median(on.map((r) => r.catchUpS!)),
    's',
    undefined,
    `median time from the end of the load until every record is embedded (the projection paced while requests came in, at full speed after)`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
