import { extname, join } from 'node:path';
import { createOpenAiEmbedder } from '../infra/ai/embeddings/openai';
import type { TextEmbedder } from '../infra/ai/embeddings/port';
import {
  EmbedderPool,
  ThreadedEmbedder,
  USE_LITE_DIMENSION,
  USE_LITE_MODEL,
} from '../infra/ai/embeddings/threaded';
import type { Config } from '../infra/config';
import type { EventStore } from '../infra/event-store/port';
import type { Logger } from '../infra/logging';
import type { ReadModels } from '../infra/read-store/read-models';
import { EmbeddedVectorIndex } from '../infra/vector-index/embedded';
import type { VectorIndex } from '../infra/vector-index/port';
import { QdrantVectorIndex } from '../infra/vector-index/qdrant';
import { vectorIndexIdentity } from '../projections/vectors/record-text';
import { VectorProjection } from '../projections/vectors/vector-projection';
import type { SemanticSearch } from '../query-api/app';
import { embeddedFile } from './embedded-stores';

/** The embedding thread's entry: the `.ts` source from sources, the compiled `.js` in a build. */
export const EMBEDDING_THREAD_ENTRY = join(__dirname, `embedding-thread${extname(__filename)}`);

/** How often a process without the vector projection looks at the index's checkpoint while a read waits. */
const CHECKPOINT_POLL_MS = 50;

export interface SemanticServices {
  readonly search: SemanticSearch;
  readonly projection?: VectorProjection;
  /** Whether the index includes `position` within `timeoutMs` (the projection's, or the stored checkpoint). */
  waitFor(position: bigint, timeoutMs: number): Promise<boolean>;
  /** The vector projection's position, where it runs here. */
  position(): bigint | undefined;
  stop(): Promise<void>;
}

/** The configured vector index for vectors of `dimension`. */
async function vectorIndexOf(config: Config, dimension: number): Promise<VectorIndex> {
  if (config.VECTOR_INDEX === 'embedded')
    return EmbeddedVectorIndex.open(embeddedFile(config, 'vectors'), dimension);
  if (config.QDRANT_URL === undefined) throw new Error('VECTOR_INDEX=qdrant needs QDRANT_URL');
  return QdrantVectorIndex.open(config.QDRANT_URL, dimension, {
    ...(config.QDRANT_API_KEY !== undefined && { apiKey: config.QDRANT_API_KEY }),
    collectionPrefix: config.QDRANT_COLLECTION_PREFIX,
    timeoutMs: config.QDRANT_TIMEOUT_MS,
  });
}

function embedderOf(config: Config): TextEmbedder {
  if (config.EMBEDDINGS === 'local') {
    const thread = () => new ThreadedEmbedder(EMBEDDING_THREAD_ENTRY, USE_LITE_MODEL, USE_LITE_DIMENSION);
    return config.EMBEDDING_THREADS === 1
      ? thread()
      : new EmbedderPool(Array.from({ length: config.EMBEDDING_THREADS }, thread));
  }
  if (config.EMBEDDINGS_API_KEY === undefined)
    throw new Error('EMBEDDINGS=openai needs EMBEDDINGS_API_KEY (any text for endpoints that take none)');
  return createOpenAiEmbedder({
    baseUrl: config.EMBEDDINGS_URL,
    apiKey: config.EMBEDDINGS_API_KEY,
    model: config.EMBEDDINGS_MODEL,
    dimension: config.EMBEDDINGS_DIMENSION,
    requestDimension: config.EMBEDDINGS_REQUEST_DIMENSION,
    timeoutMs: config.EMBEDDINGS_TIMEOUT_MS,
  });
}

/** The vector projection over these stores; a read model that does not catch up in time fails the batch. */
function vectorProjectionOf(
  logger: Logger,
  deps: {
    readonly events: EventStore;
    readonly readModels: ReadModels;
    readonly index: VectorIndex;
    readonly embedder: TextEmbedder;
    waitForReadModels(position: bigint): Promise<boolean>;
  },
): VectorProjection {
  return new VectorProjection({
    events: deps.events,
    readModels: deps.readModels,
    index: deps.index,
    embedder: deps.embedder,
    logger: logger.child({ component: 'vector-projection' }),
    async waitForReadModels(position) {
      if (!(await deps.waitForReadModels(position)))
        throw new Error(`the read models did not reach position ${position} in time`);
    },
  });
}

export interface VectorRebuildProgress {
  readonly position: bigint;
  readonly head: bigint;
  readonly elapsedMs: number;
}

/**
 * `npm run replay -- vectors`: empties the vector index and runs the vector projection from the first event
 * to the store's head as it is now, reporting progress; then stops. A platform running meanwhile follows the
 * reset at its next search and keeps its projection going from where it was (positions decide every write).
 */
export async function rebuildVectors(
  config: Config,
  logger: Logger,
  deps: {
    readonly events: EventStore;
    readonly readModels: ReadModels;
    waitForReadModels(position: bigint): Promise<boolean>;
  },
  progress: (step: VectorRebuildProgress) => void,
): Promise<{ records: number; elapsedMs: number; head: bigint }> {
  const embedder = embedderOf(config);
  const index = await vectorIndexOf(config, embedder.dimension);
  const started = Date.now();
  try {
    await index.reset(vectorIndexIdentity(embedder.model));
    const head = await deps.events.headPosition();
    const projection = vectorProjectionOf(logger, { ...deps, index, embedder });
    await projection.start();
    const timer = setInterval(
      () => progress({ position: projection.position, head, elapsedMs: Date.now() - started }),
      250,
    );
    try {
      while (!(await projection.waitFor(head, 1000)));
    } finally {
      clearInterval(timer);
      await projection.stop();
    }
    progress({ position: head, head, elapsedMs: Date.now() - started });
    return { records: projection.recordsWritten, elapsedMs: Date.now() - started, head };
  } finally {
    await embedder.close();
    await index.close();
  }
}

/**
 * Semantic search for the services this process runs: the embedder and the vector index (the query side
 * searches them), and the vector projection where the projections run (`waitForReadModels` given).
 */
export async function startSemanticSearch(
  config: Config,
  logger: Logger,
  deps: {
    readonly events: EventStore;
    readonly readModels: ReadModels;
    /** Where the read-model projections run here: resolves once they include a position. */
    readonly waitForReadModels?: (position: bigint) => Promise<boolean>;
  },
): Promise<SemanticServices> {
  const embedder = embedderOf(config);
  const index = await vectorIndexOf(config, embedder.dimension);
  const identity = vectorIndexIdentity(embedder.model);
  const waitForReadModels = deps.waitForReadModels;
  const projection = waitForReadModels
    ? vectorProjectionOf(logger, { ...deps, waitForReadModels, index, embedder })
    : undefined;
  await projection?.start();
  return {
    search: { embedder, index, identity },
    ...(projection && { projection }),
    async waitFor(position, timeoutMs) {
      if (projection) return projection.waitFor(position, timeoutMs);
      const deadline = Date.now() + timeoutMs;
      while ((await index.checkpoint()) < position) {
        if (Date.now() >= deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, CHECKPOINT_POLL_MS));
      }
      return true;
    },
    position: () => projection?.position,
    async stop() {
      await projection?.stop();
      await embedder.close();
      await index.close();
    },
  };
}
