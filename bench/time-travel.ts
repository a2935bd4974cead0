import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machineConditions, percentile, printFigure } from './report';
import { apiOf, headers, startServer } from './server';

/**
 * A record as of a moment (issue 32): one record with VERSIONS versions, read at random positions and times of
 * its life, one read at a time, beside the present read of the same record in the same run.
 */
const VERSIONS = Number(process.env.BENCH_VERSIONS ?? 1000);
const READS = Number(process.env.BENCH_READS ?? 1000);

async function timedReads(url: string, paths: readonly string[]): Promise<number[]> {
  const times: number[] = [];
  for (const path of paths) {
    const started = performance.now();
    const response = await fetch(`${url}/api${path}`, { headers });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status}`);
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-time-travel-'));
  const server = await startServer(dataDir, { SEMANTIC_SEARCH: 'false' });
  try {
    const call = apiOf(server.url);
    const space = await call<{ id: number }>('POST', '/space', { name: 'Past' });
    const module = await call<{ id: number }>('POST', '/module', { spaceId: space.id, name: 'Versions' });
    await call('POST', '/field', { moduleId: module.id, name: 'Stage', key: 'stage', type: 'text' });
    const created = await fetch(`${server.url}/api/record`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ moduleId: module.id, name: 'Versioned', fields: { stage: 'v0' } }),
    });
    const { id } = (await created.json()) as { id: number };
    const positions: string[] = [created.headers.get('x-position')!];
    const times: string[] = [];
    for (let version = 1; version < VERSIONS; version++) {
      const updated = await fetch(`${server.url}/api/record/${id}`, {
        method: 'PUT',
        headers,
        body: JSON.stringify({ fields: { stage: `v${version}` } }),
      });
      await updated.arrayBuffer();
      positions.push(updated.headers.get('x-position')!);
      if (version % 10 === 0) times.push(new Date().toISOString());
    }
    process.stdout.write(
      `# ${machineConditions()}; platform in its own process on embedded stores; one record with ${VERSIONS} versions, ${READS} reads one at a time\n`,
    );
    const pick = <T>(list: readonly T[]) => list[Math.floor(Math.random() * list.length)]!;
    await timedReads(
      server.url,
      Array.from({ length: 100 }, () => `/record/${id}`),
    );
    const present = await timedReads(
      server.url,
      Array.from({ length: READS }, () => `/record/${id}`),
    );
    const atPosition = await timedReads(
      server.url,
      Array.from({ length: READS }, () => `/record/${id}?atPosition=${pick(positions)}`),
    );
    const asOf = await timedReads(
      server.url,
      Array.from({ length: READS }, () => `/record/${id}?asOf=${encodeURIComponent(pick(times))}`),
    );
    printFigure(
      'record_present_p99',
      percentile(present, 99),
      'ms',
      undefined,
      'GET /record/{id}, the baseline',
    );
    printFigure(
      'record_at_position_p99',
      percentile(atPosition, 99),
      'ms',
      '≤ 10',
      `p50 ${percentile(atPosition, 50).toFixed(2)} ms; ${(percentile(atPosition, 99) / percentile(present, 99)).toFixed(1)}× the present read's p99`,
    );
    printFigure(
      'record_as_of_time_p99',
      percentile(asOf, 99),
      'ms',
      '≤ 10',
      `p50 ${percentile(asOf, 50).toFixed(2)} ms; found by the versions' times, no search of the log`,
    );
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
