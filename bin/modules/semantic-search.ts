import { PacedEmbedder } from '../../infra/ai/embeddings/paced';
import type { Projections } from '../../projections/host';
import { vectorIndexIdentity } from '../../projections/vectors/record-text';
import { VECTOR_PROJECTION } from '../../projections/vectors/vector-projection';
import type { SemanticSearch } from '../../query-api/app';
import type { Kernel } from '../kernel';
import { embedderOf, vectorIndexOf, vectorProjectionOf } from '../semantic';
import type { ServiceModule } from '../service-module';

/** How often a process without the vector projection looks at the index's checkpoint while a read waits. */
const CHECKPOINT_POLL_MS = 50;

export interface SemanticSearchService extends ServiceModule {
  readonly search: SemanticSearch;
  /** Whether the index includes `position` within `timeoutMs` (the projection's, or the stored checkpoint). */
  waitFor(position: bigint, timeoutMs: number): Promise<boolean>;
}

/**
 * Semantic search for the services this process runs: the embedder and the vector index (the query side
 * searches them), and the vector projection where the read-model projections run (`projections` given).
 */
export async function semanticSearchService(
  kernel: Kernel,
  projections: Projections | undefined,
): Promise<SemanticSearchService> {
  const { config, logger } = kernel;
  const embedder = embedderOf(config);
  const index = await vectorIndexOf(config, embedder.dimension);
  const projection =
    projections &&
    vectorProjectionOf(logger, {
      events: kernel.adapters.events,
      readModels: kernel.readModels,
      index,
      // The embedded model runs on this host's cores: it leaves them to the API while requests come in.
      embedder:
        config.EMBEDDINGS === 'local'
          ? new PacedEmbedder(embedder, { busyShare: config.EMBEDDING_BUSY_SHARE })
          : embedder,
      waitForReadModels: (position) => projections.waitFor(position, 60_000, ['records', 'fields', 'labels']),
    });
  return {
    search: { embedder, index, identity: vectorIndexIdentity(embedder.model) },
    async waitFor(position, timeoutMs) {
      if (projection) return projection.waitFor(position, timeoutMs);
      const deadline = Date.now() + timeoutMs;
      while ((await index.checkpoint()) < position) {
        if (Date.now() >= deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, CHECKPOINT_POLL_MS));
      }
      return true;
    },
    ...(projection && {
      metrics: {
        projectionLag: (head) => [
          {
            projection: VECTOR_PROJECTION,
            version: 1,
            lagPositions: Number(head > projection.position ? head - projection.position : 0n),
            caughtUp: projection.position >= head,
          },
        ],
      },
    }),
    async start() {
      // The model loads on its thread while the platform starts, not on the first writes it would slow.
      embedder.warm?.().catch((error: unknown) => {
        logger.warn(
          { err: error },
          'the embedding model could not be loaded; searches answer 503 until it is',
        );
      });
      await projection?.start();
    },
    async stop() {
      await projection?.stop();
      await embedder.close();
      await index.close();
    },
  };
}
