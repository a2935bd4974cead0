/**
 * The limits on guessing at sign-in, as pure rules over failure times (milliseconds since the epoch).
 *
 * BF-01: password-login failures are counted per account and address together, per address, and per account,
 * each over its own window; past a limit, attempts wait a delay that doubles with every further failure
 * (capped). An account alone is limited only at ASVS's ceiling (100 failures an hour), so strangers cannot
 * lock its owner out from elsewhere with a few guesses.
 *
 * TOTP-04: a pending login takes at most five codes; the sixth attempt is refused whatever it sends.
 */
export interface Limit {
  readonly failures: number;
  readonly windowMs: number;
}

const MINUTE = 60_000;
export const LOGIN_LIMITS = {
  accountAndAddress: { failures: 5, windowMs: 15 * MINUTE },
  address: { failures: 30, windowMs: 15 * MINUTE },
  account: { failures: 100, windowMs: 60 * MINUTE },
} as const satisfies Record<string, Limit>;
export const FIRST_DELAY_MS = MINUTE;
export const MAX_DELAY_MS = 15 * MINUTE;

/**
 * Failed client authentications at the OAuth endpoints (token, renew, revoke, introspect), counted like
 * BF-01: per client and address, per address, per client. A client alone is limited at a high ceiling, so a
 * stranger guessing its secret cannot lock the client out from elsewhere; its own address is limited early.
 */
export const CLIENT_AUTH_LIMITS = {
  clientAndAddress: { failures: 10, windowMs: 15 * MINUTE },
  address: { failures: 30, windowMs: 15 * MINUTE },
  client: { failures: 100, windowMs: 60 * MINUTE },
} as const satisfies Record<string, Limit>;

/** Codes one pending login may try (TOTP-04). */
export const MAX_SECOND_FACTOR_ATTEMPTS = 5;

/** A counter of login failures: what it counts, and over which window. */
export interface LoginCounter {
  readonly key: string;
  readonly limit: Limit;
}

/**
 * The counters a login of `email` (lower-cased) from `address` in `tenant` moves when it fails; a success
 * clears the first (this account's failures from this address, not those from elsewhere).
 */
export function loginCounters(tenant: string, email: string, address: string): LoginCounter[] {
  return [
    { key: `account+address ${tenant} ${email} ${address}`, limit: LOGIN_LIMITS.accountAndAddress },
    { key: `address ${address}`, limit: LOGIN_LIMITS.address },
    { key: `account ${tenant} ${email}`, limit: LOGIN_LIMITS.account },
  ];
}

/**
 * The counters a failed authentication of client `clientId` (as sent: possibly unknown) from `address` moves.
 * Apart from the login counters: a client's failures do not hold back its users' sign-ins.
 */
export function clientAuthCounters(tenant: string, clientId: string, address: string): LoginCounter[] {
  return [
    { key: `client+address ${tenant} ${clientId} ${address}`, limit: CLIENT_AUTH_LIMITS.clientAndAddress },
    { key: `client-address ${address}`, limit: CLIENT_AUTH_LIMITS.address },
    { key: `client ${tenant} ${clientId}`, limit: CLIENT_AUTH_LIMITS.client },
  ];
}

/**
 * Milliseconds a counter with failures at `times` makes the next attempt wait at `now` (0: none). Only
 * failures inside the window count; past the limit the wait starts at the latest failure and doubles with
 * each failure beyond the limit, up to `MAX_DELAY_MS`.
 */
export function waitMs(times: readonly number[], limit: Limit, now: number): number {
  const recent = times.filter((time) => time > now - limit.windowMs);
  if (recent.length < limit.failures) return 0;
  const delay = Math.min(FIRST_DELAY_MS * 2 ** (recent.length - limit.failures), MAX_DELAY_MS);
  return Math.max(0, Math.max(...recent) + delay - now);
}

/** The times without one at `at`: the failures an attempt counted at `at` finds besides itself. */
export function othersThan(times: readonly number[], at: number): number[] {
  const index = times.lastIndexOf(at);
  return index < 0 ? [...times] : [...times.slice(0, index), ...times.slice(index + 1)];
}

/** Whole seconds to wait (rounded up) given every counter's failures: the longest wait wins. */
export function retryAfterSeconds(
  counters: ReadonlyArray<{ readonly times: readonly number[]; readonly limit: Limit }>,
  now: number,
): number {
  const longest = Math.max(0, ...counters.map(({ times, limit }) => waitMs(times, limit, now)));
  return Math.ceil(longest / 1000);
}

/** Whether the `attempt`-th code (1-based) for one pending login may still be checked. */
export function secondFactorAttemptAllowed(attempt: number): boolean {
  return attempt <= MAX_SECOND_FACTOR_ATTEMPTS;
}
