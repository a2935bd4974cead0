/**
 * The entries added last, up to `max` of them and (with `sizing`) up to `maxSize` in all: once past either,
 * the oldest added go first. For what is used in the order it was added, shortly after (events opened for the
 * subscriptions that read them next, values sealed and read back): reading an entry does not keep it longer,
 * so a read is one lookup, where an LRU cache's moves the entry too (the projections thread reads every
 * record's events once for each of a dozen subscriptions).
 *
 * The order is kept in an array of places beside the map, not found by iterating the map: V8's map iterator
 * walks past every entry deleted since the table was last rebuilt, which made each eviction from a map of tens
 * of thousands cost several µs.
 */
export class LatelyAdded<K, V> {
  private readonly entries = new Map<
    K,
    { readonly value: V; readonly size: number; readonly added: number }
  >();
  /** Keys in the order added, each with the count of additions it was added at (`order[i]`, `addedAt[i]`). */
  private order: K[] = [];
  private addedAt: number[] = [];
  /** Where the oldest place not yet passed is: places before it, and places whose key was added again or deleted since, are stale. */
  private oldest = 0;
  private additions = 0;
  private totalSize = 0;

  constructor(
    private readonly max: number,
    private readonly sizing?: { readonly maxSize: number; readonly sizeOf: (value: V, key: K) => number },
  ) {
    if (!Number.isInteger(max) || max < 1) throw new Error('max must be a whole number of at least 1');
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** Adds the entry as the newest (one under its key before is replaced); one larger than `maxSize` is not kept. */
  set(key: K, value: V): void {
    this.delete(key);
    const size = this.sizing?.sizeOf(value, key) ?? 0;
    if (this.sizing !== undefined && size > this.sizing.maxSize) return;
    this.additions += 1;
    this.entries.set(key, { value, size, added: this.additions });
    this.order.push(key);
    this.addedAt.push(this.additions);
    this.totalSize += size;
    while (this.entries.size > this.max || this.totalSize > (this.sizing?.maxSize ?? Infinity))
      this.dropOldest();
    // Stale places are dropped once they outnumber the live ones: each set pays for its own at most once.
    if (this.order.length > 2 * this.entries.size + 1024) this.compact();
  }

  delete(key: K): boolean {
    const entry = this.entries.get(key);
    if (entry === undefined) return false;
    this.entries.delete(key);
    this.totalSize -= entry.size;
    return true;
  }

  /** Removes the entries `matches` picks. */
  deleteWhere(matches: (value: V, key: K) => boolean): void {
    for (const [key, entry] of [...this.entries]) if (matches(entry.value, key)) this.delete(key);
  }

  private isLive(place: number): boolean {
    return this.entries.get(this.order[place]!)?.added === this.addedAt[place];
  }

  private dropOldest(): void {
    while (!this.isLive(this.oldest)) this.oldest += 1;
    this.delete(this.order[this.oldest]!);
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
