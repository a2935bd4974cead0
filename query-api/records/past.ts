import { AS_OF_PARAMETERS, type PastMoment } from '../../contracts/query/as-of';
import { PlatformError } from '../../contracts/errors';
import { READ_MODELS, VALIDITY } from '../../contracts/read-models';
import type { Document } from '../../contracts/read-model-changes';
import type { EventStore } from '../../infra/event-store/port';
import { positionBefore } from '../../infra/event-store/position-at-time';
import type { ReadModels } from '../../infra/read-store/read-models';
import { equals, type StoreFilter } from '../../languages/filter/store-query';
import { awaitPosition, type ReadConsistency } from '../consistency';
import type { EntityDescription } from '../routes/entities';
import { RECORDS } from './search';

/** What reading the past needs: the event log (where a time falls) and the temporal read model. */
export interface PastReadDeps {
  readonly events: Pick<EventStore, 'readAll' | 'headPosition'>;
  readonly readModels: ReadModels;
  readonly consistency: ReadConsistency;
  /**
   * How many records a past list counts at most (`PAST_LIST_COUNT_CAP`). A field's interval index (SQLite)
   * has a count visit only the versions valid then; without one it visits every version the filter
   * matches, of every moment (ten per record for records written ten times). Capped as search engines cap
   * theirs, a past list keeps to a read's budget either way, however long the history.
   */
  readonly pastListCountCap: number;
}

/** Records as they were: every version of each, read with the records' catalogue, views and visibility. */
export const RECORD_VERSIONS: EntityDescription = {
  ...RECORDS,
  collection: READ_MODELS.recordVersions,
  projection: 'record-versions',
  otherQueryParams: AS_OF_PARAMETERS,
};

/**
 * The last position a moment includes: a position as given (capped at the log's head: a later one reads the
 * present), a time the last event recorded at or before it (0: before the first). Resolves once the
 * temporal read model includes it.
 */
export async function positionOfMoment(deps: PastReadDeps, moment: PastMoment): Promise<bigint> {
  const head = await deps.events.headPosition();
  const position =
    moment.kind === 'position'
      ? moment.position < head
        ? moment.position
        : head
      : await positionBefore(deps.events, new Date(moment.at.getTime() + 1));
  await awaitPosition(deps.consistency, position, [RECORD_VERSIONS.projection]);
  return position;
}

/** The versions valid at `time`: begun at or before it, not ended by then (ended later, or not at all). */
function validAtTime(time: Date): StoreFilter {
  const at = time.toISOString();
  return {
    kind: 'and',
    children: [
      { kind: 'compare', path: VALIDITY.fromTime, op: 'lte', value: at },
      {
        kind: 'or',
        children: [
          { kind: 'compare', path: VALIDITY.toTime, op: 'gt', value: at },
          { kind: 'compare', path: VALIDITY.toTime, op: 'eq', value: null },
        ],
      },
    ],
  };
}

/**
 * The versions valid right after the event at `position`: an interval of positions, which an interval
 * index of the versions counts without visiting the others.
 */
export function validAt(position: bigint): StoreFilter {
  return { kind: 'during', from: VALIDITY.fromPosition, to: VALIDITY.toPosition, at: Number(position) };
}

/**
 * Record `recordId` as it was at `moment`: its version then, found by the record and the moment alone (a time
 * needs no search of the log). 404 when it did not exist yet, 410 when it had been deleted. The temporal read
 * model includes every write acknowledged before the request (`consistent`).
 */
export async function recordAt(
  deps: PastReadDeps,
  tenant: string,
  recordId: number,
  moment: PastMoment,
  consistent: () => Promise<void>,
): Promise<Document> {
  await consistent();
  const at = moment.kind === 'position' ? validAt(moment.position) : validAtTime(moment.at);
  const { items } = await deps.readModels.find(tenant, READ_MODELS.recordVersions, {
    filter: { kind: 'and', children: [equals('recordId', recordId), at] },
    limit: 1,
    withTotal: false,
  });
  const doc = items[0];
  const when =
    moment.kind === 'position' ? `at position ${moment.position}` : `at ${moment.at.toISOString()}`;
  if (doc === undefined) throw new PlatformError('not_found', `record ${recordId} did not exist ${when}`);
  if (doc.status === 'deleted')
    throw new PlatformError(
      'gone',
      `record ${recordId} had been deleted ${when} (at ${String(doc.deletedAt)})`,
    );
  return doc;
}
