import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ThreadedEmbedder, USE_LITE_DIMENSION, USE_LITE_MODEL } from '../infra/ai/embeddings/threaded';
import { machineConditions, percentile, printFigure } from './report';
import { apiOf, startServer } from './server';

/**
 * Semantic search with the embedded model (issue 20's figures): one sentence's query embedding; how many
 * record writes a second the vector projection keeps up with (records written as fast as 8 clients go, until
 * the projection has embedded them all); the quality on the labelled set of the tests.
 */
const ENTRY = join(__dirname, '..', 'bin', 'embedding-thread.ts');
const RECORDS = Number(process.env.BENCH_RECORDS ?? 3000);
const WRITERS = 8;

interface Labelled {
  pairs: Array<{ record: string; query: string }>;
  distractors: string[];
}

const cosine = (a: Float32Array, b: Float32Array) =>
  a.reduce((sum, value, index) => sum + value * b[index]!, 0);

async function queryEmbedding(): Promise<void> {
  const embedder = new ThreadedEmbedder(ENTRY, USE_LITE_MODEL, USE_LITE_DIMENSION);
  try {
    await embedder.embed(['warm up']);
    const times: number[] = [];
    for (let index = 0; index < 200; index++) {
      const started = performance.now();
      await embedder.embed([`How do I reset the password of account number ${index}?`]);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    printFigure(
      'semantic.query_embedding_p50_ms',
      percentile(times, 50),
      'ms',
      '≤ 15',
      `one sentence on the embedding thread, p99 ${percentile(times, 99).toFixed(1)} ms`,
    );

    const labelled = JSON.parse(
      readFileSync(join(__dirname, '..', 'test', 'fixtures', 'semantic-pairs.json'), 'utf8'),
    ) as Labelled;
    const records = await embedder.embed([
      ...labelled.pairs.map((pair) => pair.record),
      ...labelled.distractors,
    ]);
    const queries = await embedder.embed(labelled.pairs.map((pair) => pair.query));
    let first = 0;
    let topThree = 0;
    queries.forEach((query, position) => {
      const ranked = records
        .map((record, index) => ({ index, score: cosine(record, query) }))
        .sort((a, b) => b.score - a.score);
      if (ranked[0]!.index === position) first++;
      if (ranked.slice(0, 3).some((entry) => entry.index === position)) topThree++;
    });
    printFigure(
      'semantic.paraphrase_first_share',
      first / labelled.pairs.length,
      '',
      '≥ 0.9',
      `${first} of ${labelled.pairs.length} labelled paraphrases ranked first among ${records.length} records (in the top three: ${topThree})`,
    );
  } finally {
    await embedder.close();
  }
}

async function projectionThroughput(threads: number): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-semantic-'));
  const server = await startServer(dataDir, { SEMANTIC_SEARCH: 'true', EMBEDDING_THREADS: String(threads) });
  try {
    const call = apiOf(server.url);
    const space = await call<{ id: number }>('POST', '/space', { name: 'Bench' });
    const module = await call<{ id: number }>('POST', '/module', { spaceId: space.id, name: 'Tickets' });
    await call('POST', '/field', { moduleId: module.id, key: 'details', name: 'Details', type: 'long_text' });
    const lagOf = async () => {
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      return Number(
        /^projection_lag_positions\{projection="vectors",version="1"\} (\d+)$/m.exec(metrics)?.[1] ?? NaN,
      );
    };
    const started = performance.now();
    let written = 0;
    const writer = async (worker: number) => {
      for (let index = worker; index < RECORDS; index += WRITERS) {
        await call('POST', '/record', {
          moduleId: module.id,
          name: `Ticket ${index}: customer ${index % 97} reports a problem with order ${index * 7}`,
          fields: {
            details: `The parcel for order ${index * 7} arrived damaged; the customer asks for a replacement.`,
          },
        });
        written++;
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, (_, worker) => writer(worker)));
    const writeSeconds = (performance.now() - started) / 1000;
    while ((await lagOf()) > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    const totalSeconds = (performance.now() - started) / 1000;
    printFigure(
      `semantic.projection_records_per_s.threads_${threads}`,
      written / totalSeconds,
      'records/s',
      '≥ 200',
      `EMBEDDING_THREADS=${threads}; ${written} two-line records written by ${WRITERS} clients in ${writeSeconds.toFixed(1)} s (${(written / writeSeconds).toFixed(0)}/s), all embedded and indexed ${totalSeconds.toFixed(1)} s after the first write`,
    );
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  process.stdout.write(`# ${machineConditions()}; embedded model ${USE_LITE_MODEL}\n`);
  await queryEmbedding();
  for (const threads of [1, 2]) await projectionThroughput(threads);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
    process.exit(1);
  },
);
