/** How a `RecentMap` is bounded. */
export interface RecentMapLimits<K, V> {
  /** The most entries it keeps. */
  readonly max: number;
  /** The most its entries may weigh in all, as `sizeOf` weighs each (unbounded without). */
  readonly maxSize?: number;
  readonly sizeOf?: (value: V, key: K) => number;
}

/**
 * A map that keeps only what was set last: past `max` entries, or `maxSize` in all, the entries set first are
 * dropped. A read does not keep an entry longer (first in, first out), which suits caches of what was just
 * done, read soon after or not at all; a read is one `Map.get`, where `lru-cache` does bookkeeping on every
 * call that cost more than the work a hit saved (the personal-data store reads several per event).
 */
export class RecentMap<K, V> {
  private readonly entries = new Map<K, V>();
  private weight = 0;

  constructor(private readonly limits: RecentMapLimits<K, V>) {
    if (!Number.isSafeInteger(limits.max) || limits.max < 1) throw new RangeError('max must be a count');
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** Sets the entry as the latest (one set before under the key is replaced), then drops the oldest past the limits. */
  set(key: K, value: V): void {
    this.delete(key);
    this.entries.set(key, value);
    this.weight += this.sizeOf(value, key);
    const maxSize = this.limits.maxSize ?? Infinity;
    while (this.entries.size > this.limits.max || (this.weight > maxSize && this.entries.size > 0)) {
      const [oldestKey, oldest] = this.entries.entries().next().value as [K, V];
      this.entries.delete(oldestKey);
      this.weight -= this.sizeOf(oldest, oldestKey);
    }
  }

  delete(key: K): boolean {
    const value = this.entries.get(key);
    if (value === undefined && !this.entries.has(key)) return false;
    this.entries.delete(key);
    this.weight -= this.sizeOf(value as V, key);
    return true;
  }

  /** Drops every entry `test` picks. */
  deleteWhere(test: (value: V, key: K) => boolean): void {
    for (const [key, value] of [...this.entries]) if (test(value, key)) this.delete(key);
  }

  private sizeOf(value: V, key: K): number {
    return this.limits.sizeOf?.(value, key) ?? 0;
  }
}
