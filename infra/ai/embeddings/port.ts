/**
 * The embeddings port: texts in, unit vectors out. A vector index is built with one model; an index built
 * with another (or another dimension) is rebuilt, never mixed.
 */
export interface TextEmbedder {
  /** What made the vectors, such as `use-lite-512` or `openai:text-embedding-3-small`: kept with the index. */
  readonly model: string;
  readonly dimension: number;
  /** One unit-length vector per text, in the order given. Texts are at most `MAX_EMBED_TEXT_CHARS` long. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /**
   * Loads now what the first call would (an embedded model), so that loading it does not fall on the first
   * writes. Adapters with nothing to load have none.
   */
  warm?(): Promise<void>;
  /** Releases what the adapter holds (a thread, connections). */
  close(): Promise<void>;
}

/** The longest text one embedding takes (the spec's query limit; record text is chunked below it). */
export const MAX_EMBED_TEXT_CHARS = 4000;

/** Texts one call takes at most; callers batch above it. */
export const MAX_EMBED_BATCH = 256;

/**
 * The model could not answer (down, slow, refusing, answering nonsense): the caller tries again later, and an
 * API answers 503 with the reason.
 */
export class EmbeddingUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmbeddingUnavailableError';
  }
}

/** Refuses what no adapter may be given: too many texts, or a text too long. */
export function checkEmbedInput(texts: readonly string[]): void {
  if (texts.length > MAX_EMBED_BATCH)
    throw new RangeError(`at most ${MAX_EMBED_BATCH} texts per call, got ${texts.length}`);
  const long = texts.findIndex((text) => text.length > MAX_EMBED_TEXT_CHARS);
  if (long >= 0)
    throw new RangeError(
      `text ${long} has ${texts[long]!.length} characters; at most ${MAX_EMBED_TEXT_CHARS}`,
    );
}

/** `vector` scaled to length 1 (a zero vector stays zero), as a new array. */
export function unitVector(vector: ArrayLike<number>): Float32Array {
  let sum = 0;
  for (let index = 0; index < vector.length; index++) sum += vector[index]! * vector[index]!;
  const norm = Math.sqrt(sum);
  const unit = new Float32Array(vector.length);
  if (norm === 0) return unit;
  for (let index = 0; index < vector.length; index++) unit[index] = vector[index]! / norm;
  return unit;
}
