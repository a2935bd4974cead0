import { documentId, READ_MODELS, VALIDITY } from '../../contracts/read-models';
import { categoryOf } from '../../contracts/streams';
import { pathOfKey, type IndexSpec, type ReadModelChange } from '../../contracts/read-model-changes';
import type { FieldAddedData, RecordErasedData } from '../../contracts/events/records';
import type { Projection } from '../projection';
import { erasedValues, fieldValueIndex, recordsProjection } from './records';

/** The version of a record document made by the event at `revision` of its stream. */
export function versionId(recordDocumentId: string, revision: bigint): string {
  return `${recordDocumentId}@${revision}`;
}

/**
 * An index of the records read model as the versions need it: the same keys, then the document id (the
 * order's tie-breaker, as in every list index) and the positions a version is valid between. A list as of a
 * moment seeks and orders on the same keys as today's list, and meets every version of each record there
 * (ten for a record written ten times), of which one at most was valid then: the index tells which, so only
 * those are read from the table, and counting them (`meta.total`) reads no document at all. Named apart from
 * the records' index of the same keys (a store keeps an index's first definition under its name); never
 * unique (the records' list indexes are not, and with the id in it every entry would be).
 */
export function validityIndex(index: IndexSpec): IndexSpec {
  return {
    name: `${index.name}__valid`,
    paths: [
      ...index.paths,
      ...(index.paths.includes('id') ? [] : ['id']),
      VALIDITY.fromPosition,
      VALIDITY.toPosition,
    ],
  };
}

/**
 * An interval index of a field's values (`IntervalKeys`): the keys a list seeks on, the version's validity
 * as an interval of positions, then the field. Counting a list as of a moment (`meta.total`) visits only the
 * versions valid then, where the field's index above visits every version of each record that matches.
 */
export function validityIntervalIndex(index: IndexSpec): IndexSpec {
  const paths = index.paths.map(pathOfKey);
  return {
    name: `${index.name}__during`,
    paths: paths.slice(0, -1),
    interval: { from: VALIDITY.fromPosition, to: VALIDITY.toPosition, then: paths.slice(-1) },
  };
}

/**
 * Every version of every record (the temporal read model): the records document as it was after each of its
 * events, with the positions and times it was valid between, so a list can be read as of any moment with
 * today's filters, orders and indexes. It keeps its own current document of each record (the records
 * projection's changes, in `record_heads`), copies it after each event as the new version, and closes the
 * version before. Pure, like every projection.
 */
export const recordVersionsProjection: Projection = {
  name: 'record-versions',
  categories: recordsProjection.categories,
  collections: {
    [READ_MODELS.recordHeads]: [],
    [READ_MODELS.recordVersions]: [
      ...(recordsProjection.collections[READ_MODELS.records] ?? []).map(validityIndex),
      { name: 'tenant_record_from', paths: ['tenant', 'recordId', VALIDITY.fromPosition] },
    ],
  },
  project(event, collection): readonly ReadModelChange[] {
    const versions = collection(READ_MODELS.recordVersions);
    if (event.type === 'FieldAdded') {
      const index = fieldValueIndex((event.data as FieldAddedData).field);
      return index
        ? [validityIndex(index), validityIntervalIndex(index)].map((versionIndex) => ({
            op: 'index',
            collection: versions,
            index: versionIndex,
            position: event.position,
          }))
        : [];
    }
    // The module's other events change no record.
    if (categoryOf(event.streamId) !== 'record') return [];
    const heads = collection(READ_MODELS.recordHeads);
    // Every event of a record's stream makes a version, those that change nothing of its document too
    // (a file attached): so the version before is always the one of the revision before, to be closed.
    const headChanges = recordsProjection.project(event, (base) =>
      base === READ_MODELS.records ? heads : collection(base),
    );
    const headId = documentId(event.metadata.tenant, String((event.data as { recordId: number }).recordId));
    const at = event.metadata.occurredAt;
    const closePrevious: ReadModelChange[] =
      event.revision > 0n
        ? [
            {
              op: 'patch',
              collection: versions,
              id: versionId(headId, event.revision - 1n),
              set: { [VALIDITY.toPosition]: Number(event.position), [VALIDITY.toTime]: at },
              position: event.position,
            },
          ]
        : [];
    // An erasure reaches back: every version of the record reads as erased (the new one is copied erased).
    const scrubbed: ReadModelChange[] =
      event.type === 'RecordErased'
        ? [
            {
              op: 'patchWhere',
              collection: versions,
              where: { tenant: event.metadata.tenant, recordId: (event.data as RecordErasedData).recordId },
              set: erasedValues((event.data as RecordErasedData).fields),
              position: event.position,
            },
          ]
        : [];
    return [
      ...headChanges,
      ...closePrevious,
      ...scrubbed,
      {
        op: 'copy',
        collection: versions,
        id: versionId(headId, event.revision),
        from: { collection: heads, id: headId },
        set: { [VALIDITY.fromPosition]: Number(event.position), [VALIDITY.fromTime]: at },
        position: event.position,
      },
    ];
  },
};
