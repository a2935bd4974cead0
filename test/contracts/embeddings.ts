import { MAX_EMBED_BATCH, MAX_EMBED_TEXT_CHARS, type TextEmbedder } from '../../infra/ai/embeddings/port';

const cosine = (a: Float32Array, b: Float32Array) =>
  a.reduce((sum, value, index) => sum + value * b[index]!, 0);
const norm = (vector: Float32Array) => Math.sqrt(cosine(vector, vector));

/** The embeddings port's contract: every adapter passes the same suite. */
export function embeddingsContract(open: () => Promise<TextEmbedder>): void {
  let embedder: TextEmbedder;
  beforeAll(async () => {
    embedder = await open();
  });
  afterAll(async () => {
    await embedder.close();
  });

  test('one unit vector per text, of the declared dimension, in the order given', async () => {
    expect(embedder.model).toMatch(/\S/);
    expect(embedder.dimension).toBeGreaterThan(0);
    const texts = ['Invoice 42 from Ada', 'A kitten is sitting on a rug.', 'Quarterly revenue grew'];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(3);
    for (const vector of vectors) {
      // By its tag: a vector from another thread is of that thread's Float32Array.
      expect(Object.prototype.toString.call(vector)).toBe('[object Float32Array]');
      expect(vector).toHaveLength(embedder.dimension);
      expect(norm(vector)).toBeCloseTo(1, 4);
    }
    // In order: each is what the text alone gives.
    for (const [index, text] of texts.entries()) {
      const [alone] = await embedder.embed([text]);
      expect(cosine(alone!, vectors[index]!)).toBeGreaterThan(0.9999);
    }
  });

  test('the same text gives the same vector, call after call', async () => {
    const [first] = await embedder.embed(['Reset my password']);
    const [again] = await embedder.embed(['Reset my password']);
    expect(cosine(first!, again!)).toBeGreaterThan(0.9999);
  });

  test('empty and blank texts still get their vector, and the others keep their places', async () => {
    const vectors = await embedder.embed(['first', '', '   ', 'last']);
    expect(vectors).toHaveLength(4);
    const [first, last] = await embedder.embed(['first', 'last']);
    expect(cosine(vectors[0]!, first!)).toBeGreaterThan(0.9999);
    expect(cosine(vectors[3]!, last!)).toBeGreaterThan(0.9999);
  });

  test('no texts, no call; a text at the limit is taken; past the limits is refused before any work', async () => {
    expect(await embedder.embed([])).toEqual([]);
    expect(await embedder.embed(['word '.repeat(MAX_EMBED_TEXT_CHARS / 5)])).toHaveLength(1);
    await expect(embedder.embed(['x'.repeat(MAX_EMBED_TEXT_CHARS + 1)])).rejects.toThrow(RangeError);
    await expect(embedder.embed(new Array<string>(MAX_EMBED_BATCH + 1).fill('a'))).rejects.toThrow(
      RangeError,
    );
  });

  test('calls side by side each get their own answers', async () => {
    const texts = Array.from({ length: 12 }, (_, index) => `note number ${index} about shoes`);
    const together = await Promise.all(texts.map((text) => embedder.embed([text])));
    const batch = await embedder.embed(texts);
    together.forEach(([vector], index) => expect(cosine(vector!, batch[index]!)).toBeGreaterThan(0.9999));
  });
}
