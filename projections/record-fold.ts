import type { RecordedEvent } from '../contracts/events/envelope';
import type { Document, ReadModelChange } from '../contracts/read-model-changes';
import { applyPatch } from '../infra/read-store/patch';
import { projectEvent } from './projection';
import { recordsProjection } from './read-models/records';

/** The collection names as they are: the document is folded here, not written to a store. */
const asNamed = (base: string) => base;

/** A document after one more change (null: none, or deleted from its collection). */
function changed(doc: Document | null, change: ReadModelChange): Document | null {
  switch (change.op) {
    case 'upsert':
      return change.doc;
    case 'patch':
      return doc === null ? null : applyPatch(doc, change);
    case 'delete':
      return null;
    // A copy writes another document (a version of this one), a patchWhere others: the record stays as it is.
    case 'index':
    case 'copy':
    case 'patchWhere':
      return doc;
  }
}

/**
 * A record's read-model document one event later, exactly as the records projection writes it: a record at
 * any event is its events folded with this (what a subscription's filter sees of the record of an event).
 */
export function recordAfter(doc: Document | null, event: RecordedEvent): Document | null {
  return projectEvent(recordsProjection, event, asNamed).reduce(changed, doc);
}
