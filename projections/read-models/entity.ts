import { documentId } from '../../contracts/read-models';
import type { IndexSpec, ReadModelChange } from '../../contracts/read-model-changes';
import type { ProjectedEvent, Projection } from '../projection';
import { createdColumns, defined, updatedColumns } from './common';

type EventData = Record<string, unknown>;

/** What an event changes in its entity's document: paths to set and paths to remove. */
export type PatchOf = (
  data: EventData,
  event: ProjectedEvent,
) => { set: Record<string, unknown>; unset?: string[] };

export interface EntityProjectionOptions {
  readonly name: string;
  readonly category: string;
  readonly collection: string;
  readonly indexes: readonly IndexSpec[];
  /** The key of the entity's integer id in every event's data (`spaceId`, `recordId`, …). */
  readonly idKey: string;
  readonly created: string;
  /** Fields every new document starts with (beside the created event's data). */
  readonly initial?: Readonly<Record<string, unknown>>;
  /** Fields computed from the created event's data (kept beside it, for queries). */
  readonly derived?: (data: EventData) => Record<string, unknown>;
  /** Keys of the created event's data kept out of the document (secrets' hashes). */
  readonly omit?: readonly string[];
  /** The event that removes the document (none: a soft delete is one of the `patches`). */
  readonly deleted?: string;
  /**
   * The other events of the entity's stream and what each changes. Every one of them also moves the
   * audit columns, so the document's revision (its ETag) stays the stream's.
   */
  readonly patches: Readonly<Record<string, PatchOf>>;
}

/** The default update: every data key but the id (and any other key named) is set. */
export function setAllBut(idKey: string, ...otherKeys: readonly string[]): PatchOf {
  const skipped = new Set([idKey, ...otherKeys]);
  return (data) => ({
    set: defined(Object.fromEntries(Object.entries(data).filter(([key]) => !skipped.has(key)))),
  });
}

/** An event that changes nothing but the audit columns. */
export const touch: PatchOf = () => ({ set: {} });

/** A read model with one document per entity: created → upsert, each other event → patch, deleted → delete. */
export function entityProjection(options: EntityProjectionOptions): Projection {
  const omitted = new Set(options.omit ?? []);
  const withoutOmitted = (data: EventData): EventData =>
    omitted.size === 0 ? data : Object.fromEntries(Object.entries(data).filter(([key]) => !omitted.has(key)));
  return {
    name: options.name,
    categories: [options.category],
    collections: { [options.collection]: options.indexes },
    project(event, collection): ReadModelChange[] {
      const target = collection(options.collection);
      const data = event.data as EventData;
      const id = documentId(event.metadata.tenant, String(data[options.idKey]));
      const position = event.position;
      if (event.type === options.created)
        return [
          {
            op: 'upsert',
            collection: target,
            position,
            doc: {
              id,
              ...options.initial,
              ...withoutOmitted(data),
              ...options.derived?.(data),
              ...createdColumns(event),
            },
          },
        ];
      if (event.type === options.deleted) return [{ op: 'delete', collection: target, position, id }];
      const patchOf = Object.hasOwn(options.patches, event.type) ? options.patches[event.type] : undefined;
      if (!patchOf) return [];
      const { set, unset } = patchOf(data, event);
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
    },
  };
}
