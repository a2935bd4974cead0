interface Entry<Item> {
  readonly item: Item;
  readonly key: string;
  done: boolean;
}

/**
 * The messages of one partition in flight at once: up to `concurrency` handlers run; a message waits while an
 * earlier one of its key is unfinished (without taking a slot), so a key keeps its order and a slow key does
 * not hold the others. Offsets are committed only through the contiguous prefix of handled messages, so a
 * crash redelivers every unfinished one (at-least-once). Every step is O(1) per message.
 */
export class KeyedWindow<Item> {
  /** Every item not yet taken by `takeHandled`, in arrival order. */
  private readonly entries: Entry<Item>[] = [];
  private taken = 0;
  /** Per key, its unfinished items in order: the first runs or is ready, the others wait for it. */
  private readonly byKey = new Map<string, Entry<Item>[]>();
  /** Items whose key has nothing earlier unfinished, in the order they became ready. */
  private readonly ready: Entry<Item>[] = [];
  private readyHead = 0;
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
    return this.entries.length - this.taken;
  }

  add(item: Item, key: string): void {
    const entry: Entry<Item> = { item, key, done: false };
    this.entries.push(entry);
    const queue = this.byKey.get(key);
    if (queue) queue.push(entry);
    else {
      this.byKey.set(key, [entry]);
      this.ready.push(entry);
    }
    this.startReady();
  }

  /** Removes the contiguous prefix of handled items; the last of them (to commit after), if any. */
  takeHandled(): Item | undefined {
    let last: Item | undefined;
    while (this.taken < this.entries.length && this.entries[this.taken]!.done)
      last = this.entries[this.taken++]!.item;
    if (this.taken > 1024 && this.taken * 2 > this.entries.length) {
      this.entries.splice(0, this.taken);
      this.taken = 0;
    }
    return last;
  }

  /** Resolves when fewer than `limit` items are held, or when nothing runs any more. */
  whenBelow(limit: number): Promise<void> {
    if (this.size < limit || this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Resolves once no handler runs (after a stop: the ones running have finished or given up). */
  async idle(): Promise<void> {
    while (this.running > 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private startReady(): void {
    while (this.running < this.concurrency && this.readyHead < this.ready.length) {
      const entry = this.ready[this.readyHead++]!;
      if (this.readyHead > 1024 && this.readyHead * 2 > this.ready.length) {
        this.ready.splice(0, this.readyHead);
        this.readyHead = 0;
      }
      this.running += 1;
      this.handle(entry.item).then(
        (handled) => this.settle(entry, handled),
        () => this.settle(entry, false),
      );
    }
  }

  private settle(entry: Entry<Item>, handled: boolean): void {
    this.running -= 1;
    if (handled) {
      entry.done = true;
      const queue = this.byKey.get(entry.key)!;
      queue.shift();
      if (queue.length > 0) this.ready.push(queue[0]!);
      else this.byKey.delete(entry.key);
      this.onProgress();
      this.startReady();
    }
    for (const wake of this.waiters.splice(0)) wake();
  }
}
