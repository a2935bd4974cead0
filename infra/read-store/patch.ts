import type { Document, ReadModelChange } from '../../contracts/read-model-changes';

/** A patch's paths; a `patchWhere` applies its `set` the same way to each document it reaches. */
type PatchChange =
  | Extract<ReadModelChange, { op: 'patch' }>
  | Pick<Extract<ReadModelChange, { op: 'patch' }>, 'set' | 'unset' | 'inc'>;
type CopyChange = Extract<ReadModelChange, { op: 'copy' }>;
type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Own keys only: a document's keys are data, so `constructor` or `toString` must not find Object's. */
function ownValue(object: JsonObject, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/**
 * Sets an own property, so that no key can reach a prototype: `__proto__`, the one accessor plain objects
 * inherit, is defined; any other key is assigned, which on these plain objects also makes an own property,
 * at a fraction of `defineProperty`'s cost (a rebuild merges every record's create and update with it).
 */
function setOwn(object: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  else object[key] = value;
}

/**
 * The object that holds the last segment of `path`, creating missing intermediate objects as MongoDB does.
 * Intermediate objects on the path are copied first (copy-on-write), so the input document and anything it
 * shares with an event are never modified. `change` names the change in errors.
 */
function parentForWrite(doc: JsonObject, path: string, change: string): { parent: JsonObject; key: string } {
  const segments = path.split('.');
  const key = segments.pop() as string;
  let parent = doc;
  for (const segment of segments) {
    const next = ownValue(parent, segment);
    if (next === undefined) {
      const created: JsonObject = {};
      setOwn(parent, segment, created);
      parent = created;
    } else if (isObject(next)) {
      const copy = { ...next };
      setOwn(parent, segment, copy);
      parent = copy;
    } else {
      // MongoDB refuses to create a field inside a scalar, null or array; so do we.
      throw new TypeError(`${change}: cannot create ${path} inside the non-object value at ${segment}`);
    }
  }
  return { parent, key };
}

function parentForRead(doc: JsonObject, path: string): { parent: JsonObject; key: string } | undefined {
  const segments = path.split('.');
  const key = segments.pop() as string;
  let parent = doc;
  for (const segment of segments) {
    const next = ownValue(parent, segment);
    if (!isObject(next)) return undefined;
    parent = next;
  }
  return { parent, key };
}

/**
 * Applies set (dotted paths create intermediate objects), then unset, then inc (missing counts as 0), to a
 * copy: only the objects along the changed paths are copied; values are shared, as nothing modifies a value
 * in place.
 */
export function applyPatch(doc: Document, change: PatchChange): Document {
  const patched: JsonObject = { ...doc };
  const named = `patch of ${doc.id}`;
  setPaths(patched, change.set, named);
  for (const path of change.unset ?? []) {
    const target = parentForRead(patched, path);
    if (target) {
      const { parent, key } = parentForWrite(patched, path, named);
      if (Object.hasOwn(target.parent, key)) delete parent[key];
    }
  }
  for (const [path, amount] of Object.entries(change.inc ?? {})) {
    const { parent, key } = parentForWrite(patched, path, named);
    const current = Object.hasOwn(parent, key) ? parent[key] : 0;
    if (typeof current !== 'number') {
      throw new TypeError(`${named}: cannot increment the non-numeric value at ${path}`);
    }
    setOwn(parent, key, current + amount);
  }
  return { ...patched, id: doc.id };
}

function setPaths(doc: JsonObject, set: PatchChange['set'], change: string): void {
  for (const [path, value] of Object.entries(set ?? {})) {
    if (value === undefined) continue;
    const { parent, key } = parentForWrite(doc, path, change);
    setOwn(parent, key, value);
  }
}

/** What a copy change writes from its source: the source under the copy's id, with `set` applied (as a patch's). */
export function copiedDocument(source: Document, change: CopyChange): Document {
  const copy: JsonObject = { ...source };
  setPaths(copy, change.set, `copy to ${change.id}`);
  return { ...copy, id: change.id };
}

/** The value at a dotted path, or undefined when any segment is missing or not an object. */
export function valueAtPath(doc: Document, path: string): unknown {
  const target = parentForRead(doc, path);
  return target ? ownValue(target.parent, target.key) : undefined;
}
