import { parentPort } from 'node:worker_threads';
import type { FromEmbeddingThread, ToEmbeddingThread } from '../infra/ai/embeddings/threaded';
import { loadUseLite } from '../infra/ai/embeddings/use-lite';

/**
 * The embedding thread (see `ThreadedEmbedder`): the embedded sentence model, loaded once, embedding one
 * request at a time; each answer's vectors are transferred, not copied.
 */
async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('embedding-thread must run as a worker thread');
  const post = (message: FromEmbeddingThread, transfer: ArrayBuffer[] = []): void =>
    port.postMessage(message, transfer);
  let embed: Awaited<ReturnType<typeof loadUseLite>>;
  try {
    embed = await loadUseLite();
  } catch (error) {
    post({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
    return;
  }
  let queue = Promise.resolve();
  port.on('message', ({ id, texts }: ToEmbeddingThread) => {
    queue = queue.then(() =>
      embed(texts).then(
        (vectors) =>
          post(
            { kind: 'vectors', id, vectors },
            vectors.map((vector) => vector.buffer as ArrayBuffer),
          ),
        (error: unknown) =>
          post({ kind: 'error', id, message: error instanceof Error ? error.message : String(error) }),
      ),
    );
  });
  post({ kind: 'ready' });
}

void main();
