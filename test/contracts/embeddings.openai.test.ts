import { createOpenAiEmbedder } from '../../infra/ai/embeddings/openai';
import { EmbeddingUnavailableError } from '../../infra/ai/embeddings/port';
import { describeContract } from '../support/adapter-report';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';
import { embeddingsContract } from './embeddings';

const DIMENSION = 64;

describeContract(
  'embeddings',
  'OpenAI-compatible endpoint (a loopback test server)',
  { kind: 'embedded' },
  () => {
    let fake: FakeOpenAi;
    beforeAll(async () => {
      fake = await startFakeOpenAi(DIMENSION);
    });
    afterAll(() => fake.close());
    const open = (timeoutMs = 5000) =>
      createOpenAiEmbedder({
        baseUrl: fake.baseUrl,
        apiKey: 'test-key',
        model: 'text-embedding-test',
        dimension: DIMENSION,
        requestDimension: true,
        timeoutMs,
      });

    embeddingsContract(async () => open());

    test('asks for floats and the configured dimension, and names model and dimension', async () => {
      fake.mode = 'normal';
      const embedder = open();
      expect(embedder.model).toBe(`openai:text-embedding-test@${DIMENSION}`);
      await embedder.embed(['hello']);
      expect(fake.embeddingRequests.at(-1)).toEqual({
        model: 'text-embedding-test',
        input: ['hello'],
        dimensions: DIMENSION,
      });
    });

    test.each([
      ['fail-500', /answered 500/],
      ['unauthorized', /answered 401: .*Incorrect API key/],
      ['one-vector-short', /no vector for text 1/],
      ['wrong-dimension', /65 dimensions for text 0; 64 expected/],
    ] as const)('an endpoint that misbehaves (%s) is unavailable, with why', async (mode, reason) => {
      fake.mode = mode;
      try {
        const failure = open().embed(['one', 'two']);
        await expect(failure).rejects.toThrow(EmbeddingUnavailableError);
        await expect(failure).rejects.toThrow(reason);
      } finally {
        fake.mode = 'normal';
      }
    });

    test('an endpoint that does not answer in time is unavailable', async () => {
      fake.mode = 'slow';
      try {
        await expect(open(300).embed(['one'])).rejects.toThrow(/did not answer in time/);
      } finally {
        fake.mode = 'normal';
      }
    });

    test('an endpoint that cannot be reached is unavailable', async () => {
      const nowhere = createOpenAiEmbedder({
        baseUrl: 'http://127.0.0.1:9/v1',
        apiKey: 'k',
        model: 'm',
        dimension: 8,
        requestDimension: false,
        timeoutMs: 10_000,
      });
      await expect(nowhere.embed(['one'])).rejects.toThrow(/could not be reached/);
    });
  },
);
