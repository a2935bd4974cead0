/**
 * When a delivery that failed is tried again: the published schedule (docs/api.md), about three days in all.
 * The first attempt goes at once; each delay below follows the attempt of its rank. Each is stretched or
 * shrunk by up to a fifth at random (jitter), so the deliveries a receiver's outage failed together do not all
 * come back in the same instant.
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  30_000,
  2 * 60_000,
  10 * 60_000,
  30 * 60_000,
  3_600_000,
  2 * 3_600_000,
  4 * 3_600_000,
  8 * 3_600_000,
  12 * 3_600_000,
  12 * 3_600_000,
  12 * 3_600_000,
  12 * 3_600_000,
  8 * 3_600_000,
];

/** Every attempt a delivery gets: the first and one after each delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

const JITTER = 0.2;

/**
 * The delay before the next attempt, after `attemptsMade` attempts failed (null: that was the last).
 * `random` is in [0, 1); `schedule` may be a shortened one (tests, benchmarks).
 */
export function retryDelay(
  attemptsMade: number,
  random: number,
  schedule: readonly number[] = RETRY_DELAYS_MS,
): number | null {
  const base = schedule[attemptsMade - 1];
  if (base === undefined) return null;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random));
}
