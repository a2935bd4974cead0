import type { TextEmbedder } from '../../infra/ai/embeddings/port';
import type { VectorIndex } from '../../infra/vector-index/port';

/** What semantic search needs on the query side. */
export interface SemanticSearch {
  readonly embedder: TextEmbedder;
  readonly index: VectorIndex;
  /** The model and text recipe the index is made with. */
  readonly identity: string;
}
