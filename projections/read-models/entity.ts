import { documentId } from '../../contracts/read-models';
import type { IndexSpec, ReadModelChange } from '../../infra/read-store/port';
import type { Projection } from '../projection';
import { createdColumns, defined, updatedColumns } from './common';

type EventData = Record<string, unknown>;

export interface EntityProjectionOptions {
  readonly name: string;
  readonly category: string;
  readonly collection: string;
  readonly indexes: readonly IndexSpec[];
  /** The key of the entity's integer id in every event's data (`spaceId`, `recordId`, …). */
  readonly idKey: string;
  readonly events: { readonly created: string; readonly updated: string; readonly deleted: string };
  /** What an update event changes; by default every data key but the id is set. */
  readonly patchOf?: (data: EventData) => { set: Record<string, unknown>; unset?: string[] };
  /**
   * Other events of the entity's stream: they change only the audit columns, so the document's revision
   * (its ETag) stays the stream's.
   */
  readonly touchedBy?: readonly string[];
}

function setAllButId(idKey: string): (data: EventData) => { set: Record<string, unknown>; unset?: string[] } {
  return (data) => ({
    set: defined(Object.fromEntries(Object.entries(data).filter(([key]) => key !== idKey))),
  });
}

/** A read model with one document per entity: created → upsert, updated → patch, deleted → delete. */
export function entityProjection(options: EntityProjectionOptions): Projection {
  const patchOf = options.patchOf ?? setAllButId(options.idKey);
  return {
    name: options.name,
    categories: [options.category],
    collections: { [options.collection]: options.indexes },
    project(event, collection): ReadModelChange[] {
      const target = collection(options.collection);
      const data = event.data as EventData;
      const id = documentId(event.metadata.tenant, String(data[options.idKey]));
      const position = event.position;
      switch (event.type) {
        case options.events.created:
          return [
            { op: 'upsert', collection: target, position, doc: { id, ...data, ...createdColumns(event) } },
          ];
        case options.events.updated: {
          const { set, unset } = patchOf(data);
          return [
            {
              op: 'patch',
              collection: target,
              position,
              id,
              set: { ...set, ...updatedColumns(event) },
              ...(unset && unset.length > 0 && { unset }),
            },
          ];
        }
        case options.events.deleted:
          return [{ op: 'delete', collection: target, position, id }];
        default:
          return options.touchedBy?.includes(event.type)
            ? [{ op: 'patch', collection: target, position, id, set: updatedColumns(event) }]
            : [];
      }
    },
  };
}
