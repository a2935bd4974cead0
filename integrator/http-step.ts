import type { MappedValue } from '../contracts/integrator';
import { OutboundError, type OutboundHttp, type OutboundResponse } from '../infra/outbound/port';
import { mapValue, StepFailure, type HttpRequestStep, type StepScope } from './steps';

/** What an HTTP request step outputs. */
export interface HttpStepOutput {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Parsed as the step says: JSON, text, or `{encoding: 'base64', data}`. */
  readonly body: unknown;
  readonly bytes: number;
  readonly durationMs: number;
}

/**
 * Calls another service: the mapped URL, headers and body, through the platform's SSRF guard (public addresses
 * only unless the platform allows private ones; DNS pinned; redirects answered, not followed), within the
 * step's time and size limits. A refused address, no answer, an answer too long or (by default) an HTTP error
 * fails the run with why.
 */
export async function runHttpStep(
  step: HttpRequestStep,
  scope: StepScope,
  outbound: OutboundHttp,
): Promise<HttpStepOutput> {
  const evaluate = (value: MappedValue | undefined) => mapValue(scope, value);
  const url = await evaluate(step.url);
  if (typeof url !== 'string' || !URL.canParse(url))
    throw new StepFailure(`the URL must be an http(s) address, got ${JSON.stringify(url) ?? 'nothing'}`);
  const headers: Record<string, string> = {};
  for (const header of step.headers ?? []) {
    const value = await evaluate(header.value);
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    if (/[\r\n]/.test(text)) throw new StepFailure(`the header ${header.name} must not contain line breaks`);
    headers[header.name.toLowerCase()] = text;
  }
  let body: string | undefined;
  if (step.body !== undefined) {
    const value = await evaluate(step.body);
    if (typeof value === 'string') body = value;
    else {
      body = JSON.stringify(value);
      headers['content-type'] ??= 'application/json; charset=utf-8';
    }
  }
  let response: OutboundResponse;
  try {
    response = await outbound.request({
      method: step.method,
      url,
      headers,
      ...(body !== undefined && { body }),
      timeoutMs: step.timeoutMs,
      maxBytes: step.maxResponseBytes,
    });
  } catch (error) {
    if (error instanceof OutboundError) throw new StepFailure(`${step.method} ${url}: ${error.message}`);
    throw error;
  }
  if (response.truncated)
    throw new StepFailure(`${step.method} ${url}: the answer is longer than ${step.maxResponseBytes} bytes`);
  if (step.failOnHttpError && response.status >= 400)
    throw new StepFailure(
      `${step.method} ${url} answered ${response.status}: ${response.body.slice(0, 200)}`,
    );
  return {
    status: response.status,
    headers: response.headers,
    body: parseBody(step.parse, response, `${step.method} ${url}`),
    bytes: response.raw.length,
    durationMs: Math.round(response.durationMs * 1000) / 1000,
  };
}

function parseBody(parse: HttpRequestStep['parse'], response: OutboundResponse, call: string): unknown {
  const type = (response.headers['content-type'] ?? '').toLowerCase();
  const as =
    parse !== 'auto'
      ? parse
      : /[/+]json\b/.test(type)
        ? 'json'
        : type.startsWith('text/') || /\b(xml|javascript|x-www-form-urlencoded)\b/.test(type) || type === ''
          ? 'text'
          : 'binary';
  if (as === 'binary') return { encoding: 'base64', data: response.raw.toString('base64') };
  if (as === 'text') return response.body;
  if (response.raw.length === 0) return null;
  try {
    return JSON.parse(response.body) as unknown;
  } catch (error) {
    throw new StepFailure(
      `${call}: the answer is not JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
