import { IdAllocator } from '../../command-api/kit/id-allocator';
import type { NewEvent } from '../../contracts/events/envelope';
import { childId, newId } from '../../contracts/ids';
import { streamName } from '../../contracts/streams';
import type { EventStore } from '../../infra/event-store/port';

/**
 * Data as the release before built-in modules wrote it: `ModuleCreated` and `FieldAdded` at schema version 1
 * (no `kind` or `template`, fields without `builtIn`), appended raw, past the registry of this release.
 */

export interface OlderReleaseModule {
  readonly spaceId: number;
  readonly moduleId: number;
  /** A text field `legacy_note`, and a record holding a value for it. */
  readonly fieldId: number;
  readonly recordId: number;
}

function storedEvent(tenant: string, type: string, schemaVersion: number, data: unknown): NewEvent {
  const commandId = newId();
  return {
    // As releases before event ids named their system derived them.
    id: childId(commandId, '#0'),
    type,
    schemaVersion,
    data,
    metadata: {
      tenant,
      actor: { userId: '1', credentialId: 'older-release-token' },
      correlationId: commandId,
      causationId: commandId,
      commandId,
      occurredAt: '2025-06-01T09:00:00.000Z',
    },
  };
}

/** A space with a module, one field and one record, with ids from the tenant's sequences as ever. */
export async function writeOlderReleaseModule(
  events: EventStore,
  tenant: string,
): Promise<OlderReleaseModule> {
  const ids = new IdAllocator(events);
  const spaceId = await ids.next(tenant, 'space');
  const moduleId = await ids.next(tenant, 'module');
  const fieldId = await ids.next(tenant, 'field');
  const recordId = await ids.next(tenant, 'record');
  await events.append(
    streamName('space', tenant, spaceId),
    [storedEvent(tenant, 'SpaceCreated', 1, { spaceId, name: 'Legacy', description: null })],
    { expectedRevision: 'no_stream' },
  );
  await events.append(
    streamName('module', tenant, moduleId),
    [storedEvent(tenant, 'ModuleCreated', 1, { moduleId, spaceId, name: 'Old leads', description: 'v1' })],
    { expectedRevision: 'no_stream' },
  );
  await events.append(
    streamName('module', tenant, moduleId),
    [
      storedEvent(tenant, 'FieldAdded', 1, {
        moduleId,
        spaceId,
        field: {
          fieldId,
          key: 'legacy_note',
          name: 'Legacy note',
          type: 'text',
          required: false,
          config: {},
          position: 1,
        },
      }),
    ],
    { expectedRevision: 0n },
  );
  await events.append(
    streamName('record', tenant, recordId),
    [
      storedEvent(tenant, 'RecordCreated', 1, {
        recordId,
        moduleId,
        spaceId,
        name: 'Old lead',
        fields: { legacy_note: 'from before' },
      }),
    ],
    { expectedRevision: 'no_stream' },
  );
  return { spaceId, moduleId, fieldId, recordId };
}
