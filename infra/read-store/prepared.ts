import type { ReadModelChange } from '../../contracts/read-model-changes';
import { assertChange } from './validation';

/** An upsert whose document was checked and written as JSON text on another thread. */
export interface PreparedUpsert {
  readonly op: 'upsertJson';
  readonly collection: string;
  readonly id: string;
  readonly json: string;
  readonly position: bigint;
}

/** A change as `ReadStore.applyPrepared` takes it: upserts carry their document as JSON text. */
export type PreparedChange = Exclude<ReadModelChange, { op: 'upsert' }> | PreparedUpsert;

/**
 * Checks the changes as `apply` would and writes each upserted document as JSON: what a rebuild's decoder
 * thread sends to a store that keeps documents as JSON (SQLite). One string per document crosses to the
 * writing thread instead of an object graph cloned there and then serialised again by it.
 */
export function prepareChanges(changes: readonly ReadModelChange[]): PreparedChange[] {
  return changes.map((change) => {
    assertChange(change);
    if (change.op !== 'upsert') return change;
    return {
      op: 'upsertJson',
      collection: change.collection,
      id: change.doc.id,
      json: JSON.stringify(change.doc),
      position: change.position,
    };
  });
}
