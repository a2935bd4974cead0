import type { RecordedEvent } from '../../contracts/events/envelope';
import { categoryOf } from '../../contracts/streams';

/**
 * The most recent events this process appended or read for a live subscriber, in a ring indexed by
 * position. Live subscribers read them from here instead of each querying SQLite and parsing the same JSON
 * again; anything the ring does not cover (older events) is read from the database.
 */
export class RecentEvents {
  private readonly ring: Array<{ event: RecordedEvent; category: string } | undefined>;
  private first = 0;
  private last = 0;

  constructor(private readonly capacity = 8192) {
    this.ring = new Array(capacity);
  }

  /** The last position held (0 when empty). */
  get end(): number {
    return this.last;
  }

  /** Adds consecutive events; a gap (another process appended in between) restarts the ring. */
  push(events: readonly RecordedEvent[]): void {
    if (events.length === 0) return;
    const start = Number(events[0]!.position);
    if (this.last === 0 || start !== this.last + 1) this.first = start;
    for (const event of events)
      this.ring[Number(event.position) % this.capacity] = { event, category: categoryOf(event.streamId) };
    this.last = start + events.length - 1;
    if (this.last - this.first + 1 > this.capacity) this.first = this.last - this.capacity + 1;
  }

  /** How many positions past its end a live reader may fill the ring with in one read. */
  get refillLimit(): number {
    return this.capacity / 2;
  }

  /** True when every position in (after, upTo] is in the ring. */
  covers(after: number, upTo: number): boolean {
    return this.reaches(after) && upTo <= this.last;
  }

  /** True when a reader that has seen up to `after` can go on in the ring (it is not behind the ring's start). */
  reaches(after: number): boolean {
    return this.last > 0 && after >= this.first - 1;
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
