/**
 * A chat language model: messages in, one answer out, with the usage the model reports. The platform's AI
 * operations (column transforms and validations, generation) ask it; what they spend is its reported usage.
 */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

export interface CompletionRequest {
  readonly messages: readonly ChatMessage[];
  /** The most tokens the answer may take (sent as the request's output limit). */
  readonly maxOutputTokens: number;
  /** Another model of the same endpoint than the configured one (a configuration's own choice). */
  readonly model?: string;
  /** Sampling temperature (the endpoint's default when absent). */
  readonly temperature?: number;
  /** Ask for a JSON object (`response_format: {type: 'json_object'}`); the answer is still only text. */
  readonly json?: boolean;
  /** Ends the call early (a job cancelled, a client gone). */
  readonly signal?: AbortSignal;
}

export interface TokenUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
}

export interface Completion {
  readonly text: string;
  /** What the model reports it used; null when the endpoint reports nothing. */
  readonly usage: TokenUsage | null;
  /** The model that answered, as the endpoint names it. */
  readonly model: string;
  /** `stop`, `length` (cut at `maxOutputTokens`), `content_filter`… */
  readonly finishReason: string;
}

export interface LanguageModel {
  /** The model asked, as configured (`gpt-4o-mini`). */
  readonly model: string;
  complete(request: CompletionRequest): Promise<Completion>;
}

/**
 * Why the model gave no answer. `retryable` failures (rate limited, the endpoint's 5xx, no answer in time,
 * unreachable) may pass if asked again later; the others (a bad key, a request it refuses) will not.
 */
export class LanguageModelError extends Error {
  constructor(
    readonly reason: 'rate-limited' | 'unavailable' | 'timeout' | 'refused' | 'misconfigured',
    message: string,
    /** The endpoint's own hint (`Retry-After`), in milliseconds. */
    readonly retryAfterMs?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'LanguageModelError';
  }

  get retryable(): boolean {
    return this.reason === 'rate-limited' || this.reason === 'unavailable' || this.reason === 'timeout';
  }
}
