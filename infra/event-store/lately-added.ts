/**
 * The entries added last, up to `max` of them: once past it, the oldest added go first. For what is read
 * several times shortly after it is added, in about that order (the events opened for the subscriptions of a
 * process, each of which reads every one): reading an entry does not keep it longer, so a read is one lookup,
 * where an LRU cache's also moves the entry (the projections thread spent about 8 µs a bulk-created record in
 * lru-cache, a dozen subscriptions reading each event; about 6 since, by a profile). Adding costs more than
 * lru-cache's: what is added about as often as it is read stays there.
 *
 * The order is kept in an array of places beside the map, not found by iterating the map: V8's map iterator
 * walks past every entry deleted since the table was last rebuilt, which made each eviction from a map of tens
 * of thousands cost several µs.
 */
export class LatelyAdded<K, V> {
  private readonly byKey = new Map<K, { readonly value: V; readonly added: number }>();
  /** Keys in the order added, each with the count of additions it was added at (`order[i]`, `addedAt[i]`). */
  private order: K[] = [];
  private addedAt: number[] = [];
  /**
   * The oldest place not passed yet: places before it, and places whose key was added again or deleted since,
   * are stale.
   */
  private oldest = 0;
  private additions = 0;

  constructor(private readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new Error('max must be a whole number of at least 1');
  }

  get size(): number {
    return this.byKey.size;
  }

  get(key: K): V | undefined {
    return this.byKey.get(key)?.value;
  }

  /** Adds the entry as the newest (one under its key before is replaced). */
  set(key: K, value: V): void {
    this.byKey.delete(key);
    this.additions += 1;
    this.byKey.set(key, { value, added: this.additions });
    this.order.push(key);
    this.addedAt.push(this.additions);
    if (this.byKey.size > this.max) this.dropOldest();
    // Stale places are dropped once they outnumber the live ones: each set pays for its own at most once.
    if (this.order.length > 2 * this.byKey.size + 1024) this.compact();
  }

  delete(key: K): boolean {
    return this.byKey.delete(key);
  }

  *entries(): IterableIterator<[K, V]> {
    for (const [key, entry] of this.byKey) yield [key, entry.value];
  }

  private isLive(place: number): boolean {
    return this.byKey.get(this.order[place]!)?.added === this.addedAt[place];
  }

  private dropOldest(): void {
    while (!this.isLive(this.oldest)) this.oldest += 1;
    this.byKey.delete(this.order[this.oldest]!);
    this.oldest += 1;
  }

  private compact(): void {
    const order: K[] = [];
    const addedAt: number[] = [];
    for (let place = this.oldest; place < this.order.length; place++) {
      if (!this.isLive(place)) continue;
      order.push(this.order[place]!);
      addedAt.push(this.addedAt[place]!);
    }
    [this.order, this.addedAt, this.oldest] = [order, addedAt, 0];
  }
}
