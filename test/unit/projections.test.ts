import type { RecordedEvent } from '../../contracts/events/envelope';
import { streamName } from '../../contracts/streams';
import { identityProjection } from '../../projections/read-models/identity';
import { recordsProjection } from '../../projections/read-models/records';
import { modulesProjection, spacesProjection } from '../../projections/read-models/spaces-and-modules';
import {
  EventLog,
  InMemoryReadModels,
  projectionSpec,
  TEST_ACTOR,
  TEST_TENANT,
} from '../support/given-when-then';

/** The audit columns of an event, as createdColumns/updatedColumns write them. */
function audit(event: RecordedEvent): { occurredAt: string; userId: string | null; revision: number } {
  return {
    occurredAt: event.metadata.occurredAt,
    userId: event.metadata.actor.userId,
    revision: Number(event.revision),
  };
}

function createdColumns(event: RecordedEvent): Record<string, unknown> {
  const { occurredAt, userId, revision } = audit(event);
  return {
    tenant: TEST_TENANT,
    createdAt: occurredAt,
    updatedAt: occurredAt,
    createdBy: userId,
    updatedBy: userId,
    revision,
  };
}

function updatedColumns(event: RecordedEvent): Record<string, unknown> {
  const { occurredAt, userId, revision } = audit(event);
  return { updatedAt: occurredAt, updatedBy: userId, revision };
}

describe('spaces projection', () => {
  const log = new EventLog();
  const stream = streamName('space', TEST_TENANT, 7);
  const created = log.record(stream, {
    type: 'SpaceCreated',
    data: { spaceId: 7, name: 'Sales', description: 'Pipeline' },
  });
  const renamed = log.record(
    stream,
    { type: 'SpaceUpdated', data: { spaceId: 7, name: 'Revenue' } },
    {
      actor: { userId: 'user-2' },
    },
  );
  const undescribed = log.record(stream, { type: 'SpaceUpdated', data: { spaceId: 7, description: null } });
  const deleted = log.record(stream, { type: 'SpaceDeleted', data: { spaceId: 7 } });
  const spaces = projectionSpec(spacesProjection);
  const createdDoc = {
    id: 'acme.7',
    spaceId: 7,
    name: 'Sales',
    description: 'Pipeline',
    ...createdColumns(created),
  };

  test('SpaceCreated upserts the space with its audit columns', () => {
    spaces
      .given([])
      .when(created)
      .then([{ op: 'upsert', collection: 'spaces', position: 1n, doc: createdDoc }]);
    spaces.given([]).when(created).thenDocuments('spaces', [createdDoc]);
  });

  test('SpaceUpdated patches only what changed, with who and when', () => {
    spaces
      .given([created])
      .when(renamed)
      .then([
        {
          op: 'patch',
          collection: 'spaces',
          position: 2n,
          id: 'acme.7',
          set: { name: 'Revenue', updatedAt: renamed.metadata.occurredAt, updatedBy: 'user-2', revision: 1 },
        },
      ]);
    spaces
      .given([created])
      .when(renamed)
      .thenDocuments('spaces', [{ ...createdDoc, name: 'Revenue', ...updatedColumns(renamed) }]);
  });

  test('SpaceUpdated with a null description clears it', () => {
    spaces
      .given([created, renamed])
      .when(undescribed)
      .then([
        {
          op: 'patch',
          collection: 'spaces',
          position: 3n,
          id: 'acme.7',
          set: { description: null, ...updatedColumns(undescribed) },
        },
      ]);
    spaces
      .given([created, renamed])
      .when(undescribed)
      .thenDocuments('spaces', [
        { ...createdDoc, name: 'Revenue', description: null, ...updatedColumns(undescribed) },
      ]);
  });

  test('SpaceDeleted deletes the space', () => {
    spaces
      .given([created, renamed])
      .when(deleted)
      .then([{ op: 'delete', collection: 'spaces', position: 4n, id: 'acme.7' }]);
    spaces.given([created, renamed]).when(deleted).thenDocuments('spaces', []);
  });

  test('replaying an event changes nothing', () => {
    spaces.given([created]).when(created).thenNothingChanges();
    spaces.given([created, renamed, undescribed]).when(renamed).thenNothingChanges();
  });

  test('writes the versioned collection it is given', () => {
    projectionSpec(spacesProjection, (base) => `${base}_v2`)
      .given([])
      .when(created)
      .then([{ op: 'upsert', collection: 'spaces_v2', position: 1n, doc: createdDoc }]);
  });

  test('ignores events of other types', () => {
    const other = new EventLog().record(streamName('module', TEST_TENANT, 1), {
      type: 'ModuleDeleted',
      data: { moduleId: 1, spaceId: 7 },
    });
    spaces.given([created]).when(other).then([]);
  });
});

describe('modules projection', () => {
  const log = new EventLog();
  const stream = streamName('module', TEST_TENANT, 12);
  const created = log.record(stream, {
    type: 'ModuleCreated',
    data: { moduleId: 12, spaceId: 7, name: 'Leads', description: null, kind: 'custom', template: null },
  });
  const updated = log.record(stream, {
    type: 'ModuleUpdated',
    data: { moduleId: 12, name: 'Prospects', description: 'Inbound' },
  });
  const deleted = log.record(stream, { type: 'ModuleDeleted', data: { moduleId: 12, spaceId: 7 } });
  const modules = projectionSpec(modulesProjection);
  const createdDoc = {
    id: 'acme.12',
    moduleId: 12,
    spaceId: 7,
    name: 'Leads',
    description: null,
    kind: 'custom',
    template: null,
    ...createdColumns(created),
  };

  test('ModuleCreated upserts the module with its space and audit columns', () => {
    modules
      .given([])
      .when(created)
      .then([{ op: 'upsert', collection: 'modules', position: 1n, doc: createdDoc }]);
    modules.given([]).when(created).thenDocuments('modules', [createdDoc]);
  });

  test('ModuleUpdated patches name and description', () => {
    modules
      .given([created])
      .when(updated)
      .then([
        {
          op: 'patch',
          collection: 'modules',
          position: 2n,
          id: 'acme.12',
          set: { name: 'Prospects', description: 'Inbound', ...updatedColumns(updated) },
        },
      ]);
    modules
      .given([created])
      .when(updated)
      .thenDocuments('modules', [
        { ...createdDoc, name: 'Prospects', description: 'Inbound', ...updatedColumns(updated) },
      ]);
  });

  test('ModuleDeleted deletes the module', () => {
    modules
      .given([created, updated])
      .when(deleted)
      .then([{ op: 'delete', collection: 'modules', position: 3n, id: 'acme.12' }]);
    modules.given([created, updated]).when(deleted).thenDocuments('modules', []);
  });

  test('replaying an event changes nothing', () => {
    modules.given([created, updated]).when(created).thenNothingChanges();
    modules.given([created, updated]).when(updated).thenNothingChanges();
  });

  test('an update after the delete changes nothing', () => {
    const late = log.record(stream, { type: 'ModuleUpdated', data: { moduleId: 12, name: 'Ghost' } });
    modules.given([created, deleted]).when(late).thenDocuments('modules', []);
  });
});

describe('records projection', () => {
  const log = new EventLog();
  const stream = streamName('record', TEST_TENANT, 31);
  const created = log.record(stream, {
    type: 'RecordCreated',
    data: {
      recordId: 31,
      moduleId: 12,
      spaceId: 7,
      name: 'ACME Corp',
      fields: { stage: 'lead', amount: 1200 },
    },
  });
  const updated = log.record(stream, {
    type: 'RecordUpdated',
    data: {
      recordId: 31,
      changes: [
        { field: 'name', from: 'ACME Corp', to: 'ACME Inc' },
        { field: 'fields.stage', from: 'lead', to: 'customer' },
        { field: 'fields.amount', from: 1200, to: null },
        { field: 'fields.tags', from: null, to: ['b2b', 'eu'] },
      ],
    },
  });
  const renamedAgain = log.record(stream, {
    type: 'RecordUpdated',
    data: { recordId: 31, changes: [{ field: 'name', from: 'ACME Inc', to: 'ACME Group' }] },
  });
  const deleted = log.record(stream, {
    type: 'RecordDeleted',
    data: { recordId: 31, moduleId: 12, spaceId: 7 },
  });
  const records = projectionSpec(recordsProjection);
  const createdDoc = {
    id: 'acme.31',
    status: 'live',
    recordId: 31,
    moduleId: 12,
    spaceId: 7,
    name: 'ACME Corp',
    fields: { stage: 'lead', amount: 1200 },
    ...createdColumns(created),
  };
  const updatedDoc = {
    ...createdDoc,
    name: 'ACME Inc',
    fields: { stage: 'customer', tags: ['b2b', 'eu'] },
    ...updatedColumns(updated),
  };

  test('RecordCreated upserts the record with its fields and audit columns', () => {
    records
      .given([])
      .when(created)
      .then([{ op: 'upsert', collection: 'records', position: 1n, doc: createdDoc }]);
    records.given([]).when(created).thenDocuments('records', [createdDoc]);
  });

  test('RecordUpdated sets changed values by dotted path and unsets removed fields', () => {
    records
      .given([created])
      .when(updated)
      .then([
        {
          op: 'patch',
          collection: 'records',
          position: 2n,
          id: 'acme.31',
          set: {
            ...updatedColumns(updated),
            name: 'ACME Inc',
            'fields.stage': 'customer',
            'fields.tags': ['b2b', 'eu'],
          },
          unset: ['fields.amount'],
        },
      ]);
    records.given([created]).when(updated).thenDocuments('records', [updatedDoc]);
  });

  test('RecordUpdated of the name only unsets nothing', () => {
    records
      .given([created, updated])
      .when(renamedAgain)
      .then([
        {
          op: 'patch',
          collection: 'records',
          position: 3n,
          id: 'acme.31',
          set: { ...updatedColumns(renamedAgain), name: 'ACME Group' },
        },
      ]);
  });

  test('RecordDeleted marks the record deleted (a soft delete); RecordRestored clears the mark', () => {
    records
      .given([created, updated])
      .when(deleted)
      .thenDocuments('records', [
        {
          ...updatedDoc,
          ...updatedColumns(deleted),
          status: 'deleted',
          deletedAt: deleted.metadata.occurredAt,
          deletedBy: deleted.metadata.actor.userId,
        },
      ]);
    const restored = log.record(stream, {
      type: 'RecordRestored',
      data: { recordId: 31, moduleId: 12, spaceId: 7 },
    });
    records
      .given([created, updated, deleted])
      .when(restored)
      .thenDocuments('records', [{ ...updatedDoc, ...updatedColumns(restored) }]);
  });

  test('replaying an older update does not undo a newer one', () => {
    records.given([created, updated, renamedAgain]).when(updated).thenNothingChanges();
    records
      .given([created, updated, renamedAgain])
      .when(updated)
      .thenDocuments('records', [{ ...updatedDoc, name: 'ACME Group', ...updatedColumns(renamedAgain) }]);
  });

  test('replaying the creation does not reset the record', () => {
    records.given([created, updated]).when(created).thenNothingChanges();
  });

  test('replaying the delete changes nothing', () => {
    records.given([created, updated, deleted]).when(deleted).thenNothingChanges();
  });

  test('documents of different tenants do not collide', () => {
    const globex = new EventLog().record(
      streamName('record', 'globex', 31),
      { type: 'RecordCreated', data: { recordId: 31, moduleId: 2, spaceId: 1, name: 'Globex', fields: {} } },
      { tenant: 'globex' },
    );
    const readModels = new InMemoryReadModels();
    readModels.apply(recordsProjection.project(created, (base) => base));
    readModels.apply(recordsProjection.project(globex, (base) => base));
    expect(readModels.documents('records').map((doc) => [doc.id, doc.tenant, doc.name])).toEqual([
      ['acme.31', 'acme', 'ACME Corp'],
      ['globex.31', 'globex', 'Globex'],
    ]);
  });
});

describe('identity projection', () => {
  const log = new EventLog();
  const stream = streamName('user', TEST_TENANT, 3);
  const tokenHash = 'a'.repeat(64);
  const registered = log.record(stream, {
    type: 'UserRegistered',
    data: {
      userId: 3,
      email: 'ana@example.com',
      name: 'Ana',
      role: 'admin',
      passwordHash: 'scrypt$1$2$3$salt$hash',
    },
  });
  const issued = log.record(stream, {
    type: 'ApiTokenIssued',
    data: {
      userId: 3,
      tokenId: 'tok-1',
      name: 'CI',
      tokenHash,
      prefix: 'rp_',
      last4: 'wxyz',
      permissions: { records: ['read'] },
      expiresAt: null,
      bootstrap: false,
    },
  });
  const revoked = log.record(stream, {
    type: 'ApiTokenRevoked',
    data: { userId: 3, tokenId: 'tok-1', tokenHash },
  });
  const identity = projectionSpec(identityProjection);
  const userDoc = {
    id: 'acme.3',
    userId: 3,
    email: 'ana@example.com',
    name: 'Ana',
    role: 'admin',
    active: true,
    ...createdColumns(registered),
  };
  const credentialDoc = {
    id: tokenHash,
    kind: 'api-token',
    userId: 3,
    tokenId: 'tok-1',
    name: 'CI',
    prefix: 'rp_',
    last4: 'wxyz',
    permissions: { records: ['read'] },
    expiresAt: null,
    bootstrap: false,
    ...createdColumns(issued),
  };

  test('UserRegistered upserts an active user without the password hash', () => {
    identity
      .given([])
      .when(registered)
      .then([{ op: 'upsert', collection: 'users', position: 1n, doc: userDoc }]);
    identity.given([]).when(registered).thenDocuments('users', [userDoc]);
  });

  test('ApiTokenIssued upserts a credential keyed by the token hash', () => {
    identity
      .given([registered])
      .when(issued)
      .then([{ op: 'upsert', collection: 'credentials', position: 2n, doc: credentialDoc }]);
    identity.given([registered]).when(issued).thenDocuments('credentials', [credentialDoc]);
  });

  test('ApiTokenRevoked deletes the credential and keeps the user', () => {
    identity
      .given([registered, issued])
      .when(revoked)
      .then([{ op: 'delete', collection: 'credentials', position: 3n, id: tokenHash }]);
    identity.given([registered, issued]).when(revoked).thenDocuments('credentials', []);
    identity.given([registered, issued]).when(revoked).thenDocuments('users', [userDoc]);
  });

  test('replaying an event changes nothing', () => {
    identity.given([registered, issued]).when(registered).thenNothingChanges();
    identity.given([registered, issued]).when(issued).thenNothingChanges();
    identity.given([registered, issued, revoked]).when(revoked).thenNothingChanges();
  });

  test('records who issued the token', () => {
    const byOther = new EventLog().record(stream, issued, { actor: { userId: null, clientId: 'cli' } });
    identity
      .given([])
      .when(byOther)
      .thenDocuments('credentials', [
        { ...credentialDoc, ...createdColumns(byOther), createdBy: null, updatedBy: null },
      ]);
  });
});

describe('the read-model fold', () => {
  test('patches dotted paths, unsets and increments, and ignores changes that are not newer', () => {
    const readModels = new InMemoryReadModels();
    readModels.apply([
      { op: 'upsert', collection: 'c', position: 5n, doc: { id: 'x', a: { b: 1 }, gone: true } },
      {
        op: 'patch',
        collection: 'c',
        position: 6n,
        id: 'x',
        set: { 'a.c.d': 'deep', skipped: undefined },
        unset: ['gone'],
        inc: { 'a.b': 2, hits: 1 },
      },
      { op: 'patch', collection: 'c', position: 6n, id: 'x', inc: { hits: 100 } },
      { op: 'upsert', collection: 'c', position: 4n, doc: { id: 'x', stale: true } },
      { op: 'delete', collection: 'c', position: 6n, id: 'x' },
      { op: 'patch', collection: 'c', position: 9n, id: 'missing', set: { a: 1 } },
    ]);
    expect(readModels.documents('c')).toEqual([{ id: 'x', a: { b: 3, c: { d: 'deep' } }, hits: 1 }]);
    expect(readModels.get('c', 'missing')).toBeNull();
    readModels.apply([{ op: 'delete', collection: 'c', position: 7n, id: 'x' }]);
    expect(readModels.documents('c')).toEqual([]);
  });

  test('keeps no tombstones, as the adapters: a replay from a checkpoint converges once the delete is replayed', () => {
    const readModels = new InMemoryReadModels();
    const upsert = { op: 'upsert', collection: 'c', position: 1n, doc: { id: 'x' } } as const;
    const remove = { op: 'delete', collection: 'c', position: 2n, id: 'x' } as const;
    readModels.apply([upsert, remove, upsert]);
    expect(readModels.documents('c')).toEqual([{ id: 'x' }]);
    readModels.apply([remove]);
    expect(readModels.documents('c')).toEqual([]);
  });

  test('EventLog counts revisions per stream and positions globally', () => {
    const log = new EventLog();
    const first = log.record('space-acme.1', { type: 'SpaceDeleted', data: { spaceId: 1 } });
    const second = log.record('space-acme.2', { type: 'SpaceDeleted', data: { spaceId: 2 } });
    const third = log.record('space-acme.1', { type: 'SpaceDeleted', data: { spaceId: 1 } });
    expect([first, second, third].map((event) => [event.streamId, event.revision, event.position])).toEqual([
      ['space-acme.1', 0n, 1n],
      ['space-acme.2', 0n, 2n],
      ['space-acme.1', 1n, 3n],
    ]);
    expect(first.metadata).toMatchObject({ tenant: TEST_TENANT, actor: TEST_ACTOR });
    expect(Date.parse(second.metadata.occurredAt)).toBeGreaterThan(Date.parse(first.metadata.occurredAt));
    expect(() => log.record('space-acme.3', { type: 'SpaceDeleted', data: { spaceId: 'three' } })).toThrow(
      /does not match its registered schema/,
    );
  });
});
