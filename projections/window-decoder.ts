import { versionedCollection } from '../contracts/read-models';
import type { EventStore } from '../infra/event-store/port';
import type { ReadModelChange } from '../contracts/read-model-changes';
import { coalesceChanges } from './coalesce';
import { projectEvent, type Projection } from './projection';

/** The positions (after, upTo] of the event log. */
export interface PositionWindow {
  readonly after: bigint;
  readonly upTo: bigint;
}

export interface DecodedWindow {
  /** How many of the projection's events the window held. */
  readonly events: number;
  /** The changes they make, coalesced, in order. */
  readonly changes: ReadModelChange[];
}

/**
 * Decodes windows of the log into read-model changes, for a catch-up whose decoding runs elsewhere (a worker
 * thread) while the caller writes. Windows start at arbitrary positions, so only a store whose positions are
 * dense and readable from anywhere can be split this way (the SQLite store, not EventStoreDB).
 */
export interface WindowDecoder {
  decode(window: PositionWindow): Promise<DecodedWindow>;
  close(): Promise<void>;
}

/** Reads the projection's events in the window and turns them into the changes they make. */
export async function decodeWindow(
  events: EventStore,
  projection: Projection,
  version: number,
  window: PositionWindow,
): Promise<DecodedWindow> {
  const collection = (base: string): string => versionedCollection(base, version);
  const changes: ReadModelChange[] = [];
  let count = 0;
  for await (const event of events.readAll({
    after: window.after,
    // Positions are dense: the window holds no more events than this, so a read of only the projection's
    // events stops at its end instead of reading a page past it.
    maxCount: Number(window.upTo - window.after),
    filter: { categories: projection.categories },
  })) {
    if (event.position > window.upTo) break;
    for (const change of projectEvent(projection, event, collection)) changes.push(change);
    count++;
  }
  return { events: count, changes: coalesceChanges(changes) };
}
