import { LRUCache } from 'lru-cache';
import type { RecordedEvent } from '../../contracts/events/envelope';
import type { Document } from '../../contracts/read-model-changes';
import type { EventStore } from '../../infra/event-store/port';
import { recordAfter } from '../../projections/record-fold';

interface Known {
  readonly revision: bigint;
  readonly doc: Document | null;
}

/**
 * Records as they were right after a given event of theirs: the document the records projection writes,
 * folded from the record's events, so a subscription's filter sees the record of that moment (a replay of an
 * old event, too), not the read model's newer one. The last states are kept: a record's next event is one
 * more step from its last.
 */
export class RecordStates {
  private readonly known: LRUCache<string, Known>;

  constructor(
    private readonly events: Pick<EventStore, 'readStream'>,
    capacity = 10_000,
  ) {
    this.known = new LRUCache({ max: capacity });
  }

  /** The document of the event's record right after it (null: there is none then). */
  async after(event: RecordedEvent): Promise<Document | null> {
    const known = this.known.get(event.streamId);
    let doc: Document | null;
    if (known !== undefined && known.revision === event.revision) doc = known.doc;
    else if (known !== undefined && known.revision === event.revision - 1n)
      doc = recordAfter(known.doc, event);
    else doc = await this.fold(event);
    this.known.set(event.streamId, { revision: event.revision, doc });
    return doc;
  }

  private async fold(until: RecordedEvent): Promise<Document | null> {
    let doc: Document | null = null;
    for await (const event of this.events.readStream(until.streamId, {
      maxCount: Number(until.revision) + 1,
    }))
      doc = recordAfter(doc, event);
    return doc;
  }
}
