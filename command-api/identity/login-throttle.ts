import { createHmac } from 'node:crypto';
import type { AttemptLog } from '../../infra/attempts/port';
import {
  clientAuthCounters,
  loginCounters,
  type LoginCounter,
  othersThan,
  retryAfterSeconds,
  secondFactorAttemptAllowed,
} from './domain/sign-in-limits';

export { LOGIN_LIMITS } from './domain/sign-in-limits';

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

/** An attempt under way: counted as a failure until `succeeded` takes it back. */
export interface CountedAttempt {
  /** Seconds to wait before trying again (nothing was counted), or 0: check the credential. */
  readonly waitSeconds: number;
  /** The credential was right: the attempt is no failure, and the first counter's failures go. */
  succeeded(): Promise<void>;
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

  /** Seconds the failures on `counters` make the next attempt wait, or 0 when one may be made now. */
  protected async waitOn(counters: readonly LoginCounter[]): Promise<number> {
    const now = this.now();
    const counted = await Promise.all(
      counters.map(async ({ key, limit }) => ({ limit, times: await this.log.list(this.hashed(key), now) })),
    );
    return retryAfterSeconds(counted, now);
  }

  /**
   * Begins an attempt on `counters`: the wait their failures impose, else the attempt, counted as a failure
   * from now on, so attempts racing it in any process see it: however many arrive at once, no more get their
   * credential checked than the limits allow. A success takes it back and clears `counters[0]`.
   */
  protected async beginOn(counters: readonly LoginCounter[]): Promise<CountedAttempt> {
    const waitSeconds = await this.waitOn(counters);
    if (waitSeconds > 0) return { waitSeconds, succeeded: async () => undefined };
    const now = this.now();
    const keyed = counters.map((counter) => ({ ...counter, key: this.hashed(counter.key) }));
    const added = await Promise.all(
      keyed.map(({ key, limit }) => this.log.add(key, now, now + limit.windowMs)),
    );
    const takeBack = async () => {
      await Promise.all(keyed.map(({ key }, index) => this.log.remove(key, added[index]!.id)));
    };
    // Attempts that began since the check above (here or in another process) count too.
    const raced = retryAfterSeconds(
      keyed.map(({ limit }, index) => ({ limit, times: othersThan(added[index]!.times, now) })),
      now,
    );
    if (raced > 0) {
      await takeBack();
      return { waitSeconds: raced, succeeded: async () => undefined };
    }
    return {
      waitSeconds: 0,
      succeeded: async () => {
        await takeBack();
        await this.log.clear(keyed[0]!.key);
      },
    };
  }
}

/**
 * BF-01: password-login failures per account and address, per address, and per account. An attempt counts as
 * a failure from the moment it begins, before its password is checked.
 */
export class LoginThrottle extends Throttle {
  /** Seconds to wait before another attempt, or 0 when one may be made now. */
  retryAfterSeconds(tenant: string, email: string, address: string): Promise<number> {
    return this.waitOn(loginCounters(tenant, email, address));
  }

  /** Begins an attempt: the wait the failures so far impose, else the attempt, counted as a failure. */
  begin(tenant: string, email: string, address: string): Promise<CountedAttempt> {
    return this.beginOn(loginCounters(tenant, email, address));
  }
}

/** A client authentication under way: its wait, or the two ways it can end. */
export interface CheckedAttempt {
  /** Seconds to wait before trying again, or 0: check the secret. */
  readonly waitSeconds: number;
  /** The secret was wrong: counted on every counter. */
  failed(): Promise<void>;
  /** The secret was right: this client's failures from this address go. */
  succeeded(): Promise<void>;
}

/**
 * Failed client authentications at the OAuth endpoints, per client and address, per address and per client
 * (`CLIENT_AUTH_LIMITS`). Unlike a password, a client secret is 256 random bits, so no burst of guesses racing
 * the count can matter: a failure is counted once it fails, and a right secret costs three reads of the
 * log, not writes (the token endpoint is a hot path).
 */
export class ClientAuthThrottle extends Throttle {
  async begin(tenant: string, clientId: string, address: string): Promise<CheckedAttempt> {
    const now = this.now();
    const counters = clientAuthCounters(tenant, clientId, address).map((counter) => ({
      ...counter,
      key: this.hashed(counter.key),
    }));
    const times = await Promise.all(counters.map(({ key }) => this.log.list(key, now)));
    const waitSeconds = retryAfterSeconds(
      counters.map(({ limit }, index) => ({ limit, times: times[index]! })),
      now,
    );
    return {
      waitSeconds,
      failed: async () => {
        const at = this.now();
        await Promise.all(counters.map(({ key, limit }) => this.log.add(key, at, at + limit.windowMs)));
      },
      succeeded: async () => {
        if (times[0]!.length > 0) await this.log.clear(counters[0]!.key);
      },
    };
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
    const { times } = await this.log.add(key, now, Math.max(expiresAt, now + 1));
    return secondFactorAttemptAllowed(times.length);
  }
}
