import { applyPatch } from '../infra/read-store/patch';
import type { ReadModelChange } from '../contracts/read-model-changes';

type Change = ReadModelChange;

function keyOf(change: Change): string {
  if (change.op === 'index') return `${change.collection}\u0000\u0000index ${change.index.name}`;
  return `${change.collection}\u0000${change.op === 'upsert' ? change.doc.id : change.id}`;
}

/**
 * The combined change when `next` follows `previous` on the same document, or null to keep both.
 * Merges only where the result equals applying both in order, whatever the stored document's position
 * (a document is a function of its own events, so a stored state between the two is reached by the same
 * chain): upsert + patch → upsert of the patched document; anything + upsert → the upsert; upsert or
 * patch + delete → the delete. A patch after a patch or after a delete, and increments, stay apart.
 */
function merge(previous: Change, next: Change): Change | null {
  if (previous.op === 'index' || next.op === 'index') return null;
  if (next.op === 'upsert') return next;
  if (next.op === 'delete') return previous.op === 'delete' ? null : next;
  if (previous.op !== 'upsert' || next.inc !== undefined) return null;
  return {
    op: 'upsert',
    collection: previous.collection,
    doc: applyPatch(previous.doc, next),
    position: next.position,
  };
}

/**
 * Folds a batch's changes per document so each document is written once where possible: a rebuild's
 * create-then-update pairs become single upserts. Changes keep the order of their last change.
 */
export function coalesceChanges(changes: readonly Change[]): Change[] {
  const result: Array<Change | undefined> = [];
  const lastIndex = new Map<string, number>();
  for (const change of changes) {
    const key = keyOf(change);
    const index = lastIndex.get(key);
    const merged = index === undefined ? null : merge(result[index]!, change);
    if (merged && index !== undefined) result[index] = undefined;
    lastIndex.set(key, result.length);
    result.push(merged ?? change);
  }
  return result.filter((change): change is Change => change !== undefined);
}
