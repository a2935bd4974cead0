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
