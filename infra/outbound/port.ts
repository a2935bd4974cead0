/** Calls the platform makes to addresses users configure (button fields; later scenario steps and webhooks). */
export interface OutboundHttp {
  /** POSTs `body` as JSON. Redirects are answered as they come, never followed. */
  postJson(url: string, body: unknown): Promise<OutboundResponse>;
  /** Any call (a form POST, a GET with a bearer token); redirects are answered, never followed. */
  request(call: OutboundRequest): Promise<OutboundResponse>;
}

export interface OutboundRequest {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface OutboundResponse {
  readonly status: number;
  /** The start of the answer (at most `MAX_RESPONSE_BYTES`). */
  readonly body: string;
  readonly durationMs: number;
}

/** Why an outbound call did not get an answer. */
export class OutboundError extends Error {
  constructor(
    readonly reason: 'refused-address' | 'unreachable' | 'timeout',
    message: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}
