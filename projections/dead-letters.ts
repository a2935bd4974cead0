import { versionedCollection } from '../contracts/read-models';
import type { RecordedEvent } from '../contracts/events/envelope';
import type { Document, ReadModelChange } from '../contracts/read-model-changes';
import type { StoreQuery } from '../languages/filter/store-query';
import type { EventStore } from '../infra/event-store/port';
import type { ReadStore } from '../infra/read-store/port';
import { projectEvent, type Projection } from './projection';

/**
 * Events a projection could not apply: its `project` threw, or the read store refused the changes while it
 * accepted other writes. The projection records the event here and moves past it, so that one event (one
 * tenant's request) never stops a read model for everyone. An operator lists them and retries one.
 */
export const DEAD_LETTERS_COLLECTION = 'dead_letters';

/** The longest error message kept: a message may quote the payload. */
const MAX_ERROR_LENGTH = 2000;

export interface DeadLetter {
  readonly id: string;
  readonly projection: string;
  readonly version: number;
  /** The event's global position, as a decimal string (positions exceed a double). */
  readonly position: string;
  readonly eventId: string;
  readonly type: string;
  readonly stream: string;
  /** The system whose stream holds the event. */
  readonly tenant: string;
  readonly error: string;
  /** When the projection gave up on the event (ISO 8601). */
  readonly at: string;
}

export function deadLetterId(projection: string, version: number, position: bigint): string {
  return `${projection}:${version}:${position}`;
}

/** `<category>-<tenant>.<id>` (contracts/streams.ts): the tenant is between the first `-` and the next `.`. */
function tenantOfStream(streamId: string): string {
  const dash = streamId.indexOf('-');
  const dot = streamId.indexOf('.', dash + 1);
  return dash < 0 || dot < 0 ? '' : streamId.slice(dash + 1, dot);
}

export function errorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > MAX_ERROR_LENGTH ? `${message.slice(0, MAX_ERROR_LENGTH)}…` : message;
}

/** The change that records `event` as a dead letter of `projection` (written at the event's position). */
export function deadLetterChange(
  projection: string,
  version: number,
  event: RecordedEvent,
  error: unknown,
  at: Date,
): ReadModelChange {
  const doc: DeadLetter = {
    id: deadLetterId(projection, version, event.position),
    projection,
    version,
    position: event.position.toString(),
    eventId: event.id,
    type: event.type,
    stream: event.streamId,
    tenant: tenantOfStream(event.streamId),
    error: errorMessage(error),
    at: at.toISOString(),
  };
  return { op: 'upsert', collection: DEAD_LETTERS_COLLECTION, doc: { ...doc }, position: event.position };
}

function asDeadLetter(doc: Document): DeadLetter {
  return doc as unknown as DeadLetter;
}

export type RetryOutcome =
  | { readonly kind: 'applied'; readonly deadLetter: DeadLetter }
  | { readonly kind: 'failed'; readonly deadLetter: DeadLetter; readonly error: string }
  | { readonly kind: 'not-found' };

/** Listing and retrying dead letters: the operator's side. */
export class DeadLetters {
  constructor(
    private readonly deps: {
      readonly events: EventStore;
      readonly readStore: ReadStore;
      readonly projections: readonly Projection[];
    },
  ) {}

  async list(query: StoreQuery): Promise<{ items: DeadLetter[]; total: number }> {
    const result = await this.deps.readStore.find(DEAD_LETTERS_COLLECTION, query);
    return { items: result.items.map(asDeadLetter), total: result.total ?? result.items.length };
  }

  /** Dead letters per projection (for /metrics). */
  async countsByProjection(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const projection of this.deps.projections) {
      const count = await this.deps.readStore.count(DEAD_LETTERS_COLLECTION, {
        filter: { kind: 'compare', path: 'projection', op: 'eq', value: projection.name },
      });
      counts.set(projection.name, count);
    }
    return counts;
  }

  /**
   * Projects the event again, as the version that gave up on it, and applies the changes at the event's
   * position (so they never overwrite what later events wrote); on success the dead letter goes, in the same
   * write. A failure leaves the dead letter as it was and says why.
   */
  async retry(id: string): Promise<RetryOutcome> {
    const stored = await this.deps.readStore.get(DEAD_LETTERS_COLLECTION, id);
    if (!stored) return { kind: 'not-found' };
    const deadLetter = asDeadLetter(stored);
    const projection = this.deps.projections.find((candidate) => candidate.name === deadLetter.projection);
    const position = BigInt(deadLetter.position);
    const event = await this.eventAt(position);
    if (!projection || !event || event.id !== deadLetter.eventId)
      return { kind: 'failed', deadLetter, error: 'the projection or the event no longer exists' };
    try {
      const changes = projectEvent(projection, event, (base) =>
        versionedCollection(base, deadLetter.version),
      );
      await this.deps.readStore.apply([
        ...changes,
        { op: 'delete', collection: DEAD_LETTERS_COLLECTION, id, position: position + 1n },
      ]);
      return { kind: 'applied', deadLetter };
    } catch (error) {
      return { kind: 'failed', deadLetter, error: errorMessage(error) };
    }
  }

  private async eventAt(position: bigint): Promise<RecordedEvent | undefined> {
    if (position <= 0n) return undefined;
    for await (const event of this.deps.events.readAll({ after: position - 1n, maxCount: 1 }))
      return event.position === position ? event : undefined;
    return undefined;
  }
}
