import { upcast } from '../contracts/events/registry';
import type { RecordedEvent } from '../contracts/events/envelope';
import type { IndexSpec, ReadModelChange } from '../contracts/read-model-changes';

/** An event after upcasting, as projections see it. */
export type ProjectedEvent = RecordedEvent;

/**
 * A read-model projection: a pure function from one event to read-model changes. `collection(base)` gives
 * the versioned collection name the projection writes in this run (so a rebuild writes new collections).
 */
export interface Projection {
  readonly name: string;
  /** Stream categories it needs; the subscription filters on them. */
  readonly categories: readonly string[];
  /** Base collection names it writes, with their indexes. */
  readonly collections: Readonly<Record<string, readonly IndexSpec[]>>;
  project(event: ProjectedEvent, collection: (base: string) => string): readonly ReadModelChange[];
}

/** The changes one stored event makes: upcast to its current schema, then projected. */
export function projectEvent(
  projection: Projection,
  event: RecordedEvent,
  collection: (base: string) => string,
): readonly ReadModelChange[] {
  const current = upcast(event);
  const projected =
    current.type === event.type && current.data === event.data
      ? event
      : { ...event, type: current.type, data: current.data };
  return projection.project(projected, collection);
}
