import { createHmac } from 'node:crypto';
import type { AttemptLog } from '../../infra/attempts/port';
import {
  clearedOnSuccess,
  loginCounters,
  retryAfterSeconds,
  secondFactorAttemptAllowed,
} from '../domain/sign-in-limits';

export { LOGIN_LIMITS } from '../domain/sign-in-limits';

/**
 * Sign-in throttling over the attempt log, which every process of a deployment shares: the limits of
 * `domain/sign-in-limits` hold however many command-api processes answer. The log holds no email, address or
 * pending-login id: each counter's key is an HMAC of it under a server key (`keySecret`).
 */
export interface ThrottleOptions {
  readonly log: AttemptLog;
  readonly keySecret: Buffer;
  readonly now?: () => number;
}

abstract class Throttle {
  protected readonly log: AttemptLog;
  protected readonly now: () => number;
  private readonly keySecret: Buffer;

  constructor(options: ThrottleOptions) {
    this.log = options.log;
    this.keySecret = options.keySecret;
    this.now = options.now ?? Date.now;
  }

  protected hashed(counter: string): string {
    return createHmac('sha256', this.keySecret).update(counter, 'utf8').digest('base64url');
  }
}

/** BF-01: password-login failures per account and address, per address, and per account. */
export class LoginThrottle extends Throttle {
  /** Seconds to wait before another attempt, or 0 when one may be made now. */
  async retryAfterSeconds(tenant: string, email: string, address: string): Promise<number> {
    const now = this.now();
    const counters = await Promise.all(
      loginCounters(tenant, email, address).map(async ({ key, limit }) => ({
        limit,
        times: await this.log.list(this.hashed(key), now),
      })),
    );
    return retryAfterSeconds(counters, now);
  }

  async failed(tenant: string, email: string, address: string): Promise<void> {
    const now = this.now();
    await Promise.all(
      loginCounters(tenant, email, address).map(({ key, limit }) =>
        this.log.add(this.hashed(key), now, now + limit.windowMs),
      ),
    );
  }

  /** A success clears the failures of this account from this address (not those from elsewhere). */
  async succeeded(tenant: string, email: string, address: string): Promise<void> {
    await this.log.clear(this.hashed(clearedOnSuccess(tenant, email, address)));
  }
}

/**
 * TOTP-04: the codes tried for one pending login. Each attempt is counted before its code is checked, so
 * even attempts sent at once to several processes get no more than the limit checked.
 */
export class SecondFactorAttempts extends Throttle {
  /** Counts an attempt for pending login `pendingLogin` (valid until `expiresAt`); whether to check its code. */
  async admit(pendingLogin: string, expiresAt: number): Promise<boolean> {
    const key = this.hashed(`second-factor ${pendingLogin}`);
    const now = this.now();
    // Past the limit already: refuse without adding, so a refused pending login's entries stay few.
    if (!secondFactorAttemptAllowed((await this.log.list(key, now)).length + 1)) return false;
    const attempts = await this.log.add(key, now, Math.max(expiresAt, now + 1));
    return secondFactorAttemptAllowed(attempts.length);
  }
}
