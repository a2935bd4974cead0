import { randomUUID } from 'node:crypto';
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
  readonly now?: () => number;
}

export class ApiMeter {
  private readonly instance = randomUUID();
  private readonly counts = new Map<
    string,
    { tenant: string; day: string; credential: string; calls: number; lastUsedMs: number }
  >();
  private readonly dirty = new Set<string>();
  private readonly windows = new Map<string, { start: number; calls: number }>();
  private readonly now: () => number;

  constructor(private readonly options: ApiMeterOptions) {
    this.now = options.now ?? Date.now;
  }

  quotaFor(tenant: string): number | undefined {
    return this.options.tenantQuotas?.[tenant] ?? this.options.quotaPerMinute;
  }

  /** Counts one call against the tenant's per-minute quota; null when the tenant has no quota. */
  admit(tenant: string): QuotaDecision | null {
    const limit = this.quotaFor(tenant);
    if (limit === undefined) return null;
    const now = this.now();
    const start = now - (now % WINDOW_MS);
    let window = this.windows.get(tenant);
    if (!window || window.start !== start) {
      window = { start, calls: 0 };
      this.windows.set(tenant, window);
    }
    const resetSeconds = Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000));
    if (window.calls >= limit) return { allowed: false, limit, remaining: 0, resetSeconds };
    window.calls += 1;
    return { allowed: true, limit, remaining: limit - window.calls, resetSeconds };
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
