import { moduleDecider } from '../../command-api/structure/domain/module';
import { recordDecider } from '../../command-api/records/domain/record';
import { spaceDecider } from '../../command-api/structure/domain/space';
import { userDecider, type UserCommand } from '../../command-api/identity/domain/user';
import type { ApiTokenIssuedData, IdentityEvent, UserRegisteredData } from '../../contracts/events/identity';
import type { ModuleEvent, RecordEvent, SpaceEvent } from '../../contracts/events/records';
import type { FieldDefinition, FieldType } from '../../contracts/fields';
import { deciderSpec } from '../support/given-when-then';

describe('space decider', () => {
  const spaceSpec = deciderSpec(spaceDecider);
  const created: SpaceEvent = {
    type: 'SpaceCreated',
    data: { spaceId: 7, name: 'Sales', description: 'Pipeline' },
  };
  const deleted: SpaceEvent = { type: 'SpaceDeleted', data: { spaceId: 7 } };

  describe('CreateSpace', () => {
    test('creates a new space', () => {
      const state = spaceSpec
        .given([])
        .when({ kind: 'CreateSpace', spaceId: 7, name: 'Sales', description: 'Pipeline' })
        .then([created]);
      expect(state).toEqual({ status: 'active', spaceId: 7, name: 'Sales', description: 'Pipeline' });
    });

    test('creates a space without a description', () => {
      spaceSpec
        .given([])
        .when({ kind: 'CreateSpace', spaceId: 7, name: 'Sales', description: null })
        .then([{ type: 'SpaceCreated', data: { spaceId: 7, name: 'Sales', description: null } }]);
    });

    test('refuses a space that already exists', () => {
      spaceSpec
        .given([created])
        .when({ kind: 'CreateSpace', spaceId: 7, name: 'Other', description: null })
        .thenThrows('conflict');
    });

    test('refuses to create a deleted space again', () => {
      spaceSpec
        .given([created, deleted])
        .when({ kind: 'CreateSpace', spaceId: 7, name: 'Other', description: null })
        .thenThrows('conflict');
    });
  });

  describe('UpdateSpace', () => {
    test('renames the space', () => {
      const state = spaceSpec
        .given([created])
        .when({ kind: 'UpdateSpace', name: 'Revenue' })
        .then([{ type: 'SpaceUpdated', data: { spaceId: 7, name: 'Revenue' } }]);
      expect(state).toMatchObject({ name: 'Revenue', description: 'Pipeline' });
    });

    test('changes only the description when the name is unchanged', () => {
      spaceSpec
        .given([created])
        .when({ kind: 'UpdateSpace', name: 'Sales', description: 'Deals' })
        .then([{ type: 'SpaceUpdated', data: { spaceId: 7, description: 'Deals' } }]);
    });

    test('clears the description with null', () => {
      const state = spaceSpec
        .given([created])
        .when({ kind: 'UpdateSpace', description: null })
        .then([{ type: 'SpaceUpdated', data: { spaceId: 7, description: null } }]);
      expect(state).toMatchObject({ name: 'Sales', description: null });
    });

    test('changes name and description together', () => {
      spaceSpec
        .given([created])
        .when({ kind: 'UpdateSpace', name: 'Revenue', description: 'Deals' })
        .then([{ type: 'SpaceUpdated', data: { spaceId: 7, name: 'Revenue', description: 'Deals' } }]);
    });

    test('the same values change nothing', () => {
      spaceSpec
        .given([created])
        .when({ kind: 'UpdateSpace', name: 'Sales', description: 'Pipeline' })
        .thenNothingHappens();
    });

    test('an empty update changes nothing', () => {
      spaceSpec.given([created]).when({ kind: 'UpdateSpace' }).thenNothingHappens();
    });

    test('an update decides against the folded history', () => {
      const renamed: SpaceEvent = {
        type: 'SpaceUpdated',
        data: { spaceId: 7, name: 'Revenue', description: null },
      };
      spaceSpec
        .given([created, renamed])
        .when({ kind: 'UpdateSpace', name: 'Revenue', description: null })
        .thenNothingHappens();
    });

    test('refuses a space that does not exist', () => {
      spaceSpec.given([]).when({ kind: 'UpdateSpace', name: 'Revenue' }).thenThrows('not_found');
    });

    test('refuses a deleted space', () => {
      spaceSpec
        .given([created, deleted])
        .when({ kind: 'UpdateSpace', name: 'Revenue' })
        .thenThrows('not_found');
    });
  });

  describe('DeleteSpace', () => {
    test('deletes the space', () => {
      const state = spaceSpec.given([created]).when({ kind: 'DeleteSpace', modules: 0 }).then([deleted]);
      expect(state.status).toBe('deleted');
    });

    test('refuses a space that does not exist', () => {
      spaceSpec.given([]).when({ kind: 'DeleteSpace', modules: 0 }).thenThrows('not_found');
    });

    test('refuses a space deleted before', () => {
      spaceSpec.given([created, deleted]).when({ kind: 'DeleteSpace', modules: 0 }).thenThrows('not_found');
    });

    test('refuses a space that still holds modules', () => {
      const refusal = spaceSpec
        .given([created])
        .when({ kind: 'DeleteSpace', modules: 2 })
        .thenThrows('conflict');
      expect(refusal.message).toBe('space 7 still holds 2 module(s); delete them first');
    });
  });
});

describe('module decider', () => {
  const moduleSpec = deciderSpec(moduleDecider);
  const created: ModuleEvent = {
    type: 'ModuleCreated',
    data: { moduleId: 12, spaceId: 7, name: 'Leads', description: null, kind: 'custom', template: null },
  };
  const deleted: ModuleEvent = { type: 'ModuleDeleted', data: { moduleId: 12, spaceId: 7 } };

  describe('CreateModule', () => {
    test('creates a module in an existing space', () => {
      const state = moduleSpec
        .given([])
        .when({
          kind: 'CreateModule',
          moduleId: 12,
          spaceId: 7,
          spaceExists: true,
          name: 'Leads',
          description: null,
        })
        .then([created]);
      expect(state).toEqual({
        status: 'active',
        moduleId: 12,
        spaceId: 7,
        name: 'Leads',
        description: null,
        kind: 'custom',
        template: null,
        fields: [],
        retiredKeys: [],
      });
    });

    test('refuses a module in a space that does not exist, naming the field', () => {
      const refusal = moduleSpec
        .given([])
        .when({
          kind: 'CreateModule',
          moduleId: 12,
          spaceId: 99,
          spaceExists: false,
          name: 'Leads',
          description: null,
        })
        .thenThrows('validation_failed');
      expect(refusal.details).toEqual([{ path: 'spaceId', message: 'no such space' }]);
    });

    test('refuses a module that already exists', () => {
      moduleSpec
        .given([created])
        .when({
          kind: 'CreateModule',
          moduleId: 12,
          spaceId: 7,
          spaceExists: true,
          name: 'Other',
          description: null,
        })
        .thenThrows('conflict');
    });

    test('refuses to create a deleted module again', () => {
      moduleSpec
        .given([created, deleted])
        .when({
          kind: 'CreateModule',
          moduleId: 12,
          spaceId: 7,
          spaceExists: true,
          name: 'Other',
          description: null,
        })
        .thenThrows('conflict');
    });
  });

  describe('UpdateModule', () => {
    test('renames the module', () => {
      const state = moduleSpec
        .given([created])
        .when({ kind: 'UpdateModule', name: 'Prospects' })
        .then([{ type: 'ModuleUpdated', data: { moduleId: 12, name: 'Prospects' } }]);
      expect(state).toMatchObject({ name: 'Prospects', spaceId: 7, description: null });
    });

    test('sets a description', () => {
      const state = moduleSpec
        .given([created])
        .when({ kind: 'UpdateModule', name: 'Leads', description: 'Inbound' })
        .then([{ type: 'ModuleUpdated', data: { moduleId: 12, description: 'Inbound' } }]);
      expect(state).toMatchObject({ name: 'Leads', description: 'Inbound' });
    });

    test('clears a description with null', () => {
      const described: ModuleEvent = {
        type: 'ModuleUpdated',
        data: { moduleId: 12, description: 'Inbound' },
      };
      moduleSpec
        .given([created, described])
        .when({ kind: 'UpdateModule', description: null })
        .then([{ type: 'ModuleUpdated', data: { moduleId: 12, description: null } }]);
    });

    test('the same values change nothing', () => {
      moduleSpec
        .given([created])
        .when({ kind: 'UpdateModule', name: 'Leads', description: null })
        .thenNothingHappens();
    });

    test('an empty update changes nothing', () => {
      moduleSpec.given([created]).when({ kind: 'UpdateModule' }).thenNothingHappens();
    });

    test('refuses a module that does not exist', () => {
      moduleSpec.given([]).when({ kind: 'UpdateModule', name: 'Prospects' }).thenThrows('not_found');
    });

    test('refuses a deleted module', () => {
      moduleSpec
        .given([created, deleted])
        .when({ kind: 'UpdateModule', name: 'Prospects' })
        .thenThrows('not_found');
    });
  });

  describe('DeleteModule', () => {
    test('deletes the module, naming its space', () => {
      const state = moduleSpec.given([created]).when({ kind: 'DeleteModule', records: 0 }).then([deleted]);
      expect(state.status).toBe('deleted');
    });

    test('refuses a module that does not exist', () => {
      moduleSpec.given([]).when({ kind: 'DeleteModule', records: 0 }).thenThrows('not_found');
    });

    test('refuses a module deleted before', () => {
      moduleSpec.given([created, deleted]).when({ kind: 'DeleteModule', records: 0 }).thenThrows('not_found');
    });

    test('refuses a module that still holds records', () => {
      const refusal = moduleSpec
        .given([created])
        .when({ kind: 'DeleteModule', records: 1 })
        .thenThrows('conflict');
      expect(refusal.message).toBe('module 12 still holds 1 record(s); delete them first');
    });
  });
});

/** The module's fields the record tests write to. */
function field(
  fieldId: number,
  key: string,
  type: FieldType,
  config: Record<string, unknown> = {},
): FieldDefinition {
  return { fieldId, key, name: key, type, required: false, config, position: fieldId, builtIn: false };
}
const SCHEMA: readonly FieldDefinition[] = [
  field(1, 'stage', 'select', { options: ['lead', 'customer'] }),
  field(2, 'amount', 'number'),
  field(3, 'hot', 'checkbox'),
  field(4, 'tags', 'multi_select', { options: ['b2b', 'eu'] }),
  field(5, 'owner', 'text'),
  field(6, 'constructor', 'text'),
  field(7, 'toString', 'text'),
];
const VALUES = { schema: SCHEMA, relations: new Map<number, number | null>() };

describe('record decider', () => {
  const recordSpec = deciderSpec(recordDecider);
  const created: RecordEvent = {
    type: 'RecordCreated',
    data: {
      recordId: 31,
      moduleId: 12,
      spaceId: 7,
      name: 'ACME Corp',
      fields: { stage: 'lead', amount: 1200, hot: true, tags: ['b2b', 'eu'] },
    },
  };
  const deleted: RecordEvent = { type: 'RecordDeleted', data: { recordId: 31, moduleId: 12, spaceId: 7 } };

  describe('CreateRecord', () => {
    test("creates a record in the module's space", () => {
      const state = recordSpec
        .given([])
        .when({
          kind: 'CreateRecord',
          ...VALUES,
          recordId: 31,
          moduleId: 12,
          moduleSpaceId: 7,
          name: 'ACME Corp',
          fields: { stage: 'lead', amount: 1200, hot: true, tags: ['b2b', 'eu'] },
        })
        .then([created]);
      expect(state).toEqual({ status: 'active', ...created.data, labelIds: [], files: [], erased: false });
    });

    test('leaves out fields given as null', () => {
      recordSpec
        .given([])
        .when({
          kind: 'CreateRecord',
          ...VALUES,
          recordId: 31,
          moduleId: 12,
          moduleSpaceId: 7,
          name: 'ACME Corp',
          fields: { stage: 'lead', owner: null },
        })
        .then([
          {
            type: 'RecordCreated',
            data: { recordId: 31, moduleId: 12, spaceId: 7, name: 'ACME Corp', fields: { stage: 'lead' } },
          },
        ]);
    });

    test('refuses a record in a module that does not exist, naming the field', () => {
      const refusal = recordSpec
        .given([])
        .when({
          kind: 'CreateRecord',
          ...VALUES,
          recordId: 31,
          moduleId: 99,
          moduleSpaceId: null,
          name: 'ACME Corp',
          fields: {},
        })
        .thenThrows('validation_failed');
      expect(refusal.details).toEqual([{ path: 'moduleId', message: 'no such module' }]);
    });

    test('refuses a record that already exists', () => {
      recordSpec
        .given([created])
        .when({
          kind: 'CreateRecord',
          ...VALUES,
          recordId: 31,
          moduleId: 12,
          moduleSpaceId: 7,
          name: 'Other',
          fields: {},
        })
        .thenThrows('conflict');
    });

    test('refuses to create a deleted record again', () => {
      recordSpec
        .given([created, deleted])
        .when({
          kind: 'CreateRecord',
          ...VALUES,
          recordId: 31,
          moduleId: 12,
          moduleSpaceId: 7,
          name: 'Other',
          fields: {},
        })
        .thenThrows('conflict');
    });
  });

  describe('personal values', () => {
    const personalSchema: readonly FieldDefinition[] = [
      field(1, 'email', 'email'),
      field(2, 'amount', 'number'),
      { ...field(3, 'memo', 'text'), personal: false },
      { ...field(4, 'salary', 'number'), personal: true },
    ];
    const personalValues = { schema: personalSchema, relations: new Map<number, number | null>() };
    const withEmail: RecordEvent = {
      type: 'RecordCreated',
      data: { recordId: 31, moduleId: 12, spaceId: 7, name: 'Ada', fields: { email: 'ada@x.io', memo: 'm' } },
    };

    test('a creation seals the name and the values of personal fields (by type, or as the field says)', () => {
      recordSpec
        .given([])
        .when({
          kind: 'CreateRecord',
          recordId: 31,
          moduleId: 12,
          moduleSpaceId: 7,
          name: 'Ada',
          fields: { email: 'ada@x.io', amount: 3, memo: 'm', salary: 9 },
          ...personalValues,
        })
        .then([
          {
            type: 'RecordCreated',
            data: {
              recordId: 31,
              moduleId: 12,
              spaceId: 7,
              name: 'Ada',
              fields: { email: 'ada@x.io', amount: 3, memo: 'm', salary: 9 },
            },
            personal: {
              kind: 'record',
              id: 31,
              paths: [['name'], ['fields', 'email'], ['fields', 'salary']],
            },
          },
        ]);
    });

    test('an update seals what personal values were and became, and nothing of the others', () => {
      recordSpec
        .given([withEmail])
        .when({ kind: 'UpdateRecord', ...personalValues, fields: { memo: 'n', email: 'a@y.io', amount: 4 } })
        .then([
          {
            type: 'RecordUpdated',
            data: {
              recordId: 31,
              changes: [
                { field: 'fields.memo', from: 'm', to: 'n' },
                { field: 'fields.email', from: 'ada@x.io', to: 'a@y.io' },
                { field: 'fields.amount', from: null, to: 4 },
              ],
            },
            personal: {
              kind: 'record',
              id: 31,
              paths: [
                ['changes', 1, 'from'],
                ['changes', 1, 'to'],
              ],
            },
          },
        ]);
    });

    test('erasing names the sealed fields and the reason, once; then personal values are refused', () => {
      const erased = recordSpec
        .given([withEmail])
        .when({ kind: 'EraseRecord', reason: 'Art. 17', fields: ['email'] })
        .then([
          {
            type: 'RecordErased',
            data: { recordId: 31, moduleId: 12, spaceId: 7, reason: 'Art. 17', fields: ['email'] },
            personal: { kind: 'record', id: 31, paths: [] },
          },
        ]);
      expect(erased).toMatchObject({
        erased: true,
        name: '[erased]',
        fields: { email: '[erased]', memo: 'm' },
      });
      const history: RecordEvent[] = [
        withEmail,
        {
          type: 'RecordErased',
          data: { recordId: 31, moduleId: 12, spaceId: 7, reason: 'x', fields: ['email'] },
        },
      ];
      recordSpec
        .given(history)
        .when({ kind: 'EraseRecord', reason: 'again', fields: ['email'] })
        .thenNothingHappens();
      recordSpec
        .given(history)
        .when({ kind: 'UpdateRecord', ...personalValues, fields: { memo: 'z' } })
        .thenThrows('gone');
      recordSpec
        .given(history)
        .when({ kind: 'DeleteRecord' })
        .then([{ type: 'RecordDeleted', data: { recordId: 31, moduleId: 12, spaceId: 7 } }]);
      recordSpec.given([]).when({ kind: 'EraseRecord', reason: 'x', fields: [] }).thenThrows('not_found');
    });
  });

  describe('UpdateRecord', () => {
    test('renames the record, from the old name to the new', () => {
      const state = recordSpec
        .given([created])
        .when({ kind: 'UpdateRecord', ...VALUES, name: 'ACME Inc' })
        .then([
          {
            type: 'RecordUpdated',
            data: { recordId: 31, changes: [{ field: 'name', from: 'ACME Corp', to: 'ACME Inc' }] },
          },
        ]);
      expect(state.name).toBe('ACME Inc');
    });

    test('changes a field, from the old value to the new', () => {
      const state = recordSpec
        .given([created])
        .when({ kind: 'UpdateRecord', ...VALUES, fields: { stage: 'customer' } })
        .then([
          {
            type: 'RecordUpdated',
            data: { recordId: 31, changes: [{ field: 'fields.stage', from: 'lead', to: 'customer' }] },
          },
        ]);
      expect(state.fields).toEqual({ stage: 'customer', amount: 1200, hot: true, tags: ['b2b', 'eu'] });
    });

    test('sets a new field, from null', () => {
      const state = recordSpec
        .given([created])
        .when({ kind: 'UpdateRecord', ...VALUES, fields: { owner: 'ana' } })
        .then([
          {
            type: 'RecordUpdated',
            data: { recordId: 31, changes: [{ field: 'fields.owner', from: null, to: 'ana' }] },
          },
        ]);
      expect(state.fields.owner).toBe('ana');
    });

    test('removes a field set to null, from its old value to null', () => {
      const state = recordSpec
        .given([created])
        .when({ kind: 'UpdateRecord', ...VALUES, fields: { amount: null } })
        .then([
          {
            type: 'RecordUpdated',
            data: { recordId: 31, changes: [{ field: 'fields.amount', from: 1200, to: null }] },
          },
        ]);
      expect(state.fields).toEqual({ stage: 'lead', hot: true, tags: ['b2b', 'eu'] });
      expect('amount' in state.fields).toBe(false);
    });

    test('a field named like an Object.prototype member is new, from null', () => {
      const state = recordSpec
        .given([created])
        .when({ kind: 'UpdateRecord', ...VALUES, fields: { constructor: 'BuildCo', toString: 'x' } })
        .then([
          {
            type: 'RecordUpdated',
            data: {
              recordId: 31,
              changes: [
                { field: 'fields.constructor', from: null, to: 'BuildCo' },
                { field: 'fields.toString', from: null, to: 'x' },
              ],
            },
          },
        ]);
      expect(state.fields).toMatchObject({ constructor: 'BuildCo', toString: 'x' });
    });

    test('changes a multi-select list', () => {
      recordSpec
        .given([created])
        .when({ kind: 'UpdateRecord', ...VALUES, fields: { tags: ['b2b'] } })
        .then([
          {
            type: 'RecordUpdated',
            data: { recordId: 31, changes: [{ field: 'fields.tags', from: ['b2b', 'eu'], to: ['b2b'] }] },
          },
        ]);
    });

    test('lists the name first, then every changed field, in one event', () => {
      recordSpec
        .given([created])
        .when({
          kind: 'UpdateRecord',
          ...VALUES,
          name: 'ACME Inc',
          fields: { stage: 'customer', amount: 1200, hot: false, owner: 'ana' },
        })
        .then([
          {
            type: 'RecordUpdated',
            data: {
              recordId: 31,
              changes: [
                { field: 'name', from: 'ACME Corp', to: 'ACME Inc' },
                { field: 'fields.stage', from: 'lead', to: 'customer' },
                { field: 'fields.hot', from: true, to: false },
                { field: 'fields.owner', from: null, to: 'ana' },
              ],
            },
          },
        ]);
    });

    test('refuses a value of another type, naming the field', () => {
      const refusal = recordSpec
        .given([created])
        .when({ kind: 'UpdateRecord', ...VALUES, fields: { amount: '1200' } })
        .thenThrows('validation_failed');
      expect(refusal.details).toEqual([{ path: 'fields.amount', message: 'must be an integer' }]);
    });

    test('the same name and field values change nothing', () => {
      recordSpec
        .given([created])
        .when({
          kind: 'UpdateRecord',
          ...VALUES,
          name: 'ACME Corp',
          fields: { stage: 'lead', amount: 1200, tags: ['b2b', 'eu'] },
        })
        .thenNothingHappens();
    });

    test('removing a field the record does not have changes nothing', () => {
      recordSpec
        .given([created])
        .when({ kind: 'UpdateRecord', ...VALUES, fields: { owner: null } })
        .thenNothingHappens();
    });

    test('removing a field removed before changes nothing', () => {
      const removed: RecordEvent = {
        type: 'RecordUpdated',
        data: { recordId: 31, changes: [{ field: 'fields.stage', from: 'lead', to: null }] },
      };
      recordSpec
        .given([created, removed])
        .when({ kind: 'UpdateRecord', ...VALUES, fields: { stage: null } })
        .thenNothingHappens();
    });

    test('an empty update changes nothing', () => {
      recordSpec
        .given([created])
        .when({ kind: 'UpdateRecord', ...VALUES })
        .thenNothingHappens();
    });

    test('refuses a record that does not exist', () => {
      recordSpec
        .given([])
        .when({ kind: 'UpdateRecord', ...VALUES, name: 'ACME Inc' })
        .thenThrows('not_found');
    });

    test('refuses a deleted record', () => {
      recordSpec
        .given([created, deleted])
        .when({ kind: 'UpdateRecord', ...VALUES, name: 'ACME Inc' })
        .thenThrows('not_found');
    });
  });

  describe('DeleteRecord', () => {
    test('deletes the record, naming its module and space', () => {
      const state = recordSpec.given([created]).when({ kind: 'DeleteRecord' }).then([deleted]);
      expect(state.status).toBe('deleted');
    });

    test('refuses a record that does not exist', () => {
      recordSpec.given([]).when({ kind: 'DeleteRecord' }).thenThrows('not_found');
    });

    test('refuses a record deleted before', () => {
      recordSpec.given([created, deleted]).when({ kind: 'DeleteRecord' }).thenThrows('not_found');
    });
  });
});

describe('user decider', () => {
  const userSpec = deciderSpec(userDecider);
  const passwordHash = 'scrypt$16384$8$1$c2FsdA$aGFzaA';
  const registration: UserRegisteredData = {
    userId: 3,
    email: 'ana@example.com',
    name: 'Ana',
    role: 'admin',
    passwordHash,
  };
  const registered: IdentityEvent = { type: 'UserRegistered', data: registration };
  const token: Omit<ApiTokenIssuedData, 'userId'> = {
    tokenId: 'tok-1',
    name: 'CI',
    tokenHash: 'a'.repeat(64),
    prefix: 'rp_',
    last4: 'wxyz',
    permissions: { records: ['read', 'create'] },
    expiresAt: '2031-01-01T00:00:00.000Z',
    bootstrap: false,
  };
  const issued: IdentityEvent = { type: 'ApiTokenIssued', data: { ...token, userId: 3 } };
  const revoked: IdentityEvent = {
    type: 'ApiTokenRevoked',
    data: { userId: 3, tokenId: 'tok-1', tokenHash: 'a'.repeat(64) },
  };
  const register: UserCommand = {
    kind: 'RegisterUser',
    userId: 3,
    email: 'ana@example.com',
    name: 'Ana',
    role: 'admin',
    passwordHash,
  };

  describe('RegisterUser', () => {
    test('registers a user with a password', () => {
      const state = userSpec.given([]).when(register).then([registered]);
      expect(state).toEqual({
        status: 'active',
        userId: 3,
        email: 'ana@example.com',
        name: 'Ana',
        role: 'admin',
        permissions: null,
        passwordHash,
        tokens: {},
        twoFactor: { devices: {}, recoveryCodeHashes: [], usedPendingLogins: [] },
        sessions: [],
      });
    });

    test('registers a token-only user without a password', () => {
      userSpec
        .given([])
        .when({ ...register, role: 'member', passwordHash: null })
        .then([{ type: 'UserRegistered', data: { ...registration, role: 'member', passwordHash: null } }]);
    });

    test('refuses a user that already exists', () => {
      userSpec.given([registered]).when(register).thenThrows('conflict');
    });
  });

  describe('IssueApiToken', () => {
    test("issues a token to the user, recording the user's id", () => {
      const state = userSpec.given([registered]).when({ kind: 'IssueApiToken', token }).then([issued]);
      expect(state.tokens).toEqual({
        'tok-1': { tokenHash: 'a'.repeat(64), bootstrap: false, permissions: token.permissions },
      });
    });

    test('issues an unrestricted bootstrap token without expiry', () => {
      const bootstrapToken = {
        ...token,
        tokenId: 'tok-boot',
        permissions: null,
        expiresAt: null,
        bootstrap: true,
      };
      userSpec
        .given([registered])
        .when({ kind: 'IssueApiToken', token: bootstrapToken })
        .then([{ type: 'ApiTokenIssued', data: { ...bootstrapToken, userId: 3 } }]);
    });

    test('issues a token whose id is named like an Object.prototype member', () => {
      const constructorToken = { ...token, tokenId: 'constructor' };
      userSpec
        .given([registered])
        .when({ kind: 'IssueApiToken', token: constructorToken })
        .then([{ type: 'ApiTokenIssued', data: { ...constructorToken, userId: 3 } }]);
    });

    test('refuses a token id the user already has', () => {
      userSpec
        .given([registered, issued])
        .when({ kind: 'IssueApiToken', token: { ...token, tokenHash: 'b'.repeat(64) } })
        .thenThrows('conflict');
    });

    test('refuses a user that does not exist', () => {
      userSpec.given([]).when({ kind: 'IssueApiToken', token }).thenThrows('not_found');
    });
  });

  describe('RevokeApiToken', () => {
    test('revokes a live token, naming its hash', () => {
      const state = userSpec
        .given([registered, issued])
        .when({ kind: 'RevokeApiToken', tokenId: 'tok-1' })
        .then([revoked]);
      expect(state.tokens).toEqual({});
    });

    test('keeps the other tokens live', () => {
      const other: IdentityEvent = {
        type: 'ApiTokenIssued',
        data: { ...token, tokenId: 'tok-2', tokenHash: 'c'.repeat(64), userId: 3 },
      };
      const state = userSpec
        .given([registered, issued, other])
        .when({ kind: 'RevokeApiToken', tokenId: 'tok-1' })
        .then([revoked]);
      expect(state.tokens).toEqual({
        'tok-2': { tokenHash: 'c'.repeat(64), bootstrap: false, permissions: token.permissions },
      });
    });

    test('refuses a token the user never had', () => {
      userSpec.given([registered]).when({ kind: 'RevokeApiToken', tokenId: 'tok-9' }).thenThrows('not_found');
    });

    test('refuses a token id named like an Object.prototype member', () => {
      userSpec
        .given([registered, issued])
        .when({ kind: 'RevokeApiToken', tokenId: 'toString' })
        .thenThrows('not_found');
    });

    test('refuses a token revoked before', () => {
      userSpec
        .given([registered, issued, revoked])
        .when({ kind: 'RevokeApiToken', tokenId: 'tok-1' })
        .thenThrows('not_found');
    });

    test('refuses a user that does not exist', () => {
      userSpec.given([]).when({ kind: 'RevokeApiToken', tokenId: 'tok-1' }).thenThrows('not_found');
    });
  });
});

describe('deciderSpec', () => {
  test('fails when a produced event does not match its registered schema', () => {
    expect(() =>
      deciderSpec(spaceDecider)
        .given([])
        .when({ kind: 'CreateSpace', spaceId: 0, name: 'Zero', description: null })
        .then([{ type: 'SpaceCreated', data: { spaceId: 0, name: 'Zero', description: null } }]),
    ).toThrow(/SpaceCreated does not match its registered schema/);
  });

  test('fails when a malformed event is given', () => {
    expect(() => deciderSpec(spaceDecider).given([{ type: 'SpaceDeleted', data: { spaceId: -1 } }])).toThrow(
      /given event SpaceDeleted does not match/,
    );
  });

  test('thenThrows fails when the command is accepted', () => {
    expect(() =>
      deciderSpec(spaceDecider)
        .given([])
        .when({ kind: 'CreateSpace', spaceId: 1, name: 'One', description: null })
        .thenThrows('conflict'),
    ).toThrow(/expected a conflict refusal/);
  });
});

describe('record decider: soft delete and restore', () => {
  const spec = deciderSpec(recordDecider);
  const created: RecordEvent = {
    type: 'RecordCreated',
    data: { recordId: 31, moduleId: 12, spaceId: 7, name: 'Deal', fields: {} },
  };
  const deleted: RecordEvent = { type: 'RecordDeleted', data: { recordId: 31, moduleId: 12, spaceId: 7 } };

  test('restores a deleted record whose module exists', () => {
    const state = spec
      .given([created, deleted])
      .when({ kind: 'RestoreRecord', moduleActive: true })
      .then([{ type: 'RecordRestored', data: { recordId: 31, moduleId: 12, spaceId: 7 } }]);
    expect(state.status).toBe('active');
  });

  test('refuses to restore into a deleted module, a record that is not deleted, or one that never was', () => {
    spec
      .given([created, deleted])
      .when({ kind: 'RestoreRecord', moduleActive: false })
      .thenThrows('conflict');
    spec.given([created]).when({ kind: 'RestoreRecord', moduleActive: true }).thenThrows('conflict');
    spec.given([]).when({ kind: 'RestoreRecord', moduleActive: true }).thenThrows('not_found');
  });
});
