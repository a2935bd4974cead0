import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteEventStore } from '../../infra/event-store/sqlite';
import { writeOlderReleaseModule, type OlderReleaseModule } from '../support/older-release';
import { json, startPlatform, type Entity, type Page, type TestPlatform } from '../support/platform';
import { rebuildProjections, waitForAllProjections } from '../support/rebuild';

jest.setTimeout(120_000);

/**
 * A data directory an older release wrote (ModuleCreated and FieldAdded at schema version 1), opened by this
 * release: the events are never rewritten, every reader upcasts them. The tests run in order on one
 * directory: live projections, then writes, then a rebuild from position 0.
 */
let dataDir: string;
let platform: TestPlatform | undefined;
let old: OlderReleaseModule;

async function call(method: string, path: string, body?: unknown): Promise<Response> {
  return platform!.call(method, path, body === undefined ? {} : { body });
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'records-older-release-'));
  const events = createSqliteEventStore({ path: join(dataDir, 'events.db') });
  old = await writeOlderReleaseModule(events, 'test');
  await events.close();
  platform = await startPlatform({ DATA_DIR: dataDir });
});

afterAll(async () => {
  await platform?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('the live projections show the old module as custom and its field as not built in', async () => {
  const module = await json<Entity>(await call('GET', `/module/${old.moduleId}`));
  expect(module).toMatchObject({ id: old.moduleId, name: 'Old leads', kind: 'custom', template: null });
  const custom = await json<Page>(await call('GET', `/module?filter=kind=custom;spaceId=${old.spaceId}`));
  expect(custom.items.map((item) => item.id)).toEqual([old.moduleId]);
  expect(await json(await call('GET', `/field/${old.fieldId}`))).toMatchObject({
    key: 'legacy_note',
    builtIn: false,
  });
  expect(await json(await call('GET', `/record/${old.recordId}`))).toMatchObject({
    fields: { legacy_note: 'from before' },
  });
});

test('the write side folds it: fields are added and removed, records created and changed in it', async () => {
  const score = await call('POST', '/field', { moduleId: old.moduleId, name: 'Score', type: 'number' });
  expect(score.status).toBe(201);
  expect(await json(score)).toMatchObject({ key: 'score', position: 2, builtIn: false });
  const created = await call('POST', '/record', {
    moduleId: old.moduleId,
    name: 'New lead',
    fields: { legacy_note: 'typed', score: 7 },
  });
  expect(created.status).toBe(201);
  // The old field is checked as a text field: a number does not fit it.
  const wrong = await call('PUT', `/record/${old.recordId}`, { fields: { legacy_note: 5 } });
  expect(wrong.status).toBe(400);
  expect((await call('PUT', `/record/${old.recordId}`, { fields: { score: 1 } })).status).toBe(200);
  const renamed = await call('PUT', `/module/${old.moduleId}`, { name: 'Leads' });
  expect(await json(renamed)).toMatchObject({ name: 'Leads', kind: 'custom', template: null });
  expect((await call('DELETE', `/field/${old.fieldId}`)).status).toBe(200);
});

test('a rebuild from position 0 upcasts them too, and gives the documents the live projections wrote', async () => {
  await waitForAllProjections(platform!);
  await platform!.stop();
  platform = undefined;
  const collections = await rebuildProjections(dataDir, ['modules', 'fields', 'records', 'audit']);
  for (const { collection, live, rebuilt } of collections) {
    expect({ collection, documents: rebuilt }).toEqual({ collection, documents: live });
  }
  const modules = collections.find((entry) => entry.collection === 'modules')!.rebuilt;
  expect(modules).toEqual([
    expect.objectContaining({ moduleId: old.moduleId, name: 'Leads', kind: 'custom', template: null }),
  ]);

  platform = await startPlatform({ DATA_DIR: dataDir });
  expect(await json(await call('GET', `/module/${old.moduleId}`))).toMatchObject({
    kind: 'custom',
    template: null,
  });
  const fields = await json<Page>(await call('GET', `/field?filter=moduleId=${old.moduleId}`));
  expect(fields.items.map((field) => [field.key, field.builtIn])).toEqual([['score', false]]);
});
