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
