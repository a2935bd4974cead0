import { json, startPlatform, type Entity } from '../support/platform';
import { startFakeOpenAi } from '../support/fake-openai';

/** A platform whose embeddings come from the loopback OpenAI-compatible server, with a space and a module. */
async function onFakeModel() {
  const fake = await startFakeOpenAi(64);
  const platform = await startPlatform({
    SEMANTIC_SEARCH: 'true',
    EMBEDDINGS: 'openai',
    EMBEDDINGS_URL: fake.baseUrl,
    EMBEDDINGS_API_KEY: 'test-key',
    EMBEDDINGS_DIMENSION: '64',
    EMBEDDINGS_REQUEST_DIMENSION: 'true',
    EMBEDDINGS_TIMEOUT_MS: '2000',
  });
  const space = await json<Entity>(await platform.call('POST', '/space', { body: { name: 'S' } }));
  const module = await json<Entity>(
    await platform.call('POST', '/module', { body: { spaceId: space.id, name: 'M' } }),
  );
  return { fake, platform, space, module };
}

/** Semantic search when it cannot answer: switched off, or a model that is down. Never a 500. */
test('switched off: the vector routes answer 503 with the reason', async () => {
  const platform = await startPlatform({ SEMANTIC_SEARCH: 'false' });
  try {
    const response = await platform.call('GET', '/record/vector/similar?space_id=1&query=x');
    expect(response.status).toBe(503);
    expect((await json<{ message: string }>(response)).message).toMatch(/switched off/);
  } finally {
    await platform.stop();
  }
});

test('an OpenAI-compatible model that fails: searches answer 503, records are still written, and their vectors come once it is back', async () => {
  const { fake, platform, space, module } = await onFakeModel();
  try {
    fake.mode = 'fail-500';
    const created = await platform.call('POST', '/record', {
      body: { moduleId: module.id, name: 'shoes order' },
    });
    expect(created.status).toBe(201);
    const position = created.headers.get('x-position')!;
    const refused = await platform.call('GET', `/record/vector/similar?space_id=${space.id}&query=shoes`);
    expect(refused.status).toBe(503);
    expect((await json<{ message: string }>(refused)).message).toMatch(
      /embedding model did not answer: .*500/,
    );
    fake.mode = 'normal';
    // The projection tries the failed batch again; the record's vectors arrive.
    let found: { items: Array<{ name: string }> } = { items: [] };
    for (let attempt = 0; attempt < 40 && found.items.length === 0; attempt++) {
      const response = await platform.call('GET', `/record/vector/similar?space_id=${space.id}&query=shoes`, {
        headers: { 'X-Min-Position': position },
      });
      if (response.status === 200) found = await json(response);
      else await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(found.items.map((item) => item.name)).toEqual(['shoes order']);
  } finally {
    await platform.stop();
    await fake.close();
  }
}, 60_000);

test('a change that leaves the text as it was makes no vectors anew; a change of the text does', async () => {
  const { fake, platform, space, module } = await onFakeModel();
  try {
    await platform.call('POST', '/field', {
      body: { moduleId: module.id, key: 'amount', name: 'Amount', type: 'decimal' },
    });
    const created = await platform.call('POST', '/record', {
      body: { moduleId: module.id, name: 'Blue shoes', fields: { amount: 10 } },
    });
    const record = await json<Entity>(created);
    const visible = async (response: Response) => {
      const position = response.headers.get('x-position')!;
      const search = await platform.call('GET', `/record/vector/similar?space_id=${space.id}&query=shoes`, {
        headers: { 'X-Min-Position': position },
      });
      expect(search.status).toBe(200);
      return fake.embeddingRequests.filter((request) => !request.input.includes('shoes')).length;
    };
    expect(await visible(created)).toBe(1);
    // A number is no part of the text: nothing to embed.
    expect(
      await visible(await platform.call('PUT', `/record/${record.id}`, { body: { fields: { amount: 12 } } })),
    ).toBe(1);
    // The name is.
    expect(
      await visible(await platform.call('PUT', `/record/${record.id}`, { body: { name: 'Red shoes' } })),
    ).toBe(2);
  } finally {
    await platform.stop();
    await fake.close();
  }
}, 60_000);
