import autocannon from 'autocannon';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { currentDocumentJson } from '../bin/api-descriptions';
import { machineConditions, percentile, printFigure } from './report';
import { startServer } from './server';

/**
 * The API description: how long building the OpenAPI document from the operation table takes (targets ≤ 1 s),
 * and how fast `/api/latest.json` is served from memory under load (p99 ≤ 5 ms).
 */
const BUILDS = 20;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);

async function main(): Promise<void> {
  const times: number[] = [];
  for (let build = 0; build < BUILDS; build++) {
    const started = process.hrtime.bigint();
    currentDocumentJson();
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  const first = times[0]!;
  const sorted = [...times].sort((a, b) => a - b);
  printFigure('openapi_build_first', first, 'ms', '≤ 1000 ms', 'first build in a fresh process');
  printFigure('openapi_build_median', percentile(sorted, 50), 'ms', '≤ 1000 ms', `${BUILDS} builds`);
  printFigure('openapi_document_size', Buffer.byteLength(currentDocumentJson()) / 1024, 'KiB');

  const dataDir = mkdtempSync(join(tmpdir(), 'bench-openapi-'));
  const server = await startServer(dataDir);
  try {
    for (const connections of [1, 10])
      for (const [encoding, headers] of [
        ['gzip', { 'accept-encoding': 'gzip' }],
        ['identity', {}],
      ] as const) {
        const result = await autocannon({
          url: `${server.url}/api/latest.json`,
          connections,
          duration: DURATION_S,
          headers,
        });
        if (result.non2xx > 0) throw new Error(`${result.non2xx} answers were not 2xx`);
        const name = `latest_json_${encoding}_${connections}c`;
        printFigure(`${name}_requests_per_s`, result.requests.average, 'req/s');
        printFigure(`${name}_p50`, result.latency.p50, 'ms');
        printFigure(
          `${name}_p99`,
          result.latency.p99,
          'ms',
          '≤ 5 ms',
          `${connections} connections; ${machineConditions()}`,
        );
      }
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
