import { createHash, randomUUID } from 'node:crypto';
import type { AttemptLog } from '../attempts/port';
import type { ReadStore } from '../read-store/port';

/**
 * API-call metering as the spec counts it: every operation is one call; a list is one call per page, and
 * each list request returns one page, so every request under `/api` is one call. Counted per tenant and
 * credential per UTC day, flushed to the read store (one document per process and key, its cumulative
 * count doubling as the position so a re-flush is idempotent).
 */
export interface QuotaDecision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until the window resets. */
  readonly resetSeconds: number;
}

export interface UsageRow {
  readonly day: string;
  readonly credential: string;
  readonly calls: number;
}

export interface CredentialActivity {
  readonly calls: number;
  /** Null for usage counted before last-use times were kept. */
  readonly lastUsedAt: string | null;
}

export const USAGE_COLLECTION = 'api_usage';
const WINDOW_MS = 60_000;
const DAY_MS = 86_400_000;

export interface ApiMeterOptions {
  readonly store: ReadStore;
  readonly quotaPerMinute?: number;
  readonly tenantQuotas?: Readonly<Record<string, number>>;
  /**
   * Where the processes of a deployment share each tenant's quota (the attempt log): without it the quota
   * holds per process. Each process draws it in blocks, so the log is written once per block, not per call.
   */
  readonly shared?: AttemptLog;
  readonly now?: () => number;
}

/** A process draws a tenant's quota in blocks of a twentieth of it: what one process may leave unused. */
const BLOCKS_PER_QUOTA = 20;

/** One tenant's quota window in this process: calls admitted, and calls this process may admit. */
interface QuotaWindow {
  start: number;
  calls: number;
  granted: number;
  /** Calls granted to every process so far, as the log said at the last draw. */
  grantedEverywhere: number;
  /** The log said the quota is spent: no further draw in this window. */
  spent: boolean;
}

export class ApiMeter {
  private readonly instance = randomUUID();
  private readonly counts = new Map<
    string,
    { tenant: string; day: string; credential: string; calls: number; lastUsedMs: number }
  >();
  private readonly dirty = new Set<string>();
  private readonly windows = new Map<string, QuotaWindow>();
  private readonly now: () => number;

  constructor(private readonly options: ApiMeterOptions) {
    this.now = options.now ?? Date.now;
  }

  quotaFor(tenant: string): number | undefined {
    return this.options.tenantQuotas?.[tenant] ?? this.options.quotaPerMinute;
  }

  /**
   * Counts one call against the tenant's per-minute quota; null when the tenant has no quota. With a shared
   * log, no more calls are admitted in a window by all processes together than the quota.
   */
  async admit(tenant: string): Promise<QuotaDecision | null> {
    const limit = this.quotaFor(tenant);
    if (limit === undefined) return null;
    const now = this.now();
    const start = now - (now % WINDOW_MS);
    let window = this.windows.get(tenant);
    if (!window || window.start !== start) {
      const granted = this.options.shared ? 0 : limit;
      window = { start, calls: 0, granted, grantedEverywhere: granted, spent: false };
      this.windows.set(tenant, window);
    }
    const resetSeconds = Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000));
    if (window.calls >= window.granted && this.options.shared && !window.spent)
      await this.draw(this.options.shared, tenant, window, limit, now);
    if (window.calls >= window.granted) return { allowed: false, limit, remaining: 0, resetSeconds };
    window.calls += 1;
    const remaining = limit - window.grantedEverywhere + (window.granted - window.calls);
    return { allowed: true, limit, remaining: Math.max(0, remaining), resetSeconds };
  }

  /** Draws the next block of the tenant's quota from the shared log; marks the window spent when none is left. */
  private async draw(
    log: AttemptLog,
    tenant: string,
    window: QuotaWindow,
    limit: number,
    now: number,
  ): Promise<void> {
    const block = Math.max(1, Math.floor(limit / BLOCKS_PER_QUOTA));
    const key = `quota.${createHash('sha256').update(tenant).digest('base64url')}.${window.start}`;
    const { id, times } = await log.add(key, now, window.start + WINDOW_MS);
    // Blocks are granted in the order the log holds them; one past the quota is given back.
    const before = (times.length - 1) * block;
    const grant = Math.min(block, limit - before);
    if (grant <= 0) {
      window.spent = true;
      await log.remove(key, id);
      return;
    }
    // This process's window may have moved on while the log answered.
    if (this.windows.get(tenant) !== window) return;
    window.granted += grant;
    window.grantedEverywhere = before + grant;
  }

  private dayCache = { until: 0, day: '' };

  /** The UTC day of `now`, recomputed once per day boundary rather than per call. */
  private today(): string {
    const now = this.now();
    if (now >= this.dayCache.until || now < this.dayCache.until - DAY_MS) {
      const start = now - (now % DAY_MS);
      this.dayCache = { until: start + DAY_MS, day: new Date(start).toISOString().slice(0, 10) };
    }
    return this.dayCache.day;
  }

  record(tenant: string, credential: string): void {
    const day = this.today();
    const key = `${tenant}.${day}.${credential}`;
    const entry = this.counts.get(key);
    const now = this.now();
    if (entry) {
      entry.calls += 1;
      entry.lastUsedMs = now;
    } else this.counts.set(key, { tenant, day, credential, calls: 1, lastUsedMs: now });
    this.dirty.add(key);
  }

  /** How many counts (a tenant's calls with one credential on one day) are not written yet: a failed flush keeps them. */
  get pendingCounts(): number {
    return this.dirty.size;
  }

  async flush(): Promise<void> {
    if (this.dirty.size === 0) return;
    const keys = [...this.dirty];
    this.dirty.clear();
    const changes = keys.map((key) => {
      const { lastUsedMs, ...entry } = this.counts.get(key)!;
      return {
        op: 'upsert' as const,
        collection: USAGE_COLLECTION,
        doc: { id: `${key}.${this.instance}`, ...entry, lastUsedAt: new Date(lastUsedMs).toISOString() },
        position: BigInt(entry.calls),
      };
    });
    try {
      await this.options.store.apply(changes);
    } catch (error) {
      for (const key of keys) this.dirty.add(key);
      throw error;
    }
  }

  /** Per credential: every call it made (all days, all processes) and when it was last used. */
  async activity(tenant: string, credentials: readonly string[]): Promise<Map<string, CredentialActivity>> {
    await this.flush();
    const activity = new Map<string, CredentialActivity>();
    if (credentials.length === 0) return activity;
    const { items } = await this.options.store.find(USAGE_COLLECTION, {
      filter: {
        kind: 'and',
        children: [
          { kind: 'compare', path: 'tenant', op: 'eq', value: tenant },
          { kind: 'in', path: 'credential', values: [...credentials] },
        ],
      },
      limit: 100_000,
      withTotal: false,
    });
    for (const item of items) {
      const credential = String(item.credential);
      const previous = activity.get(credential);
      const lastUsedAt = typeof item.lastUsedAt === 'string' ? item.lastUsedAt : null;
      activity.set(credential, {
        calls: (previous?.calls ?? 0) + Number(item.calls),
        lastUsedAt:
          previous?.lastUsedAt && (!lastUsedAt || previous.lastUsedAt > lastUsedAt)
            ? previous.lastUsedAt
            : lastUsedAt,
      });
    }
    return activity;
  }

  async usage(tenant: string, fromDay: string, toDay: string): Promise<UsageRow[]> {
    await this.flush();
    const { items } = await this.options.store.find(USAGE_COLLECTION, {
      filter: {
        kind: 'and',
        children: [
          { kind: 'compare', path: 'tenant', op: 'eq', value: tenant },
          { kind: 'compare', path: 'day', op: 'gte', value: fromDay },
          { kind: 'compare', path: 'day', op: 'lte', value: toDay },
        ],
      },
      limit: 100_000,
      withTotal: false,
    });
    const totals = new Map<string, UsageRow>();
    for (const item of items) {
      const day = String(item.day);
      const credential = String(item.credential);
      const key = `${day} ${credential}`;
      const calls = (totals.get(key)?.calls ?? 0) + Number(item.calls);
      totals.set(key, { day, credential, calls });
    }
    return [...totals.values()].sort(
      (a, b) => a.day.localeCompare(b.day) || a.credential.localeCompare(b.credential),
    );
  }
}
