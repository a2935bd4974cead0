import type {
  FieldValue,
  RecordCreatedData,
  RecordErasedData,
  RecordUpdatedData,
} from '../../contracts/events/records';
import { ERASED_VALUE } from '../../contracts/personal-data';
import { documentId, positionKey, READ_MODELS } from '../../contracts/read-models';
import { categoryOf } from '../../contracts/streams';
import { SEALED_SUBSCRIPTION_KEYS } from '../../contracts/events/subscriptions';
import type { ReadModelChange } from '../../contracts/read-model-changes';
import type { ProjectedEvent, Projection } from '../projection';

/** Who did it and when: the columns every history document carries. */
function actorColumns(event: ProjectedEvent): Record<string, unknown> {
  const { actor, occurredAt, tenant } = event.metadata;
  return {
    tenant,
    at: occurredAt,
    position: Number(event.position),
    userId: actor.userId,
    credentialId: actor.credentialId ?? null,
    clientId: actor.clientId ?? null,
  };
}

/** Categories whose event data may be shown to admins; identity events carry hashes and stay out. */
const CATEGORIES_WITH_DATA = new Set([
  'space',
  'module',
  'record',
  'label',
  'segment',
  'remote',
  'category',
  'team',
  'menu',
  'fieldGroup',
  'dataStructure',
  'columnDataTransform',
  'columnDataValidation',
  'columnDataValidationResult',
  'aiBalance',
  'aiJob',
  'subscription',
  // A hook request's erasure: which request, why, what its runs recorded (no data).
  'hookRequestErasure',
]);

/** Keys of event data the audit never shows (sealed secrets: sealed, but secrets all the same). */
const SEALED_KEYS: ReadonlySet<string> = new Set(SEALED_SUBSCRIPTION_KEYS);

function shownData(data: unknown): unknown {
  if (typeof data !== 'object' || data === null) return data;
  const entries = Object.entries(data);
  return entries.some(([key]) => SEALED_KEYS.has(key))
    ? Object.fromEntries(entries.filter(([key]) => !SEALED_KEYS.has(key)))
    : data;
}

/**
 * Bookkeeping of the AI features, not anyone's act: a call's reservation and spending (reported by
 * `/ai/usage`) and a job's outcomes (read at `/ai/job/{jobId}/item`). Top-ups and the jobs' starts are audited.
 */
const NOT_AUDITED = new Set([
  'AiTokensReserved',
  'AiReservationReleased',
  'AiTokensSpent',
  'AiJobItemsFinished',
  'AiJobLeased',
]);

/** Sign-in and authorization events: who did what is audited, their data (hashes, sealed seeds) is not. */
const CATEGORIES_WITHOUT_DATA = [
  'user',
  'email',
  'tenant',
  'oauthClient',
  'oauthGrant',
  'oauthConsent',
  'aiSettings',
];

/** Events of those categories whose data the audit shows all the same: an erasure's reason (no personal data). */
const EVENTS_WITH_DATA: ReadonlySet<string> = new Set(['UserErased']);

/**
 * The audit trail: one document per domain event (its id from the event's position), newest first by
 * `position`: which event, on which stream, by which user and credential, in which command. Read by
 * `/audit` and the record history route.
 */
export const auditProjection: Projection = {
  name: 'audit',
  categories: [...CATEGORIES_WITH_DATA, ...CATEGORIES_WITHOUT_DATA],
  collections: {
    [READ_MODELS.audit]: [
      { name: 'tenant_position', paths: ['tenant', 'position'] },
      { name: 'tenant_stream_position', paths: ['tenant', 'streamId', 'position'] },
      { name: 'tenant_user_position', paths: ['tenant', 'userId', 'position'] },
    ],
  },
  project(event, collection): ReadModelChange[] {
    if (NOT_AUDITED.has(event.type)) return [];
    const category = categoryOf(event.streamId);
    return [
      ...(event.type === 'RecordErased' ? erasedFromAudit(event, collection(READ_MODELS.audit)) : []),
      {
        op: 'upsert',
        collection: collection(READ_MODELS.audit),
        position: event.position,
        doc: {
          id: documentId(event.metadata.tenant, positionKey(event.position)),
          eventId: event.id,
          type: event.type,
          category,
          streamId: event.streamId,
          revision: Number(event.revision),
          commandId: event.metadata.commandId,
          correlationId: event.metadata.correlationId,
          ...actorColumns(event),
          ...((CATEGORIES_WITH_DATA.has(category) || EVENTS_WITH_DATA.has(event.type)) && {
            data: shownData(event.data),
          }),
        },
      },
    ];
  },
};

/**
 * What an erasure scrubs from the audit of its record's stream: the name and erased values of its creation,
 * a file's name, and the changes of its updates (the field history keeps which fields they changed).
 */
function erasedFromAudit(event: ProjectedEvent, audit: string): ReadModelChange[] {
  const { fields } = event.data as RecordErasedData;
  const scrub = (type: string, set: Record<string, unknown>): ReadModelChange => ({
    op: 'patchWhere',
    collection: audit,
    where: { tenant: event.metadata.tenant, streamId: event.streamId, type },
    set,
    position: event.position,
  });
  return [
    scrub('RecordCreated', {
      'data.name': ERASED_VALUE,
      ...Object.fromEntries(fields.map((key) => [`data.fields.${key}`, ERASED_VALUE])),
    }),
    scrub('RecordUpdated', { 'data.changes': ERASED_VALUE }),
    scrub('FileAttached', { 'data.name': ERASED_VALUE }),
  ];
}

/** What an erasure scrubs from its record's field history: what its name and erased values were and became. */
function erasedFromFieldHistory(event: ProjectedEvent, history: string): ReadModelChange[] {
  const { recordId, fields } = event.data as RecordErasedData;
  return ['name', ...fields.map((key) => `fields.${key}`)].map((field) => ({
    op: 'patchWhere',
    collection: history,
    where: { tenant: event.metadata.tenant, recordId, field },
    set: { from: ERASED_VALUE, to: ERASED_VALUE },
    position: event.position,
  }));
}

/**
 * Field history: one document per changed value of a record (a creation's values count as changes from
 * null): field, old value, new value, when, by whom and with which credential.
 */
export const fieldHistoryProjection: Projection = {
  name: 'field-history',
  categories: ['record'],
  collections: {
    [READ_MODELS.fieldHistory]: [
      { name: 'tenant_record_user_position', paths: ['tenant', 'recordId', 'userId', 'position'] },
    ],
  },
  project(event, collection): ReadModelChange[] {
    let recordId: number;
    let moduleId: number | null = null;
    let changes: Array<{ field: string; from: FieldValue; to: FieldValue }>;
    if (event.type === 'RecordCreated') {
      const data = event.data as RecordCreatedData;
      recordId = data.recordId;
      moduleId = data.moduleId;
      changes = [
        { field: 'name', from: null, to: data.name },
        ...Object.entries(data.fields).map(([key, value]) => ({
          field: `fields.${key}`,
          from: null,
          to: value,
        })),
      ];
    } else if (event.type === 'RecordUpdated') {
      const data = event.data as RecordUpdatedData;
      recordId = data.recordId;
      changes = data.changes;
    } else if (event.type === 'RecordErased')
      return erasedFromFieldHistory(event, collection(READ_MODELS.fieldHistory));
    else return [];
    return changes.map((change, index) => ({
      op: 'upsert',
      collection: collection(READ_MODELS.fieldHistory),
      position: event.position,
      doc: {
        id: documentId(event.metadata.tenant, `${positionKey(event.position)}.${index}`),
        recordId,
        ...(moduleId !== null && { moduleId }),
        field: change.field,
        from: change.from,
        to: change.to,
        ...actorColumns(event),
      },
    }));
  },
};
