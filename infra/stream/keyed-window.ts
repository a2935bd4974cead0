/**
 * The messages of one partition in flight at once: up to `concurrency` handlers run; a message waits while an
 * earlier one of its key is unfinished (without taking a slot), so a key keeps its order and a slow key does
 * not hold the others. Offsets are committed only through the contiguous prefix of handled messages, so a
 * crash redelivers every unfinished one (at-least-once).
 */
export class KeyedWindow<Item> {
  private readonly entries: Array<{ item: Item; key: string; started: boolean; done: boolean }> = [];
  private running = 0;
  private readonly waiters: Array<() => void> = [];

  /**
   * @param handle resolves true once the item is handled, false when it was given up (the consumer stops):
   *   a given-up item stays unfinished, and nothing from it on is committed.
   * @param onProgress called after each handled item (commit `takeHandled()` there).
   */
  constructor(
    private readonly concurrency: number,
    private readonly handle: (item: Item) => Promise<boolean>,
    private readonly onProgress: () => void,
  ) {}

  /** Items added and not yet taken by `takeHandled`. */
  get size(): number {
    return this.entries.length;
  }

  add(item: Item, key: string): void {
    this.entries.push({ item, key, started: false, done: false });
    this.pump();
  }

  /** Removes the contiguous prefix of handled items; the last of them (to commit after), if any. */
  takeHandled(): Item | undefined {
    let last: Item | undefined;
    while (this.entries.length > 0 && this.entries[0]!.done) last = this.entries.shift()!.item;
    return last;
  }

  /** Resolves when fewer than `limit` items are held, or when nothing runs any more. */
  whenBelow(limit: number): Promise<void> {
    if (this.entries.length < limit || this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Resolves once no handler runs (after a stop: the ones running have finished or given up). */
  async idle(): Promise<void> {
    while (this.running > 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private pump(): void {
    const blocked = new Set<string>();
    for (const entry of this.entries) {
      if (this.running >= this.concurrency) return;
      if (entry.done) continue;
      if (entry.started || blocked.has(entry.key)) {
        blocked.add(entry.key);
        continue;
      }
      blocked.add(entry.key);
      this.start(entry);
    }
  }

  private start(entry: (typeof this.entries)[number]): void {
    entry.started = true;
    this.running += 1;
    this.handle(entry.item).then(
      (handled) => this.settle(entry, handled),
      () => this.settle(entry, false),
    );
  }

  private settle(entry: (typeof this.entries)[number], handled: boolean): void {
    this.running -= 1;
    if (handled) {
      entry.done = true;
      this.onProgress();
      this.pump();
    }
    for (const wake of this.waiters.splice(0)) wake();
  }
}
