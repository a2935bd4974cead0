import { join } from 'node:path';
import { ThreadedEmbedder, USE_LITE_DIMENSION, USE_LITE_MODEL } from '../../infra/ai/embeddings/threaded';
import { describeContract } from '../support/adapter-report';
import { embeddingsContract } from './embeddings';

const ENTRY = join(__dirname, '..', '..', 'bin', 'embedding-thread.ts');
jest.setTimeout(60_000);

describeContract(
  'embeddings',
  'embedded sentence model (USE-lite, on its thread)',
  { kind: 'embedded' },
  () => {
    embeddingsContract(async () => new ThreadedEmbedder(ENTRY, USE_LITE_MODEL, USE_LITE_DIMENSION));

    test('it is a sentence model: paraphrases are closer than unrelated sentences', async () => {
      const embedder = new ThreadedEmbedder(ENTRY, USE_LITE_MODEL, USE_LITE_DIMENSION);
      try {
        const [cat, kitten, password, revenue] = await embedder.embed([
          'The cat sat on the mat.',
          'A kitten is sitting on a rug.',
          'How do I reset my password?',
          'Quarterly revenue grew by twelve percent.',
        ]);
        const cosine = (a: Float32Array, b: Float32Array) =>
          a.reduce((sum, value, index) => sum + value * b[index]!, 0);
        expect(cosine(cat!, kitten!)).toBeGreaterThan(0.5);
        expect(cosine(cat!, password!)).toBeLessThan(0.3);
        expect(cosine(cat!, revenue!)).toBeLessThan(0.3);
      } finally {
        await embedder.close();
      }
    });

    test('warming loads the model on its thread before any call; the calls after it are answered there', async () => {
      const embedder = new ThreadedEmbedder(ENTRY, USE_LITE_MODEL, USE_LITE_DIMENSION);
      const thread = () => (embedder as unknown as { worker?: object }).worker;
      try {
        expect(thread()).toBeUndefined();
        // Resolves once the thread has said the model is loaded.
        await embedder.warm();
        const warmed = thread();
        expect(warmed).toBeDefined();
        const [vector] = await embedder.embed(['warm already']);
        expect(vector).toHaveLength(USE_LITE_DIMENSION);
        expect(thread()).toBe(warmed);
      } finally {
        await embedder.close();
      }
    });
  },
);
