/**
 * From internal events to public events: the one place that knows both shapes. Pure, so a delivery, a replay
 * and a test all make the same public events of the same internal event.
 */
import type { z } from 'zod';
import type { EventMetadata } from './events/envelope';
import { fileAttached, fileDetached } from './events/files';
import {
  fieldAdded,
  fieldChanged,
  fieldRemoved,
  fieldsOrdered,
  labelCreated,
  labelDeleted,
  labelUpdated,
  moduleCreated,
  moduleDeleted,
  moduleUpdated,
  recordCreated,
  recordDeleted,
  recordLabelled,
  recordRestored,
  recordErased,
  recordUnlabelled,
  recordUpdated,
  spaceCreated,
  spaceDeleted,
  spaceUpdated,
} from './events/records';
import type { PublicEvent, PublicEventData, PublicEventType } from './public-events';

/** An internal event as a consumer holds it: its data already upcast to the current schema version. */
export interface InternalEvent {
  readonly id: string;
  readonly type: string;
  readonly data: unknown;
  readonly metadata: Pick<EventMetadata, 'tenant' | 'occurredAt'>;
}

interface Mapping<Internal extends z.ZodType, Type extends PublicEventType> {
  readonly internal: Internal;
  readonly type: Type;
  /** A method, so the table below can hold mappings of different internal types side by side. */
  data(data: z.output<Internal>): PublicEventData<Type>;
}

function mapping<Internal extends z.ZodType, Type extends PublicEventType>(
  internal: Internal,
  type: Type,
  data: (data: z.output<Internal>) => PublicEventData<Type>,
): Mapping<Internal, Type> {
  return { internal, type, data };
}

/**
 * Each mapped internal event type: the public type it becomes and how its data is made. Members are picked
 * one by one, so what an internal event adds (a storage key, a sort weight) never reaches a subscriber unasked.
 */
const MAPPINGS: Readonly<Record<string, Mapping<z.ZodType, PublicEventType>>> = {
  RecordCreated: mapping(
    recordCreated,
    'record.created',
    ({ recordId, moduleId, spaceId, name, fields }) => ({
      recordId,
      moduleId,
      spaceId,
      name,
      fields,
    }),
  ),
  RecordUpdated: mapping(recordUpdated, 'record.updated', ({ recordId, changes }) => ({
    recordId,
    changes: changes.map(({ field, from, to }) => ({ field, from, to })),
  })),
  RecordDeleted: mapping(recordDeleted, 'record.deleted', ({ recordId, moduleId, spaceId }) => ({
    recordId,
    moduleId,
    spaceId,
  })),
  RecordRestored: mapping(recordRestored, 'record.restored', ({ recordId, moduleId, spaceId }) => ({
    recordId,
    moduleId,
    spaceId,
  })),
  // The reason stays out: it is the operator's, and may say more than a subscriber should know.
  RecordErased: mapping(recordErased, 'record.erased', ({ recordId, moduleId, spaceId, fields }) => ({
    recordId,
    moduleId,
    spaceId,
    fields,
  })),
  RecordLabelled: mapping(recordLabelled, 'record.labelled', ({ recordId, labelId }) => ({
    recordId,
    labelId,
  })),
  RecordUnlabelled: mapping(recordUnlabelled, 'record.unlabelled', ({ recordId, labelId }) => ({
    recordId,
    labelId,
  })),
  FileAttached: mapping(
    fileAttached,
    'record.file_added',
    ({ recordId, fileId, fieldId, name, contentType, size, sha256 }) => ({
      recordId,
      fileId,
      fieldId,
      name,
      contentType,
      size,
      sha256,
    }),
  ),
  FileDetached: mapping(fileDetached, 'record.file_removed', ({ recordId, fileId, fieldId }) => ({
    recordId,
    fileId,
    fieldId,
  })),
  FieldAdded: mapping(fieldAdded, 'field.created', ({ moduleId, spaceId, field }) => ({
    moduleId,
    spaceId,
    fieldId: field.fieldId,
    key: field.key,
    name: field.name,
    type: field.type,
    required: field.required,
    config: field.config,
    position: field.position,
    builtIn: field.builtIn,
  })),
  FieldChanged: mapping(fieldChanged, 'field.updated', ({ moduleId, fieldId, name, required, config }) => ({
    change: 'definition',
    moduleId,
    fieldId,
    ...(name !== undefined && { name }),
    ...(required !== undefined && { required }),
    ...(config !== undefined && { config }),
  })),
  FieldsOrdered: mapping(fieldsOrdered, 'field.updated', ({ moduleId, fieldIds }) => ({
    change: 'order',
    moduleId,
    fieldIds,
  })),
  FieldRemoved: mapping(fieldRemoved, 'field.deleted', ({ moduleId, fieldId }) => ({ moduleId, fieldId })),
  ModuleCreated: mapping(
    moduleCreated,
    'module.created',
    ({ moduleId, spaceId, name, description, kind, template }) => ({
      moduleId,
      spaceId,
      name,
      description,
      kind,
      template,
    }),
  ),
  ModuleUpdated: mapping(moduleUpdated, 'module.updated', ({ moduleId, name, description }) => ({
    moduleId,
    ...(name !== undefined && { name }),
    ...(description !== undefined && { description }),
  })),
  ModuleDeleted: mapping(moduleDeleted, 'module.deleted', ({ moduleId, spaceId }) => ({ moduleId, spaceId })),
  SpaceCreated: mapping(spaceCreated, 'space.created', ({ spaceId, name, description }) => ({
    spaceId,
    name,
    description,
  })),
  SpaceUpdated: mapping(spaceUpdated, 'space.updated', ({ spaceId, name, description }) => ({
    spaceId,
    ...(name !== undefined && { name }),
    ...(description !== undefined && { description }),
  })),
  SpaceDeleted: mapping(spaceDeleted, 'space.deleted', ({ spaceId }) => ({ spaceId })),
  LabelCreated: mapping(labelCreated, 'label.created', ({ labelId, name, color }) => ({
    labelId,
    name,
    color,
  })),
  LabelUpdated: mapping(labelUpdated, 'label.updated', ({ labelId, name, color }) => ({
    labelId,
    ...(name !== undefined && { name }),
    ...(color !== undefined && { color }),
  })),
  LabelDeleted: mapping(labelDeleted, 'label.deleted', ({ labelId }) => ({ labelId })),
};

/**
 * The stream categories whose events become public events (records with their files, modules with their
 * fields, spaces, labels): what a replay reads of the log. test/e2e/subscription-deliveries.test.ts replays
 * every type of the catalogue from these.
 */
export const PUBLISHING_CATEGORIES: readonly string[] = ['record', 'module', 'space', 'label'];

/** The internal event types that become public events. */
export const MAPPED_INTERNAL_EVENT_TYPES: readonly string[] = Object.keys(MAPPINGS);

/**
 * The public events an internal event makes (none for the many internal events subscribers are not told
 * about). The public id is the internal event's id, so every delivery of it carries the same `webhook-id`.
 * Data that fails its internal schema throws: it is a bug upstream, not something to publish.
 */
export function toPublicEvents(event: InternalEvent, position: bigint): PublicEvent[] {
  if (!Object.hasOwn(MAPPINGS, event.type)) return [];
  const { internal, type, data } = MAPPINGS[event.type]!;
  return [
    {
      id: event.id,
      type,
      occurredAt: event.metadata.occurredAt,
      system: event.metadata.tenant,
      position: position.toString(),
      data: data(internal.parse(event.data)),
    } as PublicEvent,
  ];
}
