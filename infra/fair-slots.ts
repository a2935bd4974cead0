/**
 * Slots for a shared resource of this process (model calls, scenario runs, expression processes): at most
 * `total` at once, at most `perTenant` for one system, and when slots free up the systems waiting take turns
 * (round robin), so one system's load never holds back another's.
 */
export class FairSlots {
  private running = 0;
  private readonly runningBy = new Map<string, number>();
  /** Waiters by system, in the order the systems first waited (the turn order). */
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(
    private readonly total: number,
    private readonly perTenant: number,
  ) {}

  /** Resolves when a slot is free for `tenant`; the slot is held until `release` is called. */
  async acquire(tenant: string): Promise<() => void> {
    if (!this.mayStart(tenant) || this.waiting.size > 0) {
      await new Promise<void>((resolve) => {
        const queue = this.waiting.get(tenant) ?? [];
        queue.push(resolve);
        this.waiting.set(tenant, queue);
        this.dispatch();
      });
    } else this.take(tenant);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      const count = (this.runningBy.get(tenant) ?? 1) - 1;
      if (count === 0) this.runningBy.delete(tenant);
      else this.runningBy.set(tenant, count);
      this.dispatch();
    };
  }

  /** Calls under way, for metrics and tests. */
  get inUse(): number {
    return this.running;
  }

  private mayStart(tenant: string): boolean {
    return this.running < this.total && (this.runningBy.get(tenant) ?? 0) < this.perTenant;
  }

  private take(tenant: string): void {
    this.running++;
    this.runningBy.set(tenant, (this.runningBy.get(tenant) ?? 0) + 1);
  }

  /** Gives free slots to waiting systems in turn: one waiter per system per round. */
  private dispatch(): void {
    let progressed = true;
    while (progressed && this.running < this.total) {
      progressed = false;
      for (const [tenant, queue] of this.waiting) {
        if (!this.mayStart(tenant)) continue;
        const next = queue.shift()!;
        // Its turn is used: it goes to the back of the order (or leaves it when nothing else waits).
        this.waiting.delete(tenant);
        if (queue.length > 0) this.waiting.set(tenant, queue);
        this.take(tenant);
        next();
        progressed = true;
        if (this.running >= this.total) break;
      }
    }
  }
}
