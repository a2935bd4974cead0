/**
 * What the MCP server holds for its callers (open sessions; tool calls in progress), as shares of one pool: a
 * credential, a user and a system each hold at most their share, and the server at most its total, so that
 * one tenant (or one member, or one token) asking as fast as it can leaves the others theirs. A slot is taken
 * when asked for (for a session, before the SDK has opened it, so concurrent requests cannot all pass the
 * check) and given back when done.
 */
import { PlatformError } from '../../contracts/errors';

/** Who holds a session. */
export interface SessionHolder {
  readonly system: string;
  readonly userId: string;
  readonly credentialId: string;
}

/** The shares, from the narrowest to the whole. */
export interface SessionLimits {
  readonly perCredential: number;
  readonly perUser: number;
  readonly perSystem: number;
  readonly total: number;
}

/** Tool calls in progress at once: each is a REST request the server makes (a socket, a request's work). */
export const TOOL_CALL_LIMITS: SessionLimits = {
  perCredential: 16,
  perUser: 32,
  perSystem: 64,
  total: 512,
};

export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  perCredential: 16,
  perUser: 32,
  perSystem: 200,
  total: 2000,
};

export type SessionCap = 'credential' | 'user' | 'system' | 'server';

/** A taken slot: `touch` when its session is used, `release` (once or more) when it ends. */
export interface SessionSlot {
  readonly holder: SessionHolder;
  readonly lastUsed: number;
  touch(): void;
  release(): void;
}

/** The refusal of a session past a share: which cap, its size, and when a slot frees at the latest. */
export class SessionCapReached extends PlatformError {
  constructor(
    readonly cap: SessionCap,
    readonly limit: number,
    readonly retryAfterSeconds: number,
    what: string,
    advice: string,
  ) {
    super('rate_limited', `too many ${what}: ${DESCRIPTIONS[cap](limit)}; ${advice}`, {
      cap,
      limit,
      retryAfterSeconds,
    });
  }
}

const DESCRIPTIONS: Record<SessionCap, (limit: number) => string> = {
  credential: (limit) => `this credential holds its ${limit}`,
  user: (limit) => `this user holds their ${limit}`,
  system: (limit) => `this system holds its share of ${limit}`,
  server: (limit) => `the server holds its ${limit}`,
};

/** The key of each share a holder counts in. */
function scopesOf(holder: SessionHolder): Record<SessionCap, string> {
  return {
    credential: `${holder.system}\u0000${holder.userId}\u0000${holder.credentialId}`,
    user: `${holder.system}\u0000${holder.userId}`,
    system: holder.system,
    server: '',
  };
}

const CAPS: readonly SessionCap[] = ['credential', 'user', 'system', 'server'];

export class SessionSlots {
  private readonly slots = new Set<Slot>();
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly limits: SessionLimits,
    /** A session unused this long is ended by the server's sweep: the latest a slot frees. */
    private readonly idleMs: number,
    private readonly now: () => number = Date.now,
    /** What a slot is, and what to do when none is left, for the refusal's message. */
    private readonly wording = {
      what: 'open MCP sessions',
      advice: 'close one (or let one stay idle until it ends) and try again',
    },
  ) {}

  get size(): number {
    return this.slots.size;
  }

  /** A slot for `holder`, or a SessionCapReached naming the narrowest share that is full. */
  take(holder: SessionHolder): SessionSlot {
    const scopes = scopesOf(holder);
    for (const cap of CAPS) {
      const limit = this.limitOf(cap);
      if ((this.counts.get(`${cap}:${scopes[cap]}`) ?? 0) >= limit)
        throw new SessionCapReached(
          cap,
          limit,
          this.secondsUntilFree(cap, scopes[cap]),
          this.wording.what,
          this.wording.advice,
        );
    }
    const slot = new Slot(holder, this.now, () => this.release(slot));
    this.slots.add(slot);
    for (const cap of CAPS) this.add(`${cap}:${scopes[cap]}`, 1);
    return slot;
  }

  /** The slots unused for longer than the idle time: the sessions to end. */
  idle(): SessionSlot[] {
    const now = this.now();
    return [...this.slots].filter((slot) => now - slot.lastUsed > this.idleMs);
  }

  private limitOf(cap: SessionCap): number {
    const { perCredential, perUser, perSystem, total } = this.limits;
    return { credential: perCredential, user: perUser, system: perSystem, server: total }[cap];
  }

  private release(slot: Slot): void {
    if (!this.slots.delete(slot)) return;
    const scopes = scopesOf(slot.holder);
    for (const cap of CAPS) this.add(`${cap}:${scopes[cap]}`, -1);
  }

  private add(key: string, delta: number): void {
    const count = (this.counts.get(key) ?? 0) + delta;
    if (count === 0) this.counts.delete(key);
    else this.counts.set(key, count);
  }

  /** When the least recently used session of the full share ends by itself (at least 1 s). */
  private secondsUntilFree(cap: SessionCap, scope: string): number {
    let oldest = Number.POSITIVE_INFINITY;
    for (const slot of this.slots)
      if (scopesOf(slot.holder)[cap] === scope) oldest = Math.min(oldest, slot.lastUsed);
    const waitMs = Number.isFinite(oldest) ? oldest + this.idleMs - this.now() : this.idleMs;
    return Math.max(1, Math.ceil(waitMs / 1000));
  }
}

class Slot implements SessionSlot {
  lastUsed: number;

  constructor(
    readonly holder: SessionHolder,
    private readonly now: () => number,
    readonly release: () => void,
  ) {
    this.lastUsed = now();
  }

  touch(): void {
    this.lastUsed = this.now();
  }
}
