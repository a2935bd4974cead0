import { z } from 'zod';
import { moduleDecider, type ModuleCommand } from '../../command-api/structure/domain/module';
import { fieldKeySchema, type ModuleEvent } from '../../contracts/events/records';
import { FIELD_CONFIG_SCHEMAS, MAX_FIELDS_PER_MODULE } from '../../contracts/fields';
import {
  MODULE_TEMPLATE_KEYS,
  MODULE_TEMPLATES,
  moduleTemplateKeySchema,
  type ModuleTemplateKey,
} from '../../contracts/module-templates';
import { streamName } from '../../contracts/streams';
import { fieldsProjection } from '../../projections/read-models/fields';
import { modulesProjection } from '../../projections/read-models/spaces-and-modules';
import { deciderSpec, EventLog, projectionSpec, TEST_TENANT } from '../support/given-when-then';

const spec = deciderSpec(moduleDecider);

function install(
  template: ModuleTemplateKey,
  overrides: Partial<Extract<ModuleCommand, { kind: 'InstallBuiltInModule' }>> = {},
): ModuleCommand {
  return {
    kind: 'InstallBuiltInModule',
    moduleId: 12,
    spaceId: 7,
    spaceExists: true,
    template,
    name: MODULE_TEMPLATES[template].name,
    description: MODULE_TEMPLATES[template].description,
    fieldIds: MODULE_TEMPLATES[template].fields.map((_, index) => 100 + index),
    installedInSpace: 0,
    ...overrides,
  };
}

/** The events of an installed deals module (stage 100, amount 101, close_date 102, probability 103, owner 104). */
const dealsInstalled = moduleDecider.decide(install('deals'), moduleDecider.initialState);
const [dealsCreated, stageAdded] = dealsInstalled;

describe('the built-in module catalogue', () => {
  test.each(MODULE_TEMPLATE_KEYS)(
    '%s: fields with valid, unique keys and configs that fit their types',
    (key) => {
      const { fields, name, description } = MODULE_TEMPLATES[key];
      expect(name).not.toBe('');
      expect(description).not.toBe('');
      expect(fields.length).toBeGreaterThan(0);
      expect(fields.length).toBeLessThanOrEqual(MAX_FIELDS_PER_MODULE);
      expect(new Set(fields.map((field) => field.key)).size).toBe(fields.length);
      for (const field of fields) {
        expect(fieldKeySchema.safeParse(field.key).success).toBe(true);
        const configSchema = FIELD_CONFIG_SCHEMAS[field.type] as z.ZodType;
        expect({ key: field.key, problems: configSchema.safeParse(field.config).error?.issues }).toEqual({
          key: field.key,
          problems: undefined,
        });
        // A relation would need a module of the space, a button an address: neither can be in a template.
        expect(['relation', 'button', 'file']).not.toContain(field.type);
      }
    },
  );

  test('a template is named by its key; anything else is refused with the list', () => {
    expect(moduleTemplateKeySchema.parse('contacts')).toBe('contacts');
    const refused = moduleTemplateKeySchema.safeParse('leads');
    expect(refused.error?.issues[0]?.message).toBe(
      'must be one of contacts, companies, deals, tasks (GET /module/built-in lists them)',
    );
  });
});

describe('module decider: installing a built-in module', () => {
  test.each(MODULE_TEMPLATE_KEYS)(
    '%s: a built-in module naming its template, then its built-in fields in the template’s order',
    (key) => {
      const template = MODULE_TEMPLATES[key];
      const state = spec
        .given([])
        .when(install(key, { name: 'Ours', description: null }))
        .then([
          {
            type: 'ModuleCreated',
            data: {
              moduleId: 12,
              spaceId: 7,
              name: 'Ours',
              description: null,
              kind: 'built-in',
              template: key,
            },
          },
          ...template.fields.map((field, index): ModuleEvent => ({
            type: 'FieldAdded',
            data: {
              moduleId: 12,
              spaceId: 7,
              field: {
                fieldId: 100 + index,
                key: field.key,
                name: field.name,
                type: field.type,
                required: field.required,
                config: field.config,
                position: index + 1,
                builtIn: true,
              },
            },
          })),
        ]);
      expect(state).toMatchObject({ status: 'active', kind: 'built-in', template: key, name: 'Ours' });
      expect(state.fields.map((field) => [field.key, field.builtIn])).toEqual(
        template.fields.map((field) => [field.key, true]),
      );
    },
  );

  test('a custom module is created custom, with no template and no fields', () => {
    const state = spec
      .given([])
      .when({
        kind: 'CreateModule',
        moduleId: 12,
        spaceId: 7,
        spaceExists: true,
        name: 'Leads',
        description: null,
      })
      .then([
        {
          type: 'ModuleCreated',
          data: {
            moduleId: 12,
            spaceId: 7,
            name: 'Leads',
            description: null,
            kind: 'custom',
            template: null,
          },
        },
      ]);
    expect(state).toMatchObject({ kind: 'custom', template: null, fields: [] });
  });

  test('refuses a template the space has installed already (409), naming the field', () => {
    const refusal = spec
      .given([])
      .when(install('contacts', { installedInSpace: 1 }))
      .thenThrows('conflict');
    expect(refusal.message).toBe(
      'space 7 already has the built-in contacts module; it can be installed once per space',
    );
    expect(refusal.details).toEqual([{ path: 'template', message: 'already installed in this space' }]);
  });

  test('refuses a space that does not exist, and a module id that exists', () => {
    const refusal = spec
      .given([])
      .when(install('tasks', { spaceExists: false }))
      .thenThrows('validation_failed');
    expect(refusal.details).toEqual([{ path: 'spaceId', message: 'no such space' }]);
    spec.given(dealsInstalled).when(install('tasks')).thenThrows('conflict');
  });
});

describe('module decider: the fields of a built-in module', () => {
  test('a built-in field cannot be removed (409); the module keeps it', () => {
    const refusal = spec
      .given(dealsInstalled)
      .when({ kind: 'RemoveField', fieldId: 100 })
      .thenThrows('conflict');
    expect(refusal.message).toBe(
      'field "stage" is built into the deals module and stays as long as the module',
    );
  });

  test('a built-in field can be renamed, made optional and given other options', () => {
    const state = spec
      .given(dealsInstalled)
      .when({
        kind: 'ChangeField',
        fieldId: 100,
        name: 'Pipeline stage',
        required: false,
        config: { options: ['New', 'Won', 'Lost'] },
      })
      .then([
        {
          type: 'FieldChanged',
          data: {
            moduleId: 12,
            fieldId: 100,
            name: 'Pipeline stage',
            required: false,
            config: { options: ['New', 'Won', 'Lost'] },
          },
        },
      ]);
    expect(state.fields[0]).toMatchObject({ key: 'stage', type: 'select', builtIn: true });
  });

  test('a custom field added to a built-in module is custom, and can be removed', () => {
    const sourceAdded: ModuleEvent = {
      type: 'FieldAdded',
      data: {
        moduleId: 12,
        spaceId: 7,
        field: {
          fieldId: 200,
          key: 'source',
          name: 'Source',
          type: 'text',
          required: false,
          config: {},
          position: 6,
          builtIn: false,
        },
      },
    };
    spec
      .given(dealsInstalled)
      .when({ kind: 'AddField', fieldId: 200, name: 'Source', type: 'text', required: false, config: {} })
      .then([sourceAdded]);
    spec
      .given([...dealsInstalled, sourceAdded])
      .when({ kind: 'RemoveField', fieldId: 200 })
      .then([{ type: 'FieldRemoved', data: { moduleId: 12, fieldId: 200 } }]);
  });

  test('a custom field cannot take a built-in key', () => {
    const refusal = spec
      .given(dealsInstalled)
      .when({
        kind: 'AddField',
        fieldId: 201,
        key: 'amount',
        name: 'Amount',
        type: 'number',
        required: false,
        config: {},
      })
      .thenThrows('conflict');
    expect(refusal.details).toEqual([{ path: 'key', message: 'already used in this module' }]);
  });

  test('deleting a built-in module removes every field with it', () => {
    const state = spec
      .given(dealsInstalled)
      .when({ kind: 'DeleteModule', records: 0 })
      .then([
        ...[100, 101, 102, 103, 104].map((fieldId): ModuleEvent => ({
          type: 'FieldRemoved',
          data: { moduleId: 12, fieldId },
        })),
        { type: 'ModuleDeleted', data: { moduleId: 12, spaceId: 7 } },
      ]);
    expect(state.status).toBe('deleted');
  });
});

describe('projections of a built-in module', () => {
  const log = new EventLog();
  const stream = streamName('module', TEST_TENANT, 12);
  const created = log.record(stream, dealsCreated!);
  const stage = log.record(stream, stageAdded!);

  test('the module document carries its kind and template', () => {
    projectionSpec(modulesProjection)
      .given([])
      .when(created)
      .thenDocuments('modules', [
        expect.objectContaining({ id: `${TEST_TENANT}.12`, kind: 'built-in', template: 'deals' }),
      ]);
  });

  test('a built-in field’s document says it is built in', () => {
    projectionSpec(fieldsProjection)
      .given([created])
      .when(stage)
      .thenDocuments('fields', [
        expect.objectContaining({ id: `${TEST_TENANT}.100`, key: 'stage', builtIn: true, position: 1 }),
      ]);
  });
});
