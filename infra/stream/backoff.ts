/** How long a consumer waits before delivering a message again after its handler rejected it. */
export interface RetryBackoff {
  /** Wait after the first rejection. Default 100 ms. */
  readonly initialMs: number;
  /** Upper bound of the doubling waits. Default 5 s. */
  readonly maxMs: number;
}

export const defaultRetryBackoff: RetryBackoff = { initialMs: 100, maxMs: 5_000 };

/** Bounded exponential back-off: initialMs, 2 × initialMs, … up to maxMs, for failed attempts 1, 2, … */
export function retryDelayMs(failedAttempts: number, backoff: RetryBackoff): number {
  const doublings = Math.min(Math.max(failedAttempts - 1, 0), 30);
  return Math.min(backoff.initialMs * 2 ** doublings, backoff.maxMs);
}
