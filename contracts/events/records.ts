import { z } from 'zod';
import { fieldDefinitionSchema } from '../fields';
import type { EventDefinition } from './definition';
import type { RecordFileEvent } from './files';

/** A custom field value as stored: JSON scalars, or a list of them (multi-select). */
export const fieldValueSchema = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.null(),
  z.array(z.union([z.string(), z.number()])),
]);
export type FieldValue = z.infer<typeof fieldValueSchema>;
/** Object.prototype member names are refused: as plain-object keys they would not behave as data. */
const RESERVED_KEYS = new Set(Object.getOwnPropertyNames(Object.prototype));
export const fieldKeySchema = z
  .string()
  .regex(/^[A-Za-z0-9_]{1,64}$/, 'field keys are 1-64 letters, digits or _')
  .refine((key) => !RESERVED_KEYS.has(key), 'this field key is reserved');

const id = z.number().int().positive();

export const spaceCreated = z.object({ spaceId: id, name: z.string(), description: z.string().nullable() });
export const spaceUpdated = z.object({
  spaceId: id,
  name: z.string().optional(),
  description: z.string().nullable().optional(),
});
export const spaceDeleted = z.object({ spaceId: id });

export const MODULE_KINDS = ['built-in', 'custom'] as const;
export type ModuleKind = (typeof MODULE_KINDS)[number];

/** ModuleCreated as releases before built-in modules stored it (schema version 1): every module was custom. */
const moduleCreatedV1 = z.object({
  moduleId: id,
  spaceId: id,
  name: z.string(),
  description: z.string().nullable(),
});
/** Version 2: what the module is, and for a built-in module the template it was installed from. */
export const moduleCreated = moduleCreatedV1
  .extend({ kind: z.enum(MODULE_KINDS), template: z.string().min(1).nullable() })
  .refine((data) => (data.kind === 'built-in') === (data.template !== null), {
    message: 'a built-in module names its template; a custom module has none',
    path: ['template'],
  });
export const moduleUpdated = z.object({
  moduleId: id,
  name: z.string().optional(),
  description: z.string().nullable().optional(),
});
export const moduleDeleted = z.object({ moduleId: id, spaceId: id });

/** Field definitions are events of their module's stream: the module is the consistency boundary of its schema. */
export const fieldAdded = z.object({ moduleId: id, spaceId: id, field: fieldDefinitionSchema });
/** FieldAdded before built-in modules (schema version 1): its field had no `builtIn`, as no field was. */
const fieldAddedV1 = z.object({
  moduleId: id,
  spaceId: id,
  field: fieldDefinitionSchema.omit({ builtIn: true }),
});
export const fieldChanged = z.object({
  moduleId: id,
  fieldId: id,
  name: z.string().optional(),
  required: z.boolean().optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  personal: z.boolean().optional(),
});
export const fieldRemoved = z.object({ moduleId: id, fieldId: id });
/** Every field of the module, in its new order; positions become 1..n. */
export const fieldsOrdered = z.object({ moduleId: id, fieldIds: z.array(id).min(1) });

export const recordCreated = z.object({
  recordId: id,
  moduleId: id,
  spaceId: id,
  name: z.string(),
  fields: z.record(fieldKeySchema, fieldValueSchema),
});

/** One changed value: what it was and what it became. Field history reads exactly this. */
export const fieldChange = z.object({ field: z.string(), from: fieldValueSchema, to: fieldValueSchema });
export type FieldChange = z.infer<typeof fieldChange>;

export const recordUpdated = z.object({ recordId: id, changes: z.array(fieldChange).min(1) });
export const recordDeleted = z.object({ recordId: id, moduleId: id, spaceId: id });
export const recordRestored = z.object({ recordId: id, moduleId: id, spaceId: id });
/** A button field was pressed: its webhook answered (`ok` for 2xx), or could not be reached (`status` null). */
export const buttonPressed = z.object({
  recordId: id,
  fieldId: id,
  ok: z.boolean(),
  status: z.number().int().nullable(),
  durationMs: z.number().nonnegative(),
  error: z.string().optional(),
});
/**
 * A record's personal data was erased (its data key destroyed): who and when are the metadata, why is the
 * reason; `fields` are the keys of the fields whose values had been sealed (names, not data), which readers
 * now show as erased, as they do its name.
 */
export const recordErased = z.object({
  recordId: id,
  moduleId: id,
  spaceId: id,
  reason: z.string().min(1).max(1000),
  fields: z.array(fieldKeySchema),
});
export const recordLabelled = z.object({ recordId: id, labelId: id });
export const recordUnlabelled = z.object({ recordId: id, labelId: id });

/** Saved segments: a named record filter (and order) of one space, in the list language. */
export const segmentCreated = z.object({
  segmentId: id,
  spaceId: id,
  name: z.string(),
  filter: z.string().nullable(),
  order: z.string().nullable(),
});
export const segmentUpdated = z.object({
  segmentId: id,
  name: z.string().optional(),
  filter: z.string().nullable().optional(),
  order: z.string().nullable().optional(),
});
export const segmentDeleted = z.object({ segmentId: id });

/**
 * A record's id in another application (`remoteApplication`, `remoteId`): one stream per remote key, so a
 * key points at one record at a time; linking it again moves it.
 */
export const remoteLinked = z.object({
  remoteApplication: z.string(),
  remoteId: z.string(),
  recordId: id,
});
export type RemoteLinkEvent = { type: 'RemoteLinked'; data: z.infer<typeof remoteLinked> };

/** Labels: a system's tags for records, with a display colour (`#rrggbb`). */
export const labelCreated = z.object({ labelId: id, name: z.string(), color: z.string() });
export const labelUpdated = z.object({
  labelId: id,
  name: z.string().optional(),
  color: z.string().optional(),
});
export const labelDeleted = z.object({ labelId: id });

export type SpaceCreatedData = z.infer<typeof spaceCreated>;
export type SpaceUpdatedData = z.infer<typeof spaceUpdated>;
export type ModuleCreatedData = z.infer<typeof moduleCreated>;
export type ModuleUpdatedData = z.infer<typeof moduleUpdated>;
export type FieldAddedData = z.infer<typeof fieldAdded>;
export type FieldChangedData = z.infer<typeof fieldChanged>;
export type RecordCreatedData = z.infer<typeof recordCreated>;
export type RecordUpdatedData = z.infer<typeof recordUpdated>;
export type RecordErasedData = z.infer<typeof recordErased>;

export type SpaceEvent =
  | { type: 'SpaceCreated'; data: SpaceCreatedData }
  | { type: 'SpaceUpdated'; data: SpaceUpdatedData }
  | { type: 'SpaceDeleted'; data: z.infer<typeof spaceDeleted> };

export type ModuleEvent =
  | { type: 'ModuleCreated'; data: ModuleCreatedData }
  | { type: 'ModuleUpdated'; data: ModuleUpdatedData }
  | { type: 'ModuleDeleted'; data: z.infer<typeof moduleDeleted> }
  | { type: 'FieldAdded'; data: FieldAddedData }
  | { type: 'FieldChanged'; data: FieldChangedData }
  | { type: 'FieldRemoved'; data: z.infer<typeof fieldRemoved> }
  | { type: 'FieldsOrdered'; data: z.infer<typeof fieldsOrdered> };

export type RecordEvent =
  | { type: 'RecordCreated'; data: RecordCreatedData }
  | { type: 'RecordUpdated'; data: RecordUpdatedData }
  | { type: 'RecordDeleted'; data: z.infer<typeof recordDeleted> }
  | { type: 'RecordRestored'; data: z.infer<typeof recordRestored> }
  | { type: 'RecordErased'; data: RecordErasedData }
  | { type: 'ButtonPressed'; data: z.infer<typeof buttonPressed> }
  | { type: 'RecordLabelled'; data: z.infer<typeof recordLabelled> }
  | { type: 'RecordUnlabelled'; data: z.infer<typeof recordUnlabelled> }
  | RecordFileEvent;

export const RECORDS_EVENTS: readonly EventDefinition[] = [
  { type: 'SpaceCreated', version: 1, schema: spaceCreated },
  { type: 'SpaceUpdated', version: 1, schema: spaceUpdated },
  { type: 'SpaceDeleted', version: 1, schema: spaceDeleted },
  {
    type: 'ModuleCreated',
    version: 2,
    schema: moduleCreated,
    upcasters: { 1: (data) => ({ ...moduleCreatedV1.parse(data), kind: 'custom', template: null }) },
  },
  { type: 'ModuleUpdated', version: 1, schema: moduleUpdated },
  { type: 'ModuleDeleted', version: 1, schema: moduleDeleted },
  {
    type: 'FieldAdded',
    version: 2,
    schema: fieldAdded,
    upcasters: {
      1: (data) => {
        const stored = fieldAddedV1.parse(data);
        return { ...stored, field: { ...stored.field, builtIn: false } };
      },
    },
  },
  { type: 'FieldChanged', version: 1, schema: fieldChanged },
  { type: 'FieldRemoved', version: 1, schema: fieldRemoved },
  { type: 'FieldsOrdered', version: 1, schema: fieldsOrdered },
  { type: 'RecordCreated', version: 1, schema: recordCreated },
  { type: 'RecordUpdated', version: 1, schema: recordUpdated },
  { type: 'RecordDeleted', version: 1, schema: recordDeleted },
  { type: 'RecordRestored', version: 1, schema: recordRestored },
  { type: 'RecordErased', version: 1, schema: recordErased },
  { type: 'ButtonPressed', version: 1, schema: buttonPressed },
  { type: 'RecordLabelled', version: 1, schema: recordLabelled },
  { type: 'RecordUnlabelled', version: 1, schema: recordUnlabelled },
  { type: 'SegmentCreated', version: 1, schema: segmentCreated },
  { type: 'SegmentUpdated', version: 1, schema: segmentUpdated },
  { type: 'SegmentDeleted', version: 1, schema: segmentDeleted },
  { type: 'RemoteLinked', version: 1, schema: remoteLinked },
  { type: 'LabelCreated', version: 1, schema: labelCreated },
  { type: 'LabelUpdated', version: 1, schema: labelUpdated },
  { type: 'LabelDeleted', version: 1, schema: labelDeleted },
];
