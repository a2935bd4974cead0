import { applyPatch } from '../infra/read-store/patch';
import type { ReadModelChange } from '../contracts/read-model-changes';

type Change = ReadModelChange;

function documentKey(collection: string, id: string): string {
  return `${collection}\u0000${id}`;
}

/** The document a change writes (an index change: its index). */
function keyOf(change: Change): string {
  if (change.op === 'index') return `${change.collection}\u0000\u0000index ${change.index.name}`;
  if (change.op === 'patchWhere') return `${change.collection}\u0000\u0000where`;
  return documentKey(change.collection, change.op === 'upsert' ? change.doc.id : change.id);
}

/**
 * The combined change when `next` follows `previous` on the same document, or null to keep both.
 * Merges only where the result equals applying both in order, whatever the stored document's position
 * (a document is a function of its own events, so a stored state between the two is reached by the same
 * chain): upsert + patch → upsert of the patched document; anything + upsert → the upsert; upsert or
 * patch + delete → the delete (a copy too: its outcome is replaced). A patch after a patch or after a delete,
 * increments, and a copy after anything (its outcome depends on its source) stay apart.
 */
function merge(previous: Change, next: Change): Change | null {
  if (previous.op === 'index' || next.op === 'index' || next.op === 'copy') return null;
  if (previous.op === 'patchWhere' || next.op === 'patchWhere') return null;
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
 * create-then-update pairs become single upserts. Changes keep the order of their last change. A copy reads
 * its source as the changes before it left it, so the source's chain ends there: a later change of the source
 * is not merged into an earlier one, which would move that earlier one after the copy. A `patchWhere` ends
 * the chain of every document of its collection the same way.
 */
export function coalesceChanges(changes: readonly Change[]): Change[] {
  const result: Array<Change | undefined> = [];
  const lastIndex = new Map<string, number>();
  for (const change of changes) {
    const key = keyOf(change);
    const index = lastIndex.get(key);
    const merged = index === undefined ? null : merge(result[index]!, change);
    if (merged && index !== undefined) result[index] = undefined;
    if (change.op === 'copy') lastIndex.delete(documentKey(change.from.collection, change.from.id));
    // It may reach any document of its collection: none of them is merged across it.
    if (change.op === 'patchWhere')
      for (const known of lastIndex.keys())
        if (known.startsWith(`${change.collection}\u0000`)) lastIndex.delete(known);
    lastIndex.set(key, result.length);
    result.push(merged ?? change);
  }
  return result.filter((change): change is Change => change !== undefined);
}
