import {
  jsonEvent,
  type EventData,
  type JSONType,
  type Position,
  type ResolvedEvent,
} from '@eventstore/db-client';
import type { EventMetadata, NewEvent, RecordedEvent } from '../../contracts/events/envelope';
import { categoryOf } from '../../contracts/streams';

/** The metadata key that carries our schema version next to our metadata; stripped on read. */
const SCHEMA_VERSION_KEY = '$schemaVersion';

/** A position of a gRPC-era event: its commit and prepare positions are equal (see notes §E.2 item 10). */
export function esdbPosition(position: bigint): Position {
  return { commit: position, prepare: position };
}

/**
 * ESDB reports "no position" as -1 in an unsigned 64-bit field, which arrives as 2^64 - 1; anything at or
 * above 2^63 is not a real position.
 */
export function isRealPosition(position: bigint | undefined): position is bigint {
  return position !== undefined && position >= 0n && position < 2n ** 63n;
}

export function toEventData(event: NewEvent): EventData {
  return jsonEvent({
    id: event.id,
    type: event.type,
    // The client JSON-serialises any value; its type only lists the object, array and string cases.
    data: (event.data ?? null) as JSONType,
    metadata: { ...event.metadata, [SCHEMA_VERSION_KEY]: event.schemaVersion },
  });
}

/** Our events only: not system streams (`$…`, `$$…` metadata, `$ce-…` links) nor system event types. */
export function isUserEvent(event: { readonly streamId: string; readonly type: string }): boolean {
  return !event.streamId.startsWith('$') && !event.type.startsWith('$');
}

export function categoryMatcher(
  categories: readonly string[] | undefined,
): (event: { readonly streamId: string }) => boolean {
  if (!categories) return () => true;
  const wanted = new Set(categories);
  return (event) => wanted.has(categoryOf(event.streamId));
}

/** Stream names of the categories, as `categoryOf` splits them: `<category>-…` or exactly `<category>`. */
export function categoriesRegex(categories: readonly string[]): string {
  const alternatives = categories.map((category) => category.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return `^(?:${alternatives.join('|')})(?:-|$)`;
}

type EsdbRecordedEvent = NonNullable<ResolvedEvent['event']>;

/** The event's commit position; streams reads report it only on servers from 22.6 on. */
export function positionOf(resolved: ResolvedEvent): bigint | undefined {
  return resolved.event?.position?.commit ?? resolved.commitPosition;
}

export function toRecordedEvent(event: EsdbRecordedEvent, position: bigint): RecordedEvent {
  const { schemaVersion, metadata } = splitMetadata(event.metadata);
  return {
    id: event.id,
    type: event.type,
    schemaVersion,
    data: event.data,
    metadata,
    streamId: event.streamId,
    revision: event.revision,
    position,
    recordedAt: event.created.toISOString(),
  };
}

function splitMetadata(stored: unknown): { schemaVersion: number; metadata: EventMetadata } {
  if (
    typeof stored !== 'object' ||
    stored === null ||
    Array.isArray(stored) ||
    stored instanceof Uint8Array
  ) {
    return { schemaVersion: 1, metadata: {} as EventMetadata };
  }
  const { [SCHEMA_VERSION_KEY]: schemaVersion, ...metadata } = stored as Record<string, unknown>;
  return {
    schemaVersion: typeof schemaVersion === 'number' ? schemaVersion : 1,
    metadata: metadata as EventMetadata,
  };
}
