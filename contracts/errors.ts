/**
 * Error codes of the platform. The REST error body is one shape everywhere:
 * `{ "code": "E4001", "error": "validation_failed", "message": "...", "details": ..., "requestId": "..." }`.
 * `error` is a machine-readable word (the OAuth endpoints use the RFC 6749 words there), `code` the stable code.
 */
export const ERROR_CODES = {
  bad_request: { code: 'E4000', status: 400 },
  validation_failed: { code: 'E4001', status: 400 },
  filter_syntax: { code: 'E4002', status: 400 },
  unknown_field: { code: 'E4003', status: 400 },
  malformed_json: { code: 'E4004', status: 400 },
  unauthorized: { code: 'E4010', status: 401 },
  /** The AI token balance cannot cover a call's estimate; nothing was called or spent. */
  ai_balance_insufficient: { code: 'E4021', status: 402 },
  forbidden: { code: 'E4030', status: 403 },
  two_factor_required: { code: 'E4031', status: 403 },
  not_found: { code: 'E4040', status: 404 },
  method_not_allowed: { code: 'E4050', status: 405 },
  conflict: { code: 'E4090', status: 409 },
  idempotency_key_reused: { code: 'E4091', status: 422 },
  gone: { code: 'E4100', status: 410 },
  /** A read that would do more work than one query may (QUERY_BUDGET_MS): narrow the filter. */
  query_too_expensive: { code: 'E4220', status: 422 },
  precondition_failed: { code: 'E4120', status: 412 },
  precondition_required: { code: 'E4280', status: 428 },
  payload_too_large: { code: 'E4130', status: 413 },
  unsupported_media_type: { code: 'E4150', status: 415 },
  rate_limited: { code: 'E4290', status: 429 },
  internal: { code: 'E5000', status: 500 },
  not_configured: { code: 'E5010', status: 501 },
  upstream_failed: { code: 'E5020', status: 502 },
  unavailable: { code: 'E5030', status: 503 },
  position_timeout: { code: 'E5040', status: 504 },
  /** A service the platform called (the language model) did not answer in time. */
  upstream_timeout: { code: 'E5041', status: 504 },
} as const;

export type ErrorKind = keyof typeof ERROR_CODES;

/** A failure the caller can act on. Thrown by domain code and HTTP code alike; the HTTP kit renders it. */
export class PlatformError extends Error {
  readonly kind: ErrorKind;
  readonly details: unknown;

  constructor(kind: ErrorKind, message: string, details?: unknown) {
    super(message);
    this.name = 'PlatformError';
    this.kind = kind;
    this.details = details;
  }

  get status(): number {
    return ERROR_CODES[this.kind].status;
  }

  get code(): string {
    return ERROR_CODES[this.kind].code;
  }
}

export interface ErrorBody {
  code: string;
  error: string;
  message: string;
  details?: unknown;
  requestId?: string;
}

export function errorBody(error: PlatformError, requestId?: string): ErrorBody {
  const body: ErrorBody = { code: error.code, error: error.kind, message: error.message };
  if (error.details !== undefined) body.details = error.details;
  if (requestId) body.requestId = requestId;
  return body;
}
