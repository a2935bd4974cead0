import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unitVector } from '../infra/ai/embeddings/port';
import { EmbeddedVectorIndex } from '../infra/vector-index/embedded';
import type { VectorQuery } from '../infra/vector-index/port';
import { machineConditions, percentile, printFigure } from './report';

/**
 * The embedded vector index with 100,000 records of 512 dimensions in one space (issue 20's figures, the query
 * embedding excluded): `similar` without and with a filter keeping 1%, `outliers`, the memory the space takes,
 * and recall@20 against an exact search. The vectors are synthetic but shaped like sentence embeddings: topics
 * (clusters) with a direction all of them share.
 */
const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const DIMENSION = 512;
const QUERIES = 200;
const LIMIT = 20;

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const next = random(42);
const shared = Float32Array.from({ length: DIMENSION }, () => next() * 2 - 1);
const topics = Array.from({ length: 2000 }, () =>
  Float32Array.from({ length: DIMENSION }, () => next() * 2 - 1),
);
function sentenceLike(): Float32Array {
  const topic = topics[Math.floor(next() * topics.length)]!;
  return unitVector(topic.map((value, index) => value + 0.7 * shared[index]! + (next() * 2 - 1) * 0.9));
}

function timed(samples: number[], run: () => Promise<unknown>): Promise<unknown> {
  const started = performance.now();
  return run().then((result) => {
    samples.push(performance.now() - started);
    return result;
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-vectors-'));
  const index = EmbeddedVectorIndex.open(join(dir, 'vectors.db'), DIMENSION);
  try {
    process.stdout.write(
      `# ${machineConditions()}; ${RECORDS} records × ${DIMENSION} dimensions in one space\n`,
    );
    const vectors: Float32Array[] = [];
    const writeStarted = performance.now();
    for (let start = 0; start < RECORDS; start += 1000) {
      const batch = Array.from({ length: Math.min(1000, RECORDS - start) }, (_, offset) => {
        const vector = sentenceLike();
        vectors.push(vector);
        return {
          tenant: 'bench',
          recordId: start + offset + 1,
          spaceId: 1,
          moduleId: (start + offset) % 5,
          position: BigInt(start + offset + 1),
          vectors: [vector],
        };
      });
      await index.upsert(batch);
    }
    const writeSeconds = (performance.now() - writeStarted) / 1000;
    const query = (vector: Float32Array, more: Partial<VectorQuery> = {}): VectorQuery => ({
      tenant: 'bench',
      spaceId: 1,
      vector,
      limit: LIMIT,
      order: 'nearest',
      records: null,
      modules: null,
      ...more,
    });
    global.gc?.();
    const heapBefore = process.memoryUsage();
    const loadStarted = performance.now();
    await index.search(query(sentenceLike()));
    const loadMs = performance.now() - loadStarted;
    global.gc?.();
    const heapAfter = process.memoryUsage();
    const spaceBytes = await index.memoryBytes();
    const rssGrowth = heapAfter.rss - heapBefore.rss;

    const probes = Array.from({ length: QUERIES }, () => sentenceLike());
    const similar: number[] = [];
    let found = 0;
    for (const probe of probes.slice(0, 20)) {
      const hits = (await index.search(query(probe))) as Array<{ recordId: number }>;
      const exact = vectors
        .map((vector, position) => ({
          recordId: position + 1,
          score: vector.reduce((s, v, i) => s + v * probe[i]!, 0),
        }))
        .sort((a, b) => b.score - a.score)
        .slice(0, LIMIT);
      const got = new Set(hits.map((hit) => hit.recordId));
      found += exact.filter((hit) => got.has(hit.recordId)).length;
    }
    for (const probe of probes) await timed(similar, () => index.search(query(probe)));
    const onePercent = new Set(Array.from({ length: RECORDS / 100 }, (_, n) => n * 100 + 7));
    const filtered: number[] = [];
    for (const probe of probes)
      await timed(filtered, () => index.search(query(probe, { records: onePercent })));
    const outliers: number[] = [];
    for (const probe of probes)
      await timed(outliers, () => index.search(query(probe, { order: 'farthest', limit: 100 })));
    for (const samples of [similar, filtered, outliers]) samples.sort((a, b) => a - b);

    printFigure(
      'vectors.similar_p99_ms',
      percentile(similar, 99),
      'ms',
      '≤ 20',
      `limit ${LIMIT}, p50 ${percentile(similar, 50).toFixed(2)} ms; int8 scan of the space + exact re-rank of ${LIMIT * 2 + 24} candidates`,
    );
    printFigure(
      'vectors.similar_filtered_1pct_p99_ms',
      percentile(filtered, 99),
      'ms',
      '≤ 5',
      `the filter's ${onePercent.size} records given, p50 ${percentile(filtered, 50).toFixed(2)} ms`,
    );
    printFigure(
      'vectors.outliers_p99_ms',
      percentile(outliers, 99),
      'ms',
      '≤ 40',
      `limit 100, exact farthest-first, p50 ${percentile(outliers, 50).toFixed(2)} ms`,
    );
    printFigure(
      'vectors.memory_per_100k_mb',
      (spaceBytes / 1_048_576) * (100_000 / RECORDS),
      'MB',
      '≤ 64',
      `what the space holds after its first search: int8 codes in its WebAssembly memory and bookkeeping (loaded in ${loadMs.toFixed(0)} ms; the process's resident set grew ${(rssGrowth / 1_048_576).toFixed(0)} MB meanwhile, loading garbage included); ${RECORDS} records written in ${writeSeconds.toFixed(1)} s`,
    );
    printFigure(
      'vectors.recall_at_20',
      found / (20 * LIMIT),
      '',
      '≥ 0.99',
      'against an exact float search, 20 queries',
    );
  } finally {
    await index.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
  process.exit(1);
});
