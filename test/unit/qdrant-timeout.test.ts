import { VectorIndexUnavailableError } from '../../infra/vector-index/port';
import { QdrantVectorIndex } from '../../infra/vector-index/qdrant';
import { startHeldServer } from '../support/held-server';

jest.setTimeout(15_000);

/** A Qdrant that takes requests and never answers holds a call only as long as the configured timeout. */
test('a server that never answers is unavailable once the timeout passes, not after the client’s 5 minutes', async () => {
  const hung = await startHeldServer('');
  try {
    const opened = QdrantVectorIndex.open(hung.url, 8, { timeoutMs: 300 });
    await expect(opened).rejects.toBeInstanceOf(VectorIndexUnavailableError);
    expect(hung.calls).toBeGreaterThan(0);
  } finally {
    await hung.close();
  }
});
