import { moduleDecider } from '../../command-api/structure/domain/module';
import { CommandHandler, type CommandContext } from '../../command-api/kit/handler';
import type { RecordedEvent } from '../../contracts/events/envelope';
import { schemaVersionOf, upcast } from '../../contracts/events/registry';
import { newId } from '../../contracts/ids';
import { streamName } from '../../contracts/streams';
import { fieldsProjection } from '../../projections/read-models/fields';
import { auditProjection } from '../../projections/read-models/history';
import { modulesProjection } from '../../projections/read-models/spaces-and-modules';
import { decodeWindow } from '../../projections/window-decoder';
import { EventLog, projectionSpec, TEST_TENANT } from '../support/given-when-then';
import { MemoryEventStore } from '../support/memory-event-store';
import { writeOlderReleaseModule } from '../support/older-release';

const moduleCreatedV1 = { moduleId: 12, spaceId: 7, name: 'Leads', description: null };
const fieldV1 = {
  fieldId: 3,
  key: 'note',
  name: 'Note',
  type: 'text',
  required: false,
  config: {},
  position: 1,
} as const;

describe('the registry lifts stored version 1 events to the current version', () => {
  test('ModuleCreated is at version 2; a v1 module was custom, with no template', () => {
    expect(schemaVersionOf('ModuleCreated')).toBe(2);
    expect(upcast({ type: 'ModuleCreated', schemaVersion: 1, data: moduleCreatedV1 })).toEqual({
      type: 'ModuleCreated',
      data: { ...moduleCreatedV1, kind: 'custom', template: null },
    });
  });

  test('FieldAdded is at version 2; a v1 field was not built in', () => {
    expect(schemaVersionOf('FieldAdded')).toBe(2);
    expect(
      upcast({ type: 'FieldAdded', schemaVersion: 1, data: { moduleId: 12, spaceId: 7, field: fieldV1 } }),
    ).toEqual({
      type: 'FieldAdded',
      data: { moduleId: 12, spaceId: 7, field: { ...fieldV1, builtIn: false } },
    });
  });

  test('a current event passes untouched', () => {
    const data = { ...moduleCreatedV1, kind: 'built-in', template: 'deals' };
    expect(upcast({ type: 'ModuleCreated', schemaVersion: 2, data })).toEqual({
      type: 'ModuleCreated',
      data,
    });
  });
});

describe('old module events load on the write side', () => {
  const context = (): CommandContext => ({
    tenant: TEST_TENANT,
    actor: { userId: 'user-1', credentialId: 'token-1' },
    commandId: newId(),
    correlationId: 'correlation-1',
    causationId: 'request-1',
  });

  test('the module folds as custom; a field added now is v2, and an old field can be removed', async () => {
    const store = new MemoryEventStore();
    const old = await writeOlderReleaseModule(store, TEST_TENANT);
    const stream = streamName('module', TEST_TENANT, old.moduleId);
    const handler = new CommandHandler(store);

    const loaded = await handler.load(stream, moduleDecider);
    expect(loaded.state).toMatchObject({
      status: 'active',
      kind: 'custom',
      template: null,
      name: 'Old leads',
    });
    expect(loaded.state.fields).toEqual([
      expect.objectContaining({ fieldId: old.fieldId, key: 'legacy_note', builtIn: false }),
    ]);

    await handler.handle(
      stream,
      moduleDecider,
      { kind: 'AddField', fieldId: 900, name: 'Score', type: 'number', required: false, config: {} },
      context(),
    );
    await handler.handle(stream, moduleDecider, { kind: 'RemoveField', fieldId: old.fieldId }, context());
    const stored: RecordedEvent[] = [];
    for await (const event of store.readStream(stream)) stored.push(event);
    expect(stored.map((event) => [event.type, event.schemaVersion])).toEqual([
      ['ModuleCreated', 1],
      ['FieldAdded', 1],
      ['FieldAdded', 2],
      ['FieldRemoved', 1],
    ]);
    // Read afresh (no cached state): the stream of mixed versions folds as one history.
    const reloaded = await new CommandHandler(store).load(stream, moduleDecider);
    expect(reloaded.state.fields.map((field) => [field.key, field.builtIn])).toEqual([['score', false]]);
    expect(reloaded.state.retiredKeys).toEqual(['legacy_note']);
  });
});

describe('old module events project as the current version', () => {
  const log = new EventLog();
  const stream = streamName('module', TEST_TENANT, 12);
  const created = log.record(stream, { type: 'ModuleCreated', data: moduleCreatedV1 }, { schemaVersion: 1 });
  const added = log.record(
    stream,
    { type: 'FieldAdded', data: { moduleId: 12, spaceId: 7, field: fieldV1 } },
    { schemaVersion: 1 },
  );

  test('a v1 module is a custom module document', () => {
    projectionSpec(modulesProjection)
      .given([])
      .when(created)
      .thenDocuments('modules', [
        expect.objectContaining({ id: `${TEST_TENANT}.12`, name: 'Leads', kind: 'custom', template: null }),
      ]);
  });

  test('a v1 field is a field document that is not built in', () => {
    projectionSpec(fieldsProjection)
      .given([created])
      .when(added)
      .thenDocuments('fields', [
        expect.objectContaining({ id: `${TEST_TENANT}.3`, key: 'note', builtIn: false }),
      ]);
  });

  test('the audit trail shows the data as the current version', () => {
    projectionSpec(auditProjection)
      .given([])
      .when(created)
      .thenDocuments('audit', [
        expect.objectContaining({
          type: 'ModuleCreated',
          data: { ...moduleCreatedV1, kind: 'custom', template: null },
        }),
      ]);
  });

  test('a rebuild window decodes v1 events upcast', async () => {
    const store = new MemoryEventStore();
    const old = await writeOlderReleaseModule(store, TEST_TENANT);
    const window = { after: 0n, upTo: await store.headPosition() };
    const modules = await decodeWindow(store, modulesProjection, 2, window);
    expect(modules.changes).toEqual([
      expect.objectContaining({
        op: 'upsert',
        collection: 'modules_v2',
        // The field event's touch is coalesced into the upsert: revision 1.
        doc: expect.objectContaining({ moduleId: old.moduleId, kind: 'custom', template: null, revision: 1 }),
      }),
    ]);
    const fields = await decodeWindow(store, fieldsProjection, 2, window);
    expect(fields.changes).toEqual([
      expect.objectContaining({
        op: 'upsert',
        doc: expect.objectContaining({ fieldId: old.fieldId, builtIn: false }),
      }),
    ]);
  });
});
