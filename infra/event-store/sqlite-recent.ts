import type { RecordedEvent } from '../../contracts/events/envelope';

/**
 * The events this process appended most recently, in a ring indexed by position. Live subscribers read
 * them from here instead of each querying SQLite and parsing the same JSON again; anything the ring does
 * not cover (older events, appends by another process) is read from the database.
 */
export class RecentEvents {
  private readonly ring: Array<{ event: RecordedEvent; category: string } | undefined>;
  private first = 0;
  private last = 0;

  constructor(private readonly capacity = 8192) {
    this.ring = new Array(capacity);
  }

  /** Adds consecutive events; a gap (another process appended in between) restarts the ring. */
  push(events: readonly RecordedEvent[], category: string): void {
    if (events.length === 0) return;
    const start = Number(events[0]!.position);
    if (this.last === 0 || start !== this.last + 1) this.first = start;
    for (const event of events) this.ring[Number(event.position) % this.capacity] = { event, category };
    this.last = start + events.length - 1;
    if (this.last - this.first + 1 > this.capacity) this.first = this.last - this.capacity + 1;
  }

  /** True when every position in (after, upTo] is in the ring. */
  covers(after: number, upTo: number): boolean {
    return this.last > 0 && after >= this.first - 1 && upTo <= this.last;
  }

  /** Events in (after, upTo], at most `limit`, optionally only of some categories. Call only when covered. */
  read(after: number, upTo: number, limit: number, categories?: ReadonlySet<string>): RecordedEvent[] {
    const events: RecordedEvent[] = [];
    for (let position = after + 1; position <= upTo && events.length < limit; position++) {
      const entry = this.ring[position % this.capacity]!;
      if (!categories || categories.has(entry.category)) events.push(entry.event);
    }
    return events;
  }
}
