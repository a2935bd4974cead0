import type { Document, ReadModelChange } from './port';

type PatchChange = Extract<ReadModelChange, { op: 'patch' }>;
type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object that holds the last segment of `path`, creating missing intermediate objects as MongoDB does. */
function parentForWrite(doc: JsonObject, path: string, id: string): { parent: JsonObject; key: string } {
  const segments = path.split('.');
  const key = segments.pop() as string;
  let parent = doc;
  for (const segment of segments) {
    const next = parent[segment];
    if (next === undefined) {
      const created: JsonObject = {};
      parent[segment] = created;
      parent = created;
    } else if (isObject(next)) {
      parent = next;
    } else {
      // MongoDB refuses to create a field inside a scalar, null or array; so do we.
      throw new TypeError(`patch of ${id}: cannot create ${path} inside the non-object value at ${segment}`);
    }
  }
  return { parent, key };
}

function parentForRead(doc: JsonObject, path: string): { parent: JsonObject; key: string } | undefined {
  const segments = path.split('.');
  const key = segments.pop() as string;
  let parent = doc;
  for (const segment of segments) {
    const next = parent[segment];
    if (!isObject(next)) return undefined;
    parent = next;
  }
  return { parent, key };
}

/** Applies set (dotted paths create intermediate objects), then unset, then inc (missing counts as 0). */
export function applyPatch(doc: Document, change: PatchChange): Document {
  const patched: JsonObject = structuredClone(doc);
  for (const [path, value] of Object.entries(change.set ?? {})) {
    if (value === undefined) continue;
    const { parent, key } = parentForWrite(patched, path, change.id);
    parent[key] = structuredClone(value);
  }
  for (const path of change.unset ?? []) {
    const target = parentForRead(patched, path);
    if (target) delete target.parent[target.key];
  }
  for (const [path, amount] of Object.entries(change.inc ?? {})) {
    const { parent, key } = parentForWrite(patched, path, change.id);
    const current = key in parent ? parent[key] : 0;
    if (typeof current !== 'number') {
      throw new TypeError(`patch of ${change.id}: cannot increment the non-numeric value at ${path}`);
    }
    parent[key] = current + amount;
  }
  return { ...patched, id: doc.id };
}

/** The value at a dotted path, or undefined when any segment is missing or not an object. */
export function valueAtPath(doc: Document, path: string): unknown {
  const target = parentForRead(doc, path);
  return target ? target.parent[target.key] : undefined;
}
