import { PlatformError } from '../../contracts/errors';
import type { PastMoment } from '../../contracts/query/as-of';
import type { Document } from '../../contracts/read-model-changes';
import { streamName } from '../../contracts/streams';
import type { EventStore } from '../../infra/event-store/port';
import { positionBefore } from '../../infra/event-store/position-at-time';
import { recordAfter } from '../../projections/record-fold';

/** What reading the past needs: the event log itself. */
export interface PastReadDeps {
  readonly events: Pick<EventStore, 'readStream' | 'readAll' | 'headPosition'>;
}

/**
 * The last position a moment includes: a position as given (capped at the log's head: a later one reads the
 * present), a time the last event recorded at or before it (0: before the first).
 */
export async function positionOfMoment(deps: PastReadDeps, moment: PastMoment): Promise<bigint> {
  const head = await deps.events.headPosition();
  if (moment.kind === 'position') return moment.position < head ? moment.position : head;
  return positionBefore(deps.events, new Date(moment.at.getTime() + 1));
}

/**
 * Record `recordId` as it was right after the event at `position`: its events up to there folded by the records
 * projection, so the answer has the shape of today's. 404 when it did not exist yet, 410 when it had been
 * deleted.
 */
export async function recordAt(
  deps: PastReadDeps,
  tenant: string,
  recordId: number,
  position: bigint,
): Promise<Document> {
  let doc: Document | null = null;
  for await (const event of deps.events.readStream(streamName('record', tenant, recordId))) {
    if (event.position > position) break;
    doc = recordAfter(doc, event);
  }
  if (doc === null)
    throw new PlatformError('not_found', `record ${recordId} did not exist at position ${position}`);
  if (doc.status === 'deleted')
    throw new PlatformError(
      'gone',
      `record ${recordId} had been deleted at position ${position} (at ${String(doc.deletedAt)})`,
    );
  return doc;
}
