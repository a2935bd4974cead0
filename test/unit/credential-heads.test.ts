import { credentialHeads, recordCredentialHeads } from '../../bin/credential-heads';
import { createSqliteReadStore } from '../../infra/read-store/sqlite';
import type { ReadStore } from '../../infra/read-store/port';
import { createSqliteEventStore } from '../../infra/event-store/sqlite';
import type { EventStore } from '../../infra/event-store/port';
import { MemoryEventStore } from '../support/memory-event-store';
import { newEvent } from '../contracts/event-store';

/** DESIGN §6: every process learns where the last credential event is, whichever process appended it. */
const PROJECTIONS = [
  { name: 'identity', categories: ['user'] },
  { name: 'oauth', categories: ['oauthClient', 'oauthGrant'] },
];

let readStore: ReadStore;
beforeEach(() => {
  readStore = createSqliteReadStore({ path: ':memory:' });
});
afterEach(() => readStore.close());

test('without an index seek (EventStoreDB), the processes share the heads through the read store', async () => {
  const events: EventStore = new MemoryEventStore();
  expect(events.categoryHead).toBeUndefined();
  // Two processes on one event store and one read store: one writes, the other asks.
  // The writer records the heads through the event store's after-commit hook, as the kernel wires it.
  const writer = events;
  writer.onAfterCommit(recordCredentialHeads(credentialHeads(events, readStore, PROJECTIONS)));
  const reader = credentialHeads(events, readStore, PROJECTIONS);
  expect(await reader.headOf('identity')).toBe(0n);

  const user = await writer.append('user-acme.1', [newEvent()]);
  await writer.append('record-acme.1', [newEvent()]);
  expect(await reader.headOf('identity')).toBe(user.position);
  expect(await reader.headOf('oauth')).toBe(0n);

  const [grant, later] = await writer.appendToStreams([
    { streamId: 'oauthGrant-acme.g1', events: [newEvent()] },
    { streamId: 'user-acme.2', events: [newEvent()] },
  ]);
  expect(await reader.headOf('oauth')).toBe(grant!.ok ? grant.result.position : -1n);
  expect(await reader.headOf('identity')).toBe(later!.ok ? later.result.position : -1n);

  // A process that reports late never moves a head back.
  await credentialHeads(events, readStore, PROJECTIONS).appended('user-acme.1', user.position);
  expect(await reader.headOf('identity')).toBe(later!.ok ? later.result.position : -1n);
});

test('with SQLite the event store answers by an index seek, and nothing is written to the read store', async () => {
  const events = createSqliteEventStore({ path: ':memory:' });
  try {
    const heads = credentialHeads(events, readStore, PROJECTIONS);
    const writer = events;
    writer.onAfterCommit(recordCredentialHeads(heads));
    const grant = await writer.append('oauthGrant-acme.g1', [newEvent()]);
    await writer.append('record-acme.1', [newEvent()]);
    expect(await heads.headOf('oauth')).toBe(grant.position);
    expect(await heads.headOf('identity')).toBe(0n);
    expect(await readStore.listCollections()).not.toContain('credential_heads');
  } finally {
    await events.close();
  }
});
