import { z } from 'zod';
import { entityIdSchema } from './entity-id';

/**
 * The catalogue of public event types: what a subscription (`/subscription`) may ask to be told about. Public
 * events are a contract of their own, apart from the internal events they are made from (an internal event may
 * change shape; its public event keeps the published one). Names are `<noun>.<past tense>`, as Standard
 * Webhooks suggests.
 */
export const PUBLIC_EVENT_TYPES = {
  'record.created': 'a record was created',
  'record.updated': 'field values or the name of a record changed',
  'record.deleted': 'a record was deleted (soft: it can be restored)',
  'record.restored': 'a deleted record was restored',
  'record.erased':
    "a record's personal data was erased (its name and the values of the fields named): erase your copies too",
  'record.labelled': 'a label was attached to a record',
  'record.unlabelled': 'a label was taken off a record',
  'record.file_added': 'a file was attached to a record',
  'record.file_removed': 'a file was detached from a record',
  'field.created': 'a field was added to a module',
  'field.updated': 'a field changed (name, settings or order)',
  'field.deleted': 'a field was removed from a module',
  'module.created': 'a module was created',
  'module.updated': 'a module changed',
  'module.deleted': 'a module was deleted',
  'space.created': 'a space was created',
  'space.updated': 'a space changed',
  'space.deleted': 'a space was deleted',
  'label.created': 'a label was created',
  'label.updated': 'a label changed',
  'label.deleted': 'a label was deleted',
} as const;

export type PublicEventType = keyof typeof PUBLIC_EVENT_TYPES;

export const PUBLIC_EVENT_TYPE_NAMES = Object.keys(PUBLIC_EVENT_TYPES) as PublicEventType[];

/** The version of the public event schema a subscription receives (`{id, type, occurredAt, system, position, data}`). */
export const PUBLIC_EVENT_SCHEMA_VERSION = 1;

/**
 * The `data` of each public event type, as published in version 1. These schemas are written out here rather
 * than taken from the internal event schemas: an internal event may change shape (its upcasters lift old
 * versions to the current one before the mapping reads it), while what a subscriber receives changes only by
 * a new published version. Within a version, `data` may gain optional members, never lose or change one.
 */
const id = entityIdSchema;
const fieldValue = z
  .union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.union([z.string(), z.number()]))])
  .meta({ id: 'PublicFieldValue', description: 'A field value: text, number, boolean, null, or a list.' });

const recordPlace = { recordId: id, moduleId: id, spaceId: id };
const fileOfRecord = {
  recordId: id,
  fileId: id,
  fieldId: id
    .nullable()
    .meta({ description: 'The file field it fills; null for a file of the whole record.' }),
};
const description = z.string().nullable();

export const PUBLIC_EVENT_DATA_SCHEMAS = {
  'record.created': z.object({
    ...recordPlace,
    name: z.string(),
    fields: z.record(z.string(), fieldValue).meta({ description: 'Values by field key.' }),
  }),
  'record.updated': z.object({
    recordId: id,
    changes: z
      .array(
        z.object({
          field: z.string().meta({ description: '`name`, or `fields.<key>` for a field value.' }),
          from: fieldValue,
          to: fieldValue,
        }),
      )
      .min(1),
  }),
  'record.deleted': z.object(recordPlace),
  'record.restored': z.object(recordPlace),
  'record.erased': z.object({
    ...recordPlace,
    fields: z
      .array(z.string())
      .meta({ description: 'The keys of the fields whose values were erased (the name always is).' }),
  }),
  'record.labelled': z.object({ recordId: id, labelId: id }),
  'record.unlabelled': z.object({ recordId: id, labelId: id }),
  'record.file_added': z.object({
    ...fileOfRecord,
    name: z.string(),
    contentType: z.string(),
    size: z.number().int().nonnegative().meta({ description: 'In bytes.' }),
    sha256: z.string().meta({ description: 'The SHA-256 of the content, in hex.' }),
  }),
  'record.file_removed': z.object(fileOfRecord),
  'field.created': z.object({
    moduleId: id,
    spaceId: id,
    fieldId: id,
    key: z.string().meta({ description: 'The key record values are stored under.' }),
    name: z.string(),
    type: z.string().meta({ description: 'The field type (`text`, `number`, `select`…).' }),
    required: z.boolean(),
    config: z.record(z.string(), z.unknown()).meta({ description: "The type's settings." }),
    position: z.number().int(),
    builtIn: z.boolean(),
  }),
  // A plain union: a discriminator is spelt differently in OpenAPI and AsyncAPI schemas, and `change` tells the two apart.
  'field.updated': z.union([
    z
      .object({
        change: z.literal('definition'),
        moduleId: id,
        fieldId: id,
        name: z.string().optional(),
        required: z.boolean().optional(),
        config: z.record(z.string(), z.unknown()).optional(),
      })
      .meta({ id: 'FieldDefinitionChangedData', description: 'What changed of one field; others stay.' }),
    z
      .object({
        change: z.literal('order'),
        moduleId: id,
        fieldIds: z.array(id).min(1).meta({ description: 'Every field of the module; positions are 1..n.' }),
      })
      .meta({ id: 'FieldsOrderedData', description: 'The fields of a module were put in a new order.' }),
  ]),
  'field.deleted': z.object({ moduleId: id, fieldId: id }),
  'module.created': z.object({
    moduleId: id,
    spaceId: id,
    name: z.string(),
    description,
    kind: z.enum(['built-in', 'custom']),
    template: z
      .string()
      .nullable()
      .meta({ description: 'The template a built-in module was installed from.' }),
  }),
  'module.updated': z.object({
    moduleId: id,
    name: z.string().optional(),
    description: description.optional(),
  }),
  'module.deleted': z.object({ moduleId: id, spaceId: id }),
  'space.created': z.object({ spaceId: id, name: z.string(), description }),
  'space.updated': z.object({
    spaceId: id,
    name: z.string().optional(),
    description: description.optional(),
  }),
  'space.deleted': z.object({ spaceId: id }),
  'label.created': z.object({ labelId: id, name: z.string(), color: z.string() }),
  'label.updated': z.object({ labelId: id, name: z.string().optional(), color: z.string().optional() }),
  'label.deleted': z.object({ labelId: id }),
} as const satisfies Record<PublicEventType, z.ZodType>;

export type PublicEventData<Type extends PublicEventType> = z.infer<(typeof PUBLIC_EVENT_DATA_SCHEMAS)[Type]>;

/** `record.file_added` → `RecordFileAdded`: the stem of a type's component names in the API description. */
function componentStem(type: PublicEventType): string {
  return type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}

/** The component name of a public event type's schema, in the OpenAPI and the AsyncAPI documents alike. */
export function publicEventSchemaId(type: PublicEventType): string {
  return `${componentStem(type)}Event`;
}

/** The envelope every public event has, with the `data` of its type. */
function envelopeOf<Type extends PublicEventType>(type: Type) {
  const stem = componentStem(type);
  return z
    .object({
      id: z.string().meta({
        description:
          'Unique per event, the same on every delivery of it (also sent as `webhook-id`): drop duplicates by it.',
      }),
      type: z.literal(type),
      occurredAt: z.iso.datetime().meta({ description: 'When it happened (RFC 3339, UTC).' }),
      system: z.string().meta({ description: 'The system (tenant) it happened in.' }),
      position: z
        .string()
        .regex(/^(?:0|[1-9][0-9]*)$/)
        .meta({
          description:
            "The event's place in the platform's ordered event log, as a decimal string (64-bit): a later event has a greater position.",
        }),
      data: PUBLIC_EVENT_DATA_SCHEMAS[type].meta({ id: `${stem}Data` }),
    })
    .meta({ id: publicEventSchemaId(type), description: PUBLIC_EVENT_TYPES[type] });
}

/** Each public event type's whole schema, envelope and `data`. */
export const PUBLIC_EVENT_SCHEMAS = Object.fromEntries(
  PUBLIC_EVENT_TYPE_NAMES.map((type) => [type, envelopeOf(type)]),
) as { [Type in PublicEventType]: ReturnType<typeof envelopeOf<Type>> };

export type PublicEvent = {
  [Type in PublicEventType]: z.infer<(typeof PUBLIC_EVENT_SCHEMAS)[Type]>;
}[PublicEventType];
