import OpenAI from 'openai';
import { LanguageModelError, type Completion, type LanguageModel, type TokenUsage } from './port';

export interface OpenAiLanguageModelOptions {
  /** The API's base URL, `/v1` included (OpenAI, Azure, Ollama, vLLM, LiteLLM…). */
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly model: string;
  /** The most a call may take, from asking to the whole answer. */
  readonly timeoutMs: number;
}

/** The longest wait an endpoint's hint is taken at (a day); callers cap it by their own deadline anyway. */
export const MAX_RETRY_AFTER_MS = 86_400_000;
/** A delay as a decimal number (no sign, exponent, hex or blanks inside). */
const DECIMAL = /^\d{1,12}(?:\.\d{1,9})?$/;
/** An HTTP date as RFC 9110 has senders write it (IMF-fixdate): `Sun, 06 Nov 1994 08:49:37 GMT`. */
const IMF_FIXDATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/**
 * The endpoint's `retry-after-ms` or `retry-after` (seconds or an HTTP date), in milliseconds, or undefined when
 * it gives none that reads as one: untrusted input, so only a non-negative decimal or an IMF-fixdate is taken,
 * and never for longer than `MAX_RETRY_AFTER_MS`.
 */
export function retryAfterMsOf(headers: Pick<Headers, 'get'> | undefined): number | undefined {
  const bounded = (ms: number) => Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS);
  const milliseconds = headers?.get('retry-after-ms')?.trim();
  if (milliseconds !== undefined && DECIMAL.test(milliseconds)) return bounded(Number(milliseconds));
  const retryAfter = headers?.get('retry-after')?.trim();
  if (retryAfter === undefined) return undefined;
  if (DECIMAL.test(retryAfter)) return bounded(Number(retryAfter) * 1000);
  if (!IMF_FIXDATE.test(retryAfter)) return undefined;
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? undefined : bounded(date - Date.now());
}

/** The failure as the port names it; the endpoint's own message kept, never the key. */
function classify(error: unknown, hideKey: (text: string) => string): LanguageModelError {
  if (error instanceof OpenAI.APIConnectionTimeoutError)
    return new LanguageModelError('timeout', 'the chat endpoint did not answer in time', undefined, {
      cause: error,
    });
  if (error instanceof OpenAI.APIConnectionError)
    return new LanguageModelError('unavailable', 'the chat endpoint could not be reached', undefined, {
      cause: error,
    });
  if (!(error instanceof OpenAI.APIError) || error.status === undefined)
    return new LanguageModelError(
      'unavailable',
      hideKey(error instanceof Error ? error.message : String(error)),
      undefined,
      { cause: error },
    );
  const { status } = error;
  const answered = `the chat endpoint answered ${status}: ${hideKey(error.message)}`;
  const options = { cause: error };
  if (status === 429)
    return new LanguageModelError('rate-limited', answered, retryAfterMsOf(error.headers), options);
  if (status >= 500) return new LanguageModelError('unavailable', answered, undefined, options);
  // The server gave up waiting for the request: no answer in time, as a deadline would be.
  if (status === 408) return new LanguageModelError('timeout', answered, undefined, options);
  if (status === 401 || status === 403)
    return new LanguageModelError('misconfigured', `${answered} (is the API key right?)`, undefined, options);
  if (status === 404)
    return new LanguageModelError(
      'misconfigured',
      `${answered} (are the model and the base URL right?)`,
      undefined,
      options,
    );
  return new LanguageModelError('refused', answered, undefined, options);
}

function usageOf(usage: OpenAI.CompletionUsage | undefined): TokenUsage | null {
  if (typeof usage?.prompt_tokens !== 'number' || typeof usage.completion_tokens !== 'number') return null;
  return {
    promptTokens: usage.prompt_tokens,
    completionTokens: usage.completion_tokens,
    totalTokens:
      typeof usage.total_tokens === 'number'
        ? usage.total_tokens
        : usage.prompt_tokens + usage.completion_tokens,
  };
}

/**
 * Chat completions from any OpenAI-compatible `/v1/chat/completions` endpoint. Asks once: the caller retries
 * with its own backoff and progress, so the client's own retries are off.
 */
export function createOpenAiLanguageModel(options: OpenAiLanguageModelOptions): LanguageModel {
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseUrl,
    timeout: options.timeoutMs,
    maxRetries: 0,
  });
  const hideKey = (text: string) => (options.apiKey ? text.replaceAll(options.apiKey, '***') : text);
  return {
    model: options.model,
    async complete(request): Promise<Completion> {
      const deadline = AbortSignal.timeout(options.timeoutMs);
      let answer: OpenAI.ChatCompletion;
      try {
        answer = await client.chat.completions.create(
          {
            model: request.model ?? options.model,
            messages: request.messages.map(({ role, content }) => ({ role, content })),
            // `max_tokens`, not `max_completion_tokens`: every compatible server (vLLM, Ollama, LiteLLM,
            // llama.cpp) reads it, the newer name not all; only OpenAI's reasoning models insist on the new one.
            max_tokens: request.maxOutputTokens,
            ...(request.temperature !== undefined && { temperature: request.temperature }),
            ...(request.json && { response_format: { type: 'json_object' } }),
          },
          { signal: request.signal ? AbortSignal.any([request.signal, deadline]) : deadline },
        );
      } catch (error) {
        // The caller's cancellation is theirs to recognise (its reason, an `AbortError` by default), not a failure.
        if (request.signal?.aborted) throw request.signal.reason;
        if (deadline.aborted)
          throw new LanguageModelError('timeout', 'the chat endpoint did not answer in time', undefined, {
            cause: error,
          });
        throw classify(error, hideKey);
      }
      // A compatible server may answer anything: nothing in the answer is taken on trust.
      const choice = Array.isArray(answer.choices) ? answer.choices[0] : undefined;
      const message: Partial<OpenAI.ChatCompletionMessage> | undefined = choice?.message;
      if (typeof message?.content !== 'string') {
        if (typeof message?.refusal === 'string')
          throw new LanguageModelError('refused', `the model refused: ${hideKey(message.refusal)}`);
        throw new LanguageModelError('unavailable', 'the chat endpoint answered no text');
      }
      return {
        text: message.content,
        usage: usageOf(answer.usage),
        model:
          typeof answer.model === 'string' && answer.model !== ''
            ? answer.model
            : (request.model ?? options.model),
        finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : 'unknown',
      };
    },
  };
}
