/**
 * Password-login throttling (BF-01), per process. Failures are counted per account and address together, per
 * address, and per account, each over its own window; past a limit, attempts wait a delay that doubles with
 * every further failure (capped). An account alone is limited only at ASVS's ceiling (100 failures an hour),
 * so strangers cannot lock its owner out from elsewhere with a few guesses.
 */
interface Limit {
  readonly failures: number;
  readonly windowMs: number;
}

const MINUTE = 60_000;
export const LOGIN_LIMITS = {
  accountAndAddress: { failures: 5, windowMs: 15 * MINUTE },
  address: { failures: 30, windowMs: 15 * MINUTE },
  account: { failures: 100, windowMs: 60 * MINUTE },
} as const satisfies Record<string, Limit>;
const FIRST_DELAY_MS = MINUTE;
const MAX_DELAY_MS = 15 * MINUTE;
const MAX_KEYS = 100_000;

export class LoginThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly now: () => number = Date.now) {}

  private keys(tenant: string, email: string, address: string): Array<[string, Limit]> {
    return [
      [`account+address ${tenant} ${email} ${address}`, LOGIN_LIMITS.accountAndAddress],
      [`address ${address}`, LOGIN_LIMITS.address],
      [`account ${tenant} ${email}`, LOGIN_LIMITS.account],
    ];
  }

  private recent(key: string, limit: Limit): number[] {
    const cutoff = this.now() - limit.windowMs;
    const times = (this.failures.get(key) ?? []).filter((time) => time > cutoff);
    if (times.length === 0) this.failures.delete(key);
    else this.failures.set(key, times);
    return times;
  }

  /** Seconds to wait before another attempt, or 0 when one may be made now. */
  retryAfterSeconds(tenant: string, email: string, address: string): number {
    let waitMs = 0;
    for (const [key, limit] of this.keys(tenant, email, address)) {
      const times = this.recent(key, limit);
      if (times.length < limit.failures) continue;
      const delay = Math.min(FIRST_DELAY_MS * 2 ** (times.length - limit.failures), MAX_DELAY_MS);
      waitMs = Math.max(waitMs, times[times.length - 1]! + delay - this.now());
    }
    return Math.ceil(Math.max(0, waitMs) / 1000);
  }

  failed(tenant: string, email: string, address: string): void {
    if (this.failures.size >= MAX_KEYS) this.failures.clear();
    for (const [key, limit] of this.keys(tenant, email, address)) {
      const times = this.recent(key, limit);
      this.failures.set(key, [...times, this.now()]);
    }
  }

  /** A success clears the failures of this account from this address (not those from elsewhere). */
  succeeded(tenant: string, email: string, address: string): void {
    this.failures.delete(`account+address ${tenant} ${email} ${address}`);
  }
}
