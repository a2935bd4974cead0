import { versionedCollection } from '../contracts/read-models';
import type { EventStore } from '../infra/event-store/port';
import type { Checkpoint, ReadStore } from '../infra/read-store/port';
import type { PreparedChange } from '../infra/read-store/prepared';
import type { ReadModelChange } from '../contracts/read-model-changes';
import { coalesceChanges } from './coalesce';
import { projectEvent, type Projection } from './projection';

/** The positions (after, upTo] of the event log. */
export interface PositionWindow {
  readonly after: bigint;
  readonly upTo: bigint;
}

/** How many of the projection's events the window held, and the changes they make, coalesced, in order. */
export interface ProjectedWindow {
  readonly events: number;
  readonly changes: ReadModelChange[];
}

/** A window as a decoder returns it: its changes as projected, or prepared for the read store's `applyPrepared`. */
export type DecodedWindow =
  ProjectedWindow | { readonly events: number; readonly prepared: PreparedChange[] };

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
): Promise<ProjectedWindow> {
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

/** Writes a decoded window with the checkpoint, through `applyPrepared` when a decoder thread prepared it. */
export function applyWindow(
  readStore: ReadStore,
  window: DecodedWindow,
  checkpoint: Checkpoint,
): Promise<void> {
  if ('changes' in window) return readStore.apply(window.changes, checkpoint);
  if (!readStore.applyPrepared)
    return Promise.reject(new Error('the read store cannot apply changes prepared by a decoder thread'));
  return readStore.applyPrepared(window.prepared, checkpoint);
}
