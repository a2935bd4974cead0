/**
 * A cache of at most `max` entries that forgets the least recently used half at once: entries are set in
 * the young generation, which once it holds half of `max` becomes the old one (the old one before it is
 * dropped whole); an entry read from the old generation moves back to the young. Each call is a map lookup or
 * two, where an LRU cache's also relinks the entry: a store's key cache is asked several times for every
 * record read or written, and lru-cache's bookkeeping cost more than the lookups themselves. No lookup or
 * eviction iterates a map, so its deleted slots cost nothing (a map evicting its oldest entry one by one walks
 * past them all).
 */
export class TwoGenerationCache<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private readonly generation: number;

  constructor(max: number) {
    if (!Number.isSafeInteger(max) || max < 2) throw new Error('max must be a whole number of at least 2');
    this.generation = Math.floor(max / 2);
  }

  /** How many entries are kept now (never more than `max`). */
  get size(): number {
    return this.young.size + this.old.size;
  }

  /** The entry, marked used (moved to the young generation when it was in the old). */
  get(key: K): V | undefined {
    const young = this.young.get(key);
    if (young !== undefined) return young;
    const old = this.old.get(key);
    if (old === undefined) return undefined;
    this.old.delete(key);
    this.setYoung(key, old);
    return old;
  }

  /** The entry, not marked used. */
  peek(key: K): V | undefined {
    return this.young.get(key) ?? this.old.get(key);
  }

  set(key: K, value: V): void {
    this.old.delete(key);
    this.setYoung(key, value);
  }

  /** Every entry kept (for a rare sweep, such as an erasure's: a lookup never iterates). A key is in one map only. */
  *entries(): IterableIterator<[K, V]> {
    yield* this.young;
    yield* this.old;
  }

  delete(key: K): boolean {
    const young = this.young.delete(key);
    return this.old.delete(key) || young;
  }

  private setYoung(key: K, value: V): void {
    this.young.set(key, value);
    if (this.young.size < this.generation) return;
    this.old = this.young;
    this.young = new Map();
  }
}
