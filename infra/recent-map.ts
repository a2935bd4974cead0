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
 *
 * The order of setting is kept in arrays beside the map, not taken from the map's own order: V8 leaves a
 * deleted entry's slot in place until the table is rebuilt, so finding a map's first entry walks past every
 * entry dropped before it, tens of microseconds per drop once tens of thousands were.
 */
export class RecentMap<K, V> {
  private readonly entries = new Map<K, { readonly value: V; readonly setAs: number }>();
  /** Keys in the order they were set, from `head` on; one set again or deleted since is stale there. */
  private keys: K[] = [];
  private setAs: number[] = [];
  private head = 0;
  private sets = 0;
  private weight = 0;

  constructor(private readonly limits: RecentMapLimits<K, V>) {
    if (!Number.isSafeInteger(limits.max) || limits.max < 1) throw new RangeError('max must be a count');
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** Sets the entry as the latest (one set before under the key is replaced), then drops the oldest past the limits. */
  set(key: K, value: V): void {
    this.delete(key);
    const setAs = this.sets++;
    this.entries.set(key, { value, setAs });
    this.keys.push(key);
    this.setAs.push(setAs);
    this.weight += this.sizeOf(value, key);
    const maxSize = this.limits.maxSize ?? Infinity;
    while (this.entries.size > this.limits.max || (this.weight > maxSize && this.entries.size > 0))
      this.dropOldest();
    this.compact();
  }

  delete(key: K): boolean {
    const entry = this.entries.get(key);
    if (entry === undefined) return false;
    this.entries.delete(key);
    this.weight -= this.sizeOf(entry.value, key);
    return true;
  }

  /** Drops every entry `test` picks. */
  deleteWhere(test: (value: V, key: K) => boolean): void {
    for (const [key, entry] of [...this.entries]) if (test(entry.value, key)) this.delete(key);
  }

  private dropOldest(): void {
    for (;;) {
      const key = this.keys[this.head]!;
      const setAs = this.setAs[this.head]!;
      this.head += 1;
      if (this.entries.get(key)?.setAs === setAs) {
        this.delete(key);
        return;
      }
    }
  }

  /** Forgets the order of what was dropped (past `head`) or is stale, once it outweighs what is kept. */
  private compact(): void {
    // Each compaction walks what is left, and the next comes after as many sets again: constant time per set.
    if (this.head <= this.keys.length / 2 && this.keys.length - this.head <= 2 * this.entries.size + 1024)
      return;
    const keys: K[] = [];
    const setAs: number[] = [];
    for (let at = this.head; at < this.keys.length; at++) {
      const key = this.keys[at]!;
      if (this.entries.get(key)?.setAs !== this.setAs[at]) continue;
      keys.push(key);
      setAs.push(this.setAs[at]!);
    }
    this.keys = keys;
    this.setAs = setAs;
    this.head = 0;
  }

  private sizeOf(value: V, key: K): number {
    return this.limits.sizeOf?.(value, key) ?? 0;
  }
}
