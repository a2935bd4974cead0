import OpenAI from 'openai';
import { checkEmbedInput, EmbeddingUnavailableError, unitVector, type TextEmbedder } from './port';

export interface OpenAiEmbedderOptions {
  /** The API's base URL, `/v1` included (OpenAI, Azure, Ollama, vLLM, TEI, LiteLLM…). */
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly model: string;
  /** The dimension the model answers (checked on every answer). */
  readonly dimension: number;
  /** Send `dimensions` with each request (models that can shorten their vectors, such as OpenAI's v3). */
  readonly requestDimension: boolean;
  readonly timeoutMs: number;
}

/** Why a call failed, in a sentence an API answer can carry (never the key). */
function reasonOf(error: unknown): string {
  if (error instanceof OpenAI.APIError && error.status !== undefined)
    return `the embeddings endpoint answered ${error.status}: ${error.message}`;
  if (error instanceof OpenAI.APIConnectionTimeoutError)
    return 'the embeddings endpoint did not answer in time';
  if (error instanceof OpenAI.APIConnectionError) return 'the embeddings endpoint could not be reached';
  return error instanceof Error ? error.message : String(error);
}

/**
 * Embeddings from any OpenAI-compatible `/v1/embeddings` endpoint. Asks for floats explicitly: without
 * `encoding_format` the client asks for base64 and decodes the answer as such whatever comes back, which
 * turns a compatible server's JSON arrays into garbage.
 */
export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): TextEmbedder {
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseUrl,
    timeout: options.timeoutMs,
    maxRetries: 2,
  });
  return {
    model: `openai:${options.model}@${options.dimension}`,
    dimension: options.dimension,
    async embed(texts) {
      checkEmbedInput(texts);
      if (texts.length === 0) return [];
      let answer: OpenAI.CreateEmbeddingResponse;
      // One deadline for the call, its retries included.
      const deadline = AbortSignal.timeout(options.timeoutMs);
      try {
        answer = await client.embeddings.create(
          {
            model: options.model,
            // Some servers refuse an empty input: a blank stands in for it.
            input: texts.map((text) => (text === '' ? ' ' : text)),
            encoding_format: 'float',
            ...(options.requestDimension && { dimensions: options.dimension }),
          },
          { signal: deadline },
        );
      } catch (error) {
        throw new EmbeddingUnavailableError(
          deadline.aborted ? 'the embeddings endpoint did not answer in time' : reasonOf(error),
          { cause: error },
        );
      }
      const byIndex = new Map(answer.data.map((item) => [item.index, item.embedding]));
      return texts.map((_text, index) => {
        const vector = byIndex.get(index);
        if (!Array.isArray(vector) || vector.length !== options.dimension)
          throw new EmbeddingUnavailableError(
            `the embeddings endpoint answered ${vector === undefined ? 'no vector' : `a vector of ${Array.isArray(vector) ? vector.length : 'no'} dimensions`} for text ${index}; ${options.dimension} expected`,
          );
        return unitVector(vector);
      });
    },
    async close() {},
  };
}
