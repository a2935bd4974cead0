import type { HTTP_METHODS } from '../../contracts/integrator';

/** Calls the platform makes to addresses users configure (button fields, scenarios' HTTP request steps). */
export interface OutboundHttp {
  /** POSTs `body` as JSON. Redirects are answered as they come, never followed. */
  postJson(url: string, body: unknown): Promise<OutboundResponse>;
  /** Any call (a form POST, a GET with a bearer token); redirects are answered, never followed. */
  request(call: OutboundRequest): Promise<OutboundResponse>;
}

export interface OutboundRequest {
  readonly method: (typeof HTTP_METHODS)[number];
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  /** The whole call's deadline; the adapter's own when absent. */
  readonly timeoutMs?: number;
  /** Bytes of the answer read at most (64 KB when absent); the rest is not read. */
  readonly maxBytes?: number;
}

export interface OutboundResponse {
  readonly status: number;
  /** The start of the answer as text (at most `maxBytes`). */
  readonly body: string;
  /** The same bytes as they came. */
  readonly raw: Buffer;
  /** The answer was longer than `maxBytes`. */
  readonly truncated: boolean;
  /** The answer's headers, names in lower case (repeated ones joined with ", "). */
  readonly headers: Readonly<Record<string, string>>;
  readonly durationMs: number;
}

/** Why an outbound call did not get an answer. */
export class OutboundError extends Error {
  constructor(
    /** `invalid-request`: the call itself cannot be made (an address, header name or value HTTP does not allow). */
    readonly reason: 'refused-address' | 'invalid-request' | 'unreachable' | 'timeout',
    message: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}
