import { createOpenAiEmbedder } from '../../infra/ai/embeddings/openai';
import { EmbedderPool } from '../../infra/ai/embeddings/threaded';
import { describeContract } from '../support/adapter-report';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';
import { embeddingsContract } from './embeddings';

describeContract(
  'embeddings',
  'a pool of two embedders (loopback OpenAI-compatible ones)',
  { kind: 'embedded' },
  () => {
    let fake: FakeOpenAi;
    beforeAll(async () => {
      fake = await startFakeOpenAi(32);
    });
    afterAll(() => fake.close());
    const member = () =>
      createOpenAiEmbedder({
        baseUrl: fake.baseUrl,
        apiKey: 'k',
        model: 'pooled',
        dimension: 32,
        requestDimension: true,
        timeoutMs: 5000,
      });

    embeddingsContract(async () => new EmbedderPool([member(), member()]));

    test('the texts of one call are shared out among the members', async () => {
      const pool = new EmbedderPool([member(), member()]);
      const before = fake.embeddingRequests.length;
      await pool.embed(['a', 'b', 'c']);
      expect(fake.embeddingRequests.slice(before).map((request) => request.input)).toEqual([
        ['a', 'b'],
        ['c'],
      ]);
    });
  },
);
