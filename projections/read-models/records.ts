import type {
  FieldValue,
  RecordCreatedData,
  RecordErasedData,
  RecordUpdatedData,
} from '../../contracts/events/records';
import { ERASED_VALUE } from '../../contracts/personal-data';
import { fieldValuePath, instantPath } from '../../languages/filter/record-fields';
import { parseDateTime } from '../../languages/filter/resolve';
import { READ_MODELS } from '../../contracts/read-models';
import { entityProjection } from './entity';
import type { FieldAddedData } from '../../contracts/events/records';
import type { FieldDefinition } from '../../contracts/fields';
import type { IndexSpec, ReadModelChange } from '../../contracts/read-model-changes';
import type { Projection } from '../projection';

/** The UTC instant of a value that is a date-time with an offset (what a datetime field holds), else none. */
function instantOf(value: FieldValue | undefined): string | undefined {
  return typeof value === 'string' && DATE_TIME_WITH_OFFSET.test(value) ? parseDateTime(value) : undefined;
}

/** A datetime field's values carry a time zone (`Z` or `±hh:mm`); a time without one is not stored. */
const DATE_TIME_WITH_OFFSET = /(?:[Zz]|[+-]\d{2}:?\d{2})$/;

/** `instants.<key>` for each date-time value: what filters and sorts on datetime fields read. */
function instantsOf(fields: Readonly<Record<string, FieldValue>>): Record<string, string> | undefined {
  const instants: Record<string, string> = {};
  for (const [key, value] of Object.entries(fields)) {
    const instant = instantOf(value);
    if (instant !== undefined) instants[key] = instant;
  }
  return Object.keys(instants).length > 0 ? instants : undefined;
}

const FIELD_CHANGE = /^fields\.([A-Za-z0-9_]+)$/;

/** What an erasure sets on a record's documents (its present one and every version): name and values erased. */
export function erasedValues(fieldKeys: readonly string[]): Record<string, string> {
  return Object.fromEntries([
    ['name', ERASED_VALUE],
    ...fieldKeys.map((key) => [fieldValuePath(key), ERASED_VALUE]),
  ]);
}

const recordEntities = entityProjection({
  name: 'records',
  category: 'record',
  collection: READ_MODELS.records,
  // `status` follows the tenant in every index: every list reads live or deleted records only, so each list
  // query can seek on it instead of checking every document.
  indexes: [
    { name: 'tenant_status_record', paths: ['tenant', 'status', 'recordId'] },
    { name: 'tenant_status_module_record', paths: ['tenant', 'status', 'moduleId', 'recordId'] },
    { name: 'tenant_status_space_record', paths: ['tenant', 'status', 'spaceId', 'recordId'] },
    { name: 'tenant_status_name', paths: ['tenant', 'status', 'name'] },
    { name: 'tenant_status_updated', paths: ['tenant', 'status', 'updatedAt'] },
    // `moduleId=<m>;name~Record 12%`: a name search within a module seeks to the module's names starting with
    // the pattern's literal prefix (case-insensitively) instead of checking every record of the module.
    {
      name: 'tenant_status_module_folded_name',
      paths: ['tenant', 'status', 'moduleId', { path: 'name', caseFolded: true }],
    },
  ],
  idKey: 'recordId',
  created: 'RecordCreated',
  initial: { status: 'live' },
  derived(data) {
    const instants = instantsOf((data as unknown as RecordCreatedData).fields);
    return instants ? { instants } : {};
  },
  patches: {
    /** A soft delete: the document stays, marked, for `GET /record/deleted` and a restore. */
    RecordDeleted: (_data, event) => ({
      set: {
        status: 'deleted',
        deletedAt: event.metadata.occurredAt,
        deletedBy: event.metadata.actor.userId,
      },
    }),
    RecordRestored: () => ({ set: { status: 'live' }, unset: ['deletedAt', 'deletedBy'] }),
    /** Each change names its field path (`name`, `fields.<key>`); a null value removes the field. */
    RecordUpdated(data) {
      const set: Record<string, unknown> = {};
      const unset: string[] = [];
      for (const change of (data as unknown as RecordUpdatedData).changes) {
        if (change.to === null) unset.push(change.field);
        else set[change.field] = change.to;
        const key = FIELD_CHANGE.exec(change.field)?.[1];
        if (key === undefined) continue;
        const instant = instantOf(change.to);
        if (instant !== undefined) set[instantPath(key)] = instant;
        else if (instantOf(change.from) !== undefined) unset.push(instantPath(key));
      }
      return { set, unset };
    },
    /** Its name and the personal fields that held values read as erased from now on. */
    RecordErased(data) {
      // Each key once: the decider names a field once, and a store refuses a patch naming a path twice.
      const keys = [...new Set((data as unknown as RecordErasedData).fields)];
      return {
        set: erasedValues(keys),
        unset: keys.map((key) => instantPath(key)),
      };
    },
    /** Labels as a set of paths (`labels.<id>`), so attaching one is a patch, not a read-modify-write. */
    RecordLabelled: (data) => ({ set: { [`labels.${String(data.labelId)}`]: true } }),
    RecordUnlabelled: (data) => ({ set: {}, unset: [`labels.${String(data.labelId)}`] }),
  },
});

/**
 * Field types whose values a list filters and sorts on through an index: scalar values of bounded size.
 * Lists (multi-select, files), long texts, checkboxes (two values) and buttons (none) get none.
 */
const INDEXED_FIELD_TYPES: ReadonlySet<FieldDefinition['type']> = new Set([
  'text',
  'number',
  'decimal',
  'date',
  'datetime',
  'select',
  'email',
  'url',
  'phone',
  'user',
  'relation',
]);

const INDEXABLE_KEY = /^[A-Za-z0-9_]+$/;

/**
 * The index that serves a filter or an order on a field's values within one module's live or deleted
 * records. One per key and collection (keys are shared by every module and system that uses them), added
 * when a field is; the read store stops adding them at its bound (`MAX_INDEXES_PER_COLLECTION`).
 */
export function fieldValueIndex(field: Pick<FieldDefinition, 'key' | 'type'>): IndexSpec | undefined {
  // A key that cannot name an index (the store's strict path rule) gets none: lists on it scan instead.
  if (!INDEXED_FIELD_TYPES.has(field.type) || !INDEXABLE_KEY.test(field.key) || field.key === '__proto__')
    return undefined;
  const path = field.type === 'datetime' ? instantPath(field.key) : fieldValuePath(field.key);
  return { name: path.replace('.', '__'), paths: ['tenant', 'status', 'moduleId', path] };
}

/** Records, one document per record; module events only add the index a new field's values need. */
export const recordsProjection: Projection = {
  ...recordEntities,
  categories: [...recordEntities.categories, 'module'],
  project(event, collection): readonly ReadModelChange[] {
    // Every other module event is none of the record events the entity projection knows: it changes nothing.
    if (event.type !== 'FieldAdded') return recordEntities.project(event, collection);
    const index = fieldValueIndex((event.data as FieldAddedData).field);
    return index
      ? [{ op: 'index', collection: collection(READ_MODELS.records), index, position: event.position }]
      : [];
  },
};
