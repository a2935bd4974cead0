import { checkRecordValues, relationIdsOf } from '../../command-api/records/domain/field-values';
import { moduleDecider, type ModuleCommand } from '../../command-api/structure/domain/module';
import { recordDecider } from '../../command-api/records/domain/record';
import { PlatformError } from '../../contracts/errors';
import type { FieldValue, ModuleEvent, RecordEvent } from '../../contracts/events/records';
import type { FieldDefinition, FieldType } from '../../contracts/fields';
import { streamName } from '../../contracts/streams';
import { fieldsProjection } from '../../projections/read-models/fields';
import { modulesProjection } from '../../projections/read-models/spaces-and-modules';
import { deciderSpec, EventLog, projectionSpec, TEST_TENANT } from '../support/given-when-then';

function definition(
  fieldId: number,
  key: string,
  type: FieldType,
  config: Record<string, unknown> = {},
  required = false,
): FieldDefinition {
  return { fieldId, key, name: key, type, required, config, position: fieldId, builtIn: false };
}

const moduleCreated: ModuleEvent = {
  type: 'ModuleCreated',
  data: { moduleId: 12, spaceId: 7, name: 'Deals', description: null, kind: 'custom', template: null },
};
const stageAdded: ModuleEvent = {
  type: 'FieldAdded',
  data: {
    moduleId: 12,
    spaceId: 7,
    field: definition(1, 'stage', 'select', { options: ['lead', 'won'] }),
  },
};
const amountAdded: ModuleEvent = {
  type: 'FieldAdded',
  data: {
    moduleId: 12,
    spaceId: 7,
    field: { ...definition(2, 'amount', 'decimal', { scale: 2 }), position: 2 },
  },
};

function addField(overrides: Partial<Extract<ModuleCommand, { kind: 'AddField' }>> = {}): ModuleCommand {
  return {
    kind: 'AddField',
    fieldId: 3,
    name: 'Deal owner',
    type: 'email',
    required: false,
    config: {},
    ...overrides,
  };
}

describe('module decider: fields', () => {
  const spec = deciderSpec(moduleDecider);

  describe('AddField', () => {
    test('adds a field last, with a key derived from its name', () => {
      const state = spec
        .given([moduleCreated, stageAdded, amountAdded])
        .when(addField())
        .then([
          {
            type: 'FieldAdded',
            data: {
              moduleId: 12,
              spaceId: 7,
              field: {
                fieldId: 3,
                key: 'deal_owner',
                name: 'Deal owner',
                type: 'email',
                required: false,
                config: {},
                position: 3,
                builtIn: false,
              },
            },
          },
        ]);
      expect(state.fields.map((field) => field.key)).toEqual(['stage', 'amount', 'deal_owner']);
    });

    test('a derived key that is taken gets the field id; a name with no letters gets field_<id>', () => {
      spec
        .given([moduleCreated, stageAdded])
        .when(addField({ name: 'Stage!', type: 'text' }))
        .then([
          {
            type: 'FieldAdded',
            data: {
              moduleId: 12,
              spaceId: 7,
              field: { ...definition(3, 'stage_3', 'text'), name: 'Stage!', position: 2 },
            },
          },
        ]);
      const [event] = moduleDecider.decide(addField({ name: '★★', type: 'text' }), {
        ...moduleDecider.initialState,
        status: 'active',
        moduleId: 12,
        spaceId: 7,
      });
      expect((event!.data as { field: FieldDefinition }).field.key).toBe('field_3');
    });

    test('refuses a key the module already uses', () => {
      const refusal = spec
        .given([moduleCreated, stageAdded])
        .when(addField({ key: 'stage' }))
        .thenThrows('conflict');
      expect(refusal.details).toEqual([{ path: 'key', message: 'already used in this module' }]);
    });

    test("refuses a configuration that does not fit the type, naming the config's path", () => {
      const refusal = spec
        .given([moduleCreated])
        .when(addField({ type: 'select', config: { options: [] } }))
        .thenThrows('validation_failed');
      expect(refusal.details).toEqual([{ path: 'config.options', message: 'at least one option' }]);
      spec
        .given([moduleCreated])
        .when(addField({ type: 'text', config: { options: ['a'] } }))
        .thenThrows('validation_failed');
      spec
        .given([moduleCreated])
        .when(addField({ type: 'button', config: { webhookUrl: 'http://example.com/hook' } }))
        .thenThrows('validation_failed');
    });

    test('refuses a relation to a module that does not exist', () => {
      const refusal = spec
        .given([moduleCreated])
        .when(addField({ type: 'relation', config: { moduleId: 99 }, relationTargetExists: false }))
        .thenThrows('validation_failed');
      expect(refusal.details).toEqual([{ path: 'config.moduleId', message: 'no such module' }]);
    });

    test('refuses a field of a module that does not exist or was deleted', () => {
      spec.given([]).when(addField()).thenThrows('not_found');
      spec
        .given([moduleCreated, { type: 'ModuleDeleted', data: { moduleId: 12, spaceId: 7 } }])
        .when(addField())
        .thenThrows('not_found');
    });
  });

  describe('ChangeField', () => {
    test('changes only what differs', () => {
      const state = spec
        .given([moduleCreated, stageAdded])
        .when({
          kind: 'ChangeField',
          fieldId: 1,
          name: 'stage',
          required: true,
          config: { options: ['lead', 'won', 'lost'] },
        })
        .then([
          {
            type: 'FieldChanged',
            data: { moduleId: 12, fieldId: 1, required: true, config: { options: ['lead', 'won', 'lost'] } },
          },
        ]);
      expect(state.fields[0]).toMatchObject({ key: 'stage', required: true, name: 'stage' });
    });

    test('the same values change nothing', () => {
      spec
        .given([moduleCreated, stageAdded])
        .when({ kind: 'ChangeField', fieldId: 1, name: 'stage', config: { options: ['lead', 'won'] } })
        .thenNothingHappens();
    });

    test('checks the new config against the field’s own type', () => {
      spec
        .given([moduleCreated, amountAdded])
        .when({ kind: 'ChangeField', fieldId: 2, config: { scale: 11 } })
        .thenThrows('validation_failed');
    });

    test('refuses a field the module does not have', () => {
      spec
        .given([moduleCreated, stageAdded])
        .when({ kind: 'ChangeField', fieldId: 9, name: 'x' })
        .thenThrows('not_found');
    });
  });

  describe('RemoveField and OrderFields', () => {
    test("a removed field's key is never used again (records keep values under it)", () => {
      const removed: ModuleEvent = { type: 'FieldRemoved', data: { moduleId: 12, fieldId: 1 } };
      spec
        .given([moduleCreated, stageAdded, removed])
        .when(addField({ key: 'stage' }))
        .thenThrows('conflict');
      spec
        .given([moduleCreated, stageAdded, removed])
        .when(addField({ name: 'Stage', type: 'text' }))
        .then([
          {
            type: 'FieldAdded',
            data: {
              moduleId: 12,
              spaceId: 7,
              field: { ...definition(3, 'stage_3', 'text'), name: 'Stage', position: 1 },
            },
          },
        ]);
    });

    test('removes a field', () => {
      const state = spec
        .given([moduleCreated, stageAdded, amountAdded])
        .when({ kind: 'RemoveField', fieldId: 1 })
        .then([{ type: 'FieldRemoved', data: { moduleId: 12, fieldId: 1 } }]);
      expect(state.fields.map((field) => field.fieldId)).toEqual([2]);
    });

    test('orders the fields, positions 1..n', () => {
      const state = spec
        .given([moduleCreated, stageAdded, amountAdded])
        .when({ kind: 'OrderFields', fieldIds: [2, 1] })
        .then([{ type: 'FieldsOrdered', data: { moduleId: 12, fieldIds: [2, 1] } }]);
      expect(state.fields.map((field) => [field.fieldId, field.position])).toEqual([
        [2, 1],
        [1, 2],
      ]);
    });

    test('the current order changes nothing', () => {
      spec
        .given([moduleCreated, stageAdded, amountAdded])
        .when({ kind: 'OrderFields', fieldIds: [1, 2] })
        .thenNothingHappens();
    });

    test('refuses an order that is not a permutation of the fields', () => {
      const given = spec.given([moduleCreated, stageAdded, amountAdded]);
      given.when({ kind: 'OrderFields', fieldIds: [1] }).thenThrows('validation_failed');
      given.when({ kind: 'OrderFields', fieldIds: [1, 1] }).thenThrows('validation_failed');
      given.when({ kind: 'OrderFields', fieldIds: [1, 3] }).thenThrows('validation_failed');
    });

    test('deleting the module removes each field first', () => {
      spec
        .given([moduleCreated, stageAdded, amountAdded])
        .when({ kind: 'DeleteModule', records: 0 })
        .then([
          { type: 'FieldRemoved', data: { moduleId: 12, fieldId: 1 } },
          { type: 'FieldRemoved', data: { moduleId: 12, fieldId: 2 } },
          { type: 'ModuleDeleted', data: { moduleId: 12, spaceId: 7 } },
        ]);
    });
  });
});

describe('record values against field types', () => {
  const fields: FieldDefinition[] = [
    definition(1, 'title', 'text', { maxLength: 5 }),
    definition(2, 'notes', 'long_text'),
    definition(3, 'count', 'number', { min: 0, max: 10 }),
    definition(4, 'price', 'decimal', { scale: 2 }),
    definition(5, 'due', 'date'),
    definition(6, 'at', 'datetime'),
    definition(7, 'done', 'checkbox'),
    definition(8, 'stage', 'select', { options: ['lead', 'won'] }),
    definition(9, 'tags', 'multi_select', { options: ['a', 'b'] }),
    definition(10, 'mail', 'email'),
    definition(11, 'site', 'url'),
    definition(12, 'phone', 'phone'),
    definition(13, 'owner', 'user'),
    definition(14, 'company', 'relation', { moduleId: 20 }),
    definition(15, 'contract', 'file'),
    definition(16, 'notify', 'button', { webhookUrl: 'https://hooks.example.com/x' }),
    definition(17, 'code', 'text', {}, true),
  ];
  const relations = new Map<number, number | null>([
    [5, 20],
    [6, 21],
    [7, null],
  ]);

  function problems(values: Record<string, FieldValue>, mode: 'create' | 'update' = 'update'): unknown {
    try {
      checkRecordValues(fields, values, relations, mode);
      return [];
    } catch (error) {
      expect(error).toBeInstanceOf(PlatformError);
      return (error as PlatformError).details;
    }
  }

  test.each<[string, FieldValue]>([
    ['title', 'abcde'],
    ['notes', 'x'.repeat(60_000)],
    ['count', 10],
    ['price', 19.99],
    ['due', '2024-02-29'],
    ['at', '2030-01-31T09:30:00Z'],
    ['at', '2030-01-31T09:30:00.123+02:00'],
    ['done', false],
    ['stage', 'won'],
    ['tags', ['b', 'a']],
    ['mail', 'ana@example.com'],
    ['site', 'https://example.com/a?b=c'],
    ['phone', '+49 (30) 123-456'],
    ['owner', 4],
    ['company', 5],
    ['title', null],
  ])('%s accepts %j', (key, value) => {
    expect(problems({ [key]: value })).toEqual([]);
  });

  test.each<[string, FieldValue, string]>([
    ['title', 'abcdef', 'must be at most 5 characters'],
    ['title', 5, 'must be a string'],
    ['count', 1.5, 'must be an integer'],
    ['count', 11, 'must be at most 10'],
    ['count', -1, 'must be at least 0'],
    ['price', 1.005, 'must have at most 2 decimal places'],
    ['price', '1', 'must be a number'],
    ['due', '2023-02-29', 'must be a date as YYYY-MM-DD'],
    ['due', '2023-2-1', 'must be a date as YYYY-MM-DD'],
    ['at', '2030-01-31T09:30:00', 'must be an ISO 8601 date-time with a time zone (2030-01-31T09:30:00Z)'],
    ['done', 'true', 'must be true or false'],
    ['stage', 'lost', 'must be one of: lead, won'],
    ['tags', ['a', 'c'], 'must be a list of: a, b'],
    ['tags', ['a', 'a'], 'must not repeat an option'],
    ['tags', 'a', 'must be a list of: a, b'],
    ['mail', 'not-an-email', 'must be an email address'],
    ['site', 'ftp://example.com', 'must be an absolute http(s) URL'],
    ['site', '/relative', 'must be an absolute http(s) URL'],
    ['phone', 'call me', 'must be a phone number (digits, optional +, spaces, dashes, dots, parentheses)'],
    ['owner', 0, 'must be a user id: a JSON integer from 1 to 2147483647'],
    ['owner', 2147483648, 'must be a user id: a JSON integer from 1 to 2147483647'],
    ['owner', 4.5, 'must be a user id: a JSON integer from 1 to 2147483647'],
    ['owner', '4', 'must be a user id: a JSON integer from 1 to 2147483647, not a string'],
    ['company', 6, 'record 6 is not in module 20'],
    ['company', 7, 'record 7 does not exist'],
    ['company', 8, 'record 8 does not exist'],
    ['company', 'x', 'must be a record id: a JSON integer from 1 to 2147483647, not a string'],
    ['company', '5', 'must be a record id: a JSON integer from 1 to 2147483647, not a string'],
    ['company', -5, 'must be a record id: a JSON integer from 1 to 2147483647'],
    ['company', 2 ** 31, 'must be a record id: a JSON integer from 1 to 2147483647'],
    ['contract', 'file-1', 'file fields are filled by uploading a file to the record'],
    ['notify', true, 'button fields hold no value'],
    ['code', null, 'is required'],
    ['missing', 1, 'no such field in this module'],
  ])('%s refuses %j: %s', (key, value, message) => {
    expect(problems({ [key]: value })).toEqual([{ path: `fields.${key}`, message }]);
  });

  test('a create must give every required field; an update need not', () => {
    expect(problems({ title: 'a' }, 'create')).toEqual([{ path: 'fields.code', message: 'is required' }]);
    expect(problems({ title: 'a' }, 'update')).toEqual([]);
  });

  test('every problem is reported at once; only unknown keys make it an unknown_field error', () => {
    expect(() => checkRecordValues(fields, { nope: 1 }, relations, 'update')).toThrow(
      expect.objectContaining({ kind: 'unknown_field' }),
    );
    expect(problems({ nope: 1, count: 'x' })).toEqual([
      { path: 'fields.nope', message: 'no such field in this module' },
      { path: 'fields.count', message: 'must be an integer' },
    ]);
  });

  test('the relation ids to look up are the positive integer values of relation fields', () => {
    expect(relationIdsOf(fields, { company: 5, count: 3 })).toEqual([5]);
    expect(relationIdsOf(fields, { company: -1 })).toEqual([]);
    expect(relationIdsOf(fields, { company: '5' })).toEqual([]);
    expect(relationIdsOf(fields, { company: 2 ** 31 })).toEqual([]);
  });
});

describe('record decider: values against the module’s fields', () => {
  const spec = deciderSpec(recordDecider);
  const schema = [definition(1, 'company', 'relation', { moduleId: 20 })];
  const created: RecordEvent = {
    type: 'RecordCreated',
    data: { recordId: 31, moduleId: 12, spaceId: 7, name: 'Deal', fields: {} },
  };

  test('a relation to a record of the target module is accepted', () => {
    spec
      .given([created])
      .when({ kind: 'UpdateRecord', fields: { company: 5 }, schema, relations: new Map([[5, 20]]) })
      .then([
        {
          type: 'RecordUpdated',
          data: { recordId: 31, changes: [{ field: 'fields.company', from: null, to: 5 }] },
        },
      ]);
  });

  test('a relation to a missing record is refused and nothing is written', () => {
    spec
      .given([])
      .when({
        kind: 'CreateRecord',
        recordId: 31,
        moduleId: 12,
        moduleSpaceId: 7,
        name: 'Deal',
        fields: { company: 5 },
        schema,
        relations: new Map([[5, null]]),
      })
      .thenThrows('validation_failed');
  });
});

describe('fields projection', () => {
  const log = new EventLog();
  const stream = streamName('module', TEST_TENANT, 12);
  const created = log.record(stream, moduleCreated);
  const stage = log.record(stream, stageAdded);
  const amount = log.record(stream, amountAdded);
  const spec = projectionSpec(fieldsProjection);

  function doc(field: FieldDefinition, event: typeof stage): Record<string, unknown> {
    return {
      id: `${TEST_TENANT}.${field.fieldId}`,
      moduleId: 12,
      spaceId: 7,
      ...field,
      tenant: TEST_TENANT,
      createdAt: event.metadata.occurredAt,
      updatedAt: event.metadata.occurredAt,
      createdBy: event.metadata.actor.userId,
      updatedBy: event.metadata.actor.userId,
      revision: Number(event.revision),
    };
  }

  test('a field added is a document', () => {
    spec
      .given([created])
      .when(stage)
      .thenDocuments('fields', [doc((stageAdded.data as { field: FieldDefinition }).field, stage)]);
  });

  test('an order renumbers the positions; a removal deletes the document', () => {
    const ordered = log.record(stream, { type: 'FieldsOrdered', data: { moduleId: 12, fieldIds: [2, 1] } });
    spec
      .given([created, stage, amount])
      .when(ordered)
      .thenDocuments('fields', [
        {
          ...doc((stageAdded.data as { field: FieldDefinition }).field, stage),
          position: 2,
          updatedAt: ordered.metadata.occurredAt,
          revision: Number(ordered.revision),
        },
        {
          ...doc((amountAdded.data as { field: FieldDefinition }).field, amount),
          position: 1,
          updatedAt: ordered.metadata.occurredAt,
          revision: Number(ordered.revision),
        },
      ]);
    const removed = log.record(stream, { type: 'FieldRemoved', data: { moduleId: 12, fieldId: 1 } });
    spec
      .given([created, stage, amount])
      .when(removed)
      .thenDocuments('fields', [doc((amountAdded.data as { field: FieldDefinition }).field, amount)]);
  });

  test("a field event moves the module document's revision, so its ETag stays the stream's", () => {
    projectionSpec(modulesProjection)
      .given([created])
      .when(stage)
      .thenDocuments('modules', [
        {
          id: `${TEST_TENANT}.12`,
          moduleId: 12,
          spaceId: 7,
          name: 'Deals',
          description: null,
          kind: 'custom',
          template: null,
          tenant: TEST_TENANT,
          createdAt: created.metadata.occurredAt,
          createdBy: created.metadata.actor.userId,
          updatedAt: stage.metadata.occurredAt,
          updatedBy: stage.metadata.actor.userId,
          revision: Number(stage.revision),
        },
      ]);
  });
});
