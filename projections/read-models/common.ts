import type { ProjectedEvent } from '../projection';

/** Audit columns every entity read model carries. */
export function createdColumns(event: ProjectedEvent): Record<string, unknown> {
  return {
    tenant: event.metadata.tenant,
    createdAt: event.metadata.occurredAt,
    updatedAt: event.metadata.occurredAt,
    createdBy: event.metadata.actor.userId,
    updatedBy: event.metadata.actor.userId,
    revision: Number(event.revision),
  };
}

export function updatedColumns(event: ProjectedEvent): Record<string, unknown> {
  return {
    updatedAt: event.metadata.occurredAt,
    updatedBy: event.metadata.actor.userId,
    revision: Number(event.revision),
  };
}

/** Drops keys whose value is undefined, so a patch sets only what the event changed. */
export function defined(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined));
}

/** Keys safe as a segment of a patch path (read-model-changes.ts): kept as they are. */
const SAFE_SEGMENT = /^[A-Za-z0-9_:-]+$/;
const SAFE_CHARACTER = /[A-Za-z0-9_:-]/;

/**
 * A data value (an id) as one segment of a patch path. Patch paths keep the strict key rule, so any other
 * value becomes `%` followed by its characters, each one outside [A-Za-z0-9_:-] as `%<UTF-16 unit in
 * hex>;` (one value, one segment: `%` and `;` are always encoded). Ids of the usual form stay as they are,
 * so documents written before read the same.
 */
export function pathSegmentOf(value: string): string {
  if (SAFE_SEGMENT.test(value) && value !== '__proto__') return value;
  let encoded = '%';
  for (let index = 0; index < value.length; index++) {
    const char = value[index]!;
    encoded += SAFE_CHARACTER.test(char) ? char : `%${value.charCodeAt(index).toString(16)};`;
  }
  return encoded;
}
