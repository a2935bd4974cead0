import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QdrantClient } from '@qdrant/js-client-rest';
import { unitVector } from '../infra/ai/embeddings/port';
import { EmbeddedVectorIndex } from '../infra/vector-index/embedded';
import type { RecordVectors, VectorIndex, VectorQuery } from '../infra/vector-index/port';
import { QdrantVectorIndex } from '../infra/vector-index/qdrant';
import { machineConditions, percentile, printFigure } from './report';

/**
 * The embedded vector index with 100,000 records of 512 dimensions in one space (issue 20's figures, the query
 * embedding excluded): `similar` without and with a filter keeping 1%, `outliers`, the memory the space takes,
 * and recall@20 against an exact search. The vectors are synthetic but shaped like sentence embeddings: topics
 * (clusters) with a direction all of them share.
 *
 * With `QDRANT_URL` the Qdrant adapter runs the same measurements on the same vectors and queries, each figure
 * also as a ratio to the embedded one of this run, and the server's memory per 100,000 records (its process's
 * resident set when `QDRANT_PID` names it, else the allocator's resident bytes its /metrics report).
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

async function timed(samples: number[], run: () => Promise<unknown>): Promise<void> {
  const started = performance.now();
  await run();
  samples.push(performance.now() - started);
}

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

/** The same records for every index: vectors made once, in batches of 1000 as the projection would write. */
const vectors: Float32Array[] = Array.from({ length: RECORDS }, () => sentenceLike());
const batches: RecordVectors[][] = [];
for (let start = 0; start < RECORDS; start += 1000)
  batches.push(
    vectors.slice(start, start + 1000).map((vector, offset) => ({
      tenant: 'bench',
      recordId: start + offset + 1,
      spaceId: 1,
      moduleId: (start + offset) % 5,
      position: BigInt(start + offset + 1),
      vectors: [vector],
    })),
  );
const probes = Array.from({ length: QUERIES }, () => sentenceLike());
const onePercent = new Set(Array.from({ length: RECORDS / 100 }, (_, n) => n * 100 + 7));
/** The exact top 20 of the first 20 probes, by a float search over every vector. */
const exactTop = probes.slice(0, 20).map((probe) =>
  vectors
    .map((vector, position) => ({
      recordId: position + 1,
      score: vector.reduce((sum, value, index) => sum + value * probe[index]!, 0),
    }))
    .sort((a, b) => b.score - a.score)
    .slice(0, LIMIT)
    .map((hit) => hit.recordId),
);

interface Measured {
  readonly similar: number[];
  readonly filtered: number[];
  readonly outliers: number[];
  readonly recall: number;
  readonly writeSeconds: number;
}

async function write(index: VectorIndex): Promise<number> {
  const started = performance.now();
  for (const batch of batches) await index.upsert(batch);
  return (performance.now() - started) / 1000;
}

/** Searches: recall first (it also loads what the index loads lazily), then the timed rounds. */
async function measure(index: VectorIndex, writeSeconds: number): Promise<Measured> {
  let found = 0;
  for (const [n, exact] of exactTop.entries()) {
    const got = new Set((await index.search(query(probes[n]!))).map((hit) => hit.recordId));
    found += exact.filter((recordId) => got.has(recordId)).length;
  }
  const similar: number[] = [];
  for (const probe of probes) await timed(similar, () => index.search(query(probe)));
  const filtered: number[] = [];
  for (const probe of probes)
    await timed(filtered, () => index.search(query(probe, { records: onePercent })));
  const outliers: number[] = [];
  for (const probe of probes)
    await timed(outliers, () => index.search(query(probe, { order: 'farthest', limit: 100 })));
  for (const samples of [similar, filtered, outliers]) samples.sort((a, b) => a - b);
  return { similar, filtered, outliers, recall: found / (exactTop.length * LIMIT), writeSeconds };
}

async function embedded(): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-vectors-'));
  const index = EmbeddedVectorIndex.open(join(dir, 'vectors.db'), DIMENSION);
  try {
    await index.reset('bench');
    const writeSeconds = await write(index);
    global.gc?.();
    const heapBefore = process.memoryUsage();
    const loadStarted = performance.now();
    await index.search(query(sentenceLike()));
    const loadMs = performance.now() - loadStarted;
    global.gc?.();
    const rssGrowth = process.memoryUsage().rss - heapBefore.rss;
    const spaceBytes = await index.memoryBytes();
    const measured = await measure(index, writeSeconds);
    printFigure(
      'vectors.similar_p99_ms',
      percentile(measured.similar, 99),
      'ms',
      '≤ 20',
      `limit ${LIMIT}, p50 ${percentile(measured.similar, 50).toFixed(2)} ms; int8 scan of the space + exact re-rank of ${LIMIT * 2 + 24} candidates`,
    );
    printFigure(
      'vectors.similar_filtered_1pct_p99_ms',
      percentile(measured.filtered, 99),
      'ms',
      '≤ 5',
      `the filter's ${onePercent.size} records given, p50 ${percentile(measured.filtered, 50).toFixed(2)} ms`,
    );
    printFigure(
      'vectors.outliers_p99_ms',
      percentile(measured.outliers, 99),
      'ms',
      '≤ 40',
      `limit 100, exact farthest-first, p50 ${percentile(measured.outliers, 50).toFixed(2)} ms`,
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
      measured.recall,
      '',
      '≥ 0.99',
      'against an exact float search, 20 queries',
    );
    return measured;
  } finally {
    await index.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The server's memory now: its process's resident set (`QDRANT_PID`), else its allocator's resident bytes. */
async function serverMemory(url: string): Promise<{ bytes: number; what: string }> {
  const pid = process.env.QDRANT_PID;
  if (pid) {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    if (kb) return { bytes: Number(kb) * 1024, what: `the server process's resident set (pid ${pid})` };
  }
  const metrics = await (await fetch(`${url}/metrics`)).text();
  const resident = /^memory_resident_bytes (\d+)/m.exec(metrics)?.[1];
  return {
    bytes: Number(resident ?? NaN),
    what: "the allocator's resident bytes of its /metrics (mapped files not included)",
  };
}

/** Waits until the server has indexed what was written (its optimisers done), so that searches use the index. */
async function indexed(url: string, prefix: string): Promise<number> {
  const client = new QdrantClient({ url, checkCompatibility: false });
  const started = performance.now();
  const { collections } = await client.getCollections();
  for (const { name } of collections.filter((collection) =>
    collection.name.startsWith(`${prefix}record_vectors`),
  ))
    for (;;) {
      const info = await client.getCollection(name);
      if (info.status === 'green') break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  return (performance.now() - started) / 1000;
}

async function qdrant(url: string, baseline: Measured): Promise<void> {
  const server = (await (await fetch(`${url}/`)).json()) as { version: string };
  process.stdout.write(
    `# Qdrant ${server.version} at ${url}. The server built for the tests (../shared/servers/qdrant) is built at optimisation level 1 without link-time optimisation: its figures are not comparable with Qdrant's published ones\n`,
  );
  const prefix = `bench_${randomUUID().slice(0, 8)}_`;
  const index = await QdrantVectorIndex.open(url, DIMENSION, { collectionPrefix: prefix });
  try {
    await index.reset('bench');
    const before = await serverMemory(url);
    const writeSeconds = await write(index);
    const indexSeconds = await indexed(url, prefix);
    const measured = await measure(index, writeSeconds);
    const after = await serverMemory(url);
    const ratio = (name: keyof Pick<Measured, 'similar' | 'filtered' | 'outliers'>) =>
      `${(percentile(measured[name], 99) / percentile(baseline[name], 99)).toFixed(1)}× the embedded index's`;
    printFigure(
      'vectors.qdrant.similar_p99_ms',
      percentile(measured.similar, 99),
      'ms',
      '≤ 20',
      `${ratio('similar')}; limit ${LIMIT}, p50 ${percentile(measured.similar, 50).toFixed(2)} ms; Qdrant's own plan within the space, best chunk per record`,
    );
    printFigure(
      'vectors.qdrant.similar_filtered_1pct_p99_ms',
      percentile(measured.filtered, 99),
      'ms',
      '≤ 5',
      `${ratio('filtered')}; the filter's ${onePercent.size} records as a record_id condition, p50 ${percentile(measured.filtered, 50).toFixed(2)} ms`,
    );
    printFigure(
      'vectors.qdrant.outliers_p99_ms',
      percentile(measured.outliers, 99),
      'ms',
      '≤ 40',
      `${ratio('outliers')}; limit 100, exact scan of the negated query then each found record's best chunk, p50 ${percentile(measured.outliers, 50).toFixed(2)} ms`,
    );
    printFigure(
      'vectors.qdrant.memory_per_100k_mb',
      ((after.bytes - before.bytes) / 1_048_576) * (100_000 / RECORDS),
      'MB',
      undefined,
      `${RECORDS === 100_000 ? '' : `measured with ${RECORDS} records and scaled: `}growth of ${after.what} from an empty collection to ${RECORDS} records searched (a head point per record beside its chunk's); written in ${writeSeconds.toFixed(1)} s (${(writeSeconds / baseline.writeSeconds).toFixed(1)}× the embedded index's), indexed ${indexSeconds.toFixed(1)} s after`,
    );
    printFigure(
      'vectors.qdrant.recall_at_20',
      measured.recall,
      '',
      '≥ 0.99',
      `against the same exact float search, 20 queries (the embedded index: ${baseline.recall.toFixed(3)})`,
    );
  } finally {
    await index.close();
    const client = new QdrantClient({ url, checkCompatibility: false });
    for (const { name } of (await client.getCollections()).collections)
      if (name.startsWith(prefix)) await client.deleteCollection(name);
  }
}

async function main(): Promise<void> {
  process.stdout.write(
    `# ${machineConditions()}; ${RECORDS} records × ${DIMENSION} dimensions in one space\n`,
  );
  const baseline = await embedded();
  const url = process.env.QDRANT_URL;
  if (url) await qdrant(url, baseline);
  else process.stdout.write('# Qdrant not measured: QDRANT_URL not set\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
  process.exit(1);
});
