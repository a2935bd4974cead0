import { z } from 'zod';
import { PlatformError } from '../../../contracts/errors';
import { fieldKeySchema, type ModuleEvent, type ModuleKind } from '../../../contracts/events/records';
import {
  isPersonalField,
  FIELD_CONFIG_SCHEMAS,
  MAX_FIELDS_PER_MODULE,
  type FieldDefinition,
  type FieldType,
} from '../../../contracts/fields';
import { MODULE_TEMPLATES, type ModuleTemplateKey } from '../../../contracts/module-templates';
import { validate } from '../../../contracts/validation';
import type { Decider } from '../../kit/decider';
import { changedLabels, withLabels } from '../../records/domain/labelled';

export interface ModuleState {
  readonly status: 'none' | 'active' | 'deleted';
  readonly moduleId: number;
  readonly spaceId: number;
  readonly name: string;
  readonly description: string | null;
  readonly kind: ModuleKind;
  /** The built-in template it was installed from (null: a custom module). */
  readonly template: string | null;
  /** The module's record schema, ordered by position. */
  readonly fields: readonly FieldDefinition[];
  /**
   * Keys of removed fields. They are never used again: records keep the old values under them, and a new
   * field of another type would read those values as its own.
   */
  readonly retiredKeys: readonly string[];
}

export type ModuleCommand =
  | {
      readonly kind: 'CreateModule';
      readonly moduleId: number;
      readonly spaceId: number;
      readonly spaceExists: boolean;
      readonly name: string;
      readonly description: string | null;
    }
  | {
      readonly kind: 'InstallBuiltInModule';
      readonly moduleId: number;
      readonly spaceId: number;
      readonly spaceExists: boolean;
      readonly template: ModuleTemplateKey;
      readonly name: string;
      readonly description: string | null;
      /** An id for each of the template's fields, in its order. */
      readonly fieldIds: readonly number[];
      /** How many modules of this template the space holds already (the route counts them). */
      readonly installedInSpace: number;
    }
  | { readonly kind: 'UpdateModule'; readonly name?: string; readonly description?: string | null }
  /** `records`: how many records the module still holds (the route counts them). */
  | { readonly kind: 'DeleteModule'; readonly records: number }
  | {
      readonly kind: 'AddField';
      readonly fieldId: number;
      /** Derived from the name when omitted. */
      readonly key?: string;
      readonly name: string;
      readonly type: FieldType;
      readonly required: boolean;
      readonly config: Readonly<Record<string, unknown>>;
      /** Absent: as the type usually is (`isPersonalField`). */
      readonly personal?: boolean;
      /** For a relation: whether its target module exists (the route reads it). */
      readonly relationTargetExists?: boolean;
    }
  | {
      readonly kind: 'ChangeField';
      readonly fieldId: number;
      readonly name?: string;
      readonly required?: boolean;
      readonly config?: Readonly<Record<string, unknown>>;
      readonly personal?: boolean;
      readonly relationTargetExists?: boolean;
    }
  | { readonly kind: 'RemoveField'; readonly fieldId: number }
  | { readonly kind: 'OrderFields'; readonly fieldIds: readonly number[] };

/** The field of `fieldId`, or a 404 (which is also what a field of another module looks like). */
export function fieldOf(state: ModuleState, fieldId: number): FieldDefinition {
  const field = state.fields.find((candidate) => candidate.fieldId === fieldId);
  if (!field) throw new PlatformError('not_found', `field ${fieldId} not found in module ${state.moduleId}`);
  return field;
}

/** The configuration, checked against the type's schema; the config as stored (defaults are not filled in). */
function checkedConfig(
  type: FieldType,
  config: Readonly<Record<string, unknown>>,
  relationTargetExists: boolean | undefined,
): Record<string, unknown> {
  const { config: parsed } = validate(
    z.object({ config: FIELD_CONFIG_SCHEMAS[type] as z.ZodType<Record<string, unknown>> }),
    { config },
    `${type} field`,
  );
  if (type === 'relation' && relationTargetExists !== true)
    throw new PlatformError('validation_failed', `module ${String(parsed.moduleId)} does not exist`, [
      { path: 'config.moduleId', message: 'no such module' },
    ]);
  return parsed;
}

/** A key from the name (`Deal stage` → `deal_stage`), made unique in the module with the field id. */
function derivedKey(name: string, fieldId: number, state: ModuleState): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 48);
  if (slug === '' || !fieldKeySchema.safeParse(slug).success) return `field_${fieldId}`;
  return keyTaken(state, slug) ? `${slug}_${fieldId}` : slug;
}

function keyTaken(state: ModuleState, key: string): boolean {
  return state.fields.some((field) => field.key === key) || state.retiredKeys.includes(key);
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function decideField(command: ModuleCommand, state: ModuleState): ModuleEvent[] {
  const { moduleId } = state;
  switch (command.kind) {
    case 'AddField': {
      if (state.fields.some((field) => field.fieldId === command.fieldId))
        throw new PlatformError('conflict', `field ${command.fieldId} already exists`);
      const key = command.key ?? derivedKey(command.name, command.fieldId, state);
      if (keyTaken(state, key))
        throw new PlatformError(
          'conflict',
          `module ${moduleId} already has or had a field with key "${key}"; a key is never reused`,
          [{ path: 'key', message: 'already used in this module' }],
        );
      if (state.fields.length >= MAX_FIELDS_PER_MODULE)
        throw new PlatformError('validation_failed', `a module has at most ${MAX_FIELDS_PER_MODULE} fields`);
      const config = checkedConfig(command.type, command.config, command.relationTargetExists);
      const position = Math.max(0, ...state.fields.map((field) => field.position)) + 1;
      return [
        {
          type: 'FieldAdded',
          data: {
            moduleId,
            spaceId: state.spaceId,
            field: {
              fieldId: command.fieldId,
              key,
              name: command.name,
              type: command.type,
              required: command.required,
              config,
              position,
              builtIn: false,
              ...(command.personal !== undefined && { personal: command.personal }),
            },
          },
        },
      ];
    }
    case 'ChangeField': {
      const field = fieldOf(state, command.fieldId);
      const config =
        command.config === undefined
          ? undefined
          : checkedConfig(field.type, command.config, command.relationTargetExists);
      const change = {
        ...(command.name !== undefined && command.name !== field.name && { name: command.name }),
        ...(command.required !== undefined &&
          command.required !== field.required && { required: command.required }),
        ...(config !== undefined && !sameJson(config, field.config) && { config }),
        ...(command.personal !== undefined &&
          command.personal !== isPersonalField(field) && { personal: command.personal }),
      };
      return Object.keys(change).length === 0
        ? []
        : [{ type: 'FieldChanged', data: { moduleId, fieldId: field.fieldId, ...change } }];
    }
    case 'RemoveField': {
      const field = fieldOf(state, command.fieldId);
      if (field.builtIn)
        throw new PlatformError(
          'conflict',
          `field "${field.key}" is built into the ${String(state.template)} module and stays as long as the module`,
        );
      return [{ type: 'FieldRemoved', data: { moduleId, fieldId: command.fieldId } }];
    }
    case 'OrderFields': {
      const current = new Set(state.fields.map((field) => field.fieldId));
      const given = new Set(command.fieldIds);
      if (
        given.size !== command.fieldIds.length ||
        given.size !== current.size ||
        command.fieldIds.some((fieldId) => !current.has(fieldId))
      )
        throw new PlatformError(
          'validation_failed',
          `the order must list every field of module ${moduleId} exactly once: ${[...current].join(', ') || 'none'}`,
          [{ path: 'fieldIds', message: 'not a permutation of the module’s fields' }],
        );
      const unchanged = state.fields.every(
        (field, index) => field.fieldId === command.fieldIds[index] && field.position === index + 1,
      );
      return unchanged
        ? []
        : [{ type: 'FieldsOrdered', data: { moduleId, fieldIds: [...command.fieldIds] } }];
    }
    default:
      return [];
  }
}

function byPosition(a: FieldDefinition, b: FieldDefinition): number {
  return a.position - b.position;
}

/** The events that create a module: it, then (for a built-in one) its template's fields in order. */
function decideCreate(
  command: Extract<ModuleCommand, { kind: 'CreateModule' | 'InstallBuiltInModule' }>,
  state: ModuleState,
): ModuleEvent[] {
  if (state.status !== 'none') throw new PlatformError('conflict', `module ${state.moduleId} already exists`);
  if (!command.spaceExists)
    throw new PlatformError('validation_failed', `space ${command.spaceId} does not exist`, [
      { path: 'spaceId', message: 'no such space' },
    ]);
  const { moduleId, spaceId, name, description } = command;
  if (command.kind === 'CreateModule')
    return [
      {
        type: 'ModuleCreated',
        data: { moduleId, spaceId, name, description, kind: 'custom', template: null },
      },
    ];
  // One module per template and space, so "the space's contacts" means one module.
  if (command.installedInSpace > 0)
    throw new PlatformError(
      'conflict',
      `space ${spaceId} already has the built-in ${command.template} module; it can be installed once per space`,
      [{ path: 'template', message: 'already installed in this space' }],
    );
  const { fields } = MODULE_TEMPLATES[command.template];
  if (command.fieldIds.length !== fields.length)
    throw new PlatformError('internal', `${command.template} needs ${fields.length} field ids`);
  return [
    {
      type: 'ModuleCreated',
      data: { moduleId, spaceId, name, description, kind: 'built-in', template: command.template },
    },
    ...fields.map((field, index): ModuleEvent => ({
      type: 'FieldAdded',
      data: {
        moduleId,
        spaceId,
        field: {
          fieldId: command.fieldIds[index]!,
          key: field.key,
          name: field.name,
          type: field.type,
          required: field.required,
          config: { ...field.config },
          position: index + 1,
          builtIn: true,
        },
      },
    })),
  ];
}

export const moduleDecider: Decider<ModuleState, ModuleCommand, ModuleEvent> = {
  initialState: {
    status: 'none',
    moduleId: 0,
    spaceId: 0,
    name: '',
    description: null,
    kind: 'custom',
    template: null,
    fields: [],
    retiredKeys: [],
  },

  decide(command, state) {
    if (command.kind === 'CreateModule' || command.kind === 'InstallBuiltInModule')
      return decideCreate(command, state);
    if (state.status !== 'active') throw new PlatformError('not_found', 'module not found');
    switch (command.kind) {
      case 'DeleteModule':
        if (command.records > 0)
          throw new PlatformError(
            'conflict',
            `module ${state.moduleId} still holds ${command.records} record(s); delete them first`,
          );
        // The fields go first, each as its own event, so every reader of field events sees them go.
        return [
          ...state.fields.map((field): ModuleEvent => ({
            type: 'FieldRemoved',
            data: { moduleId: state.moduleId, fieldId: field.fieldId },
          })),
          { type: 'ModuleDeleted', data: { moduleId: state.moduleId, spaceId: state.spaceId } },
        ];
      case 'UpdateModule': {
        const changes = changedLabels(state, command);
        return changes === null
          ? []
          : [{ type: 'ModuleUpdated', data: { moduleId: state.moduleId, ...changes } }];
      }
      default:
        return decideField(command, state);
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ModuleCreated':
        return {
          status: 'active',
          moduleId: event.data.moduleId,
          spaceId: event.data.spaceId,
          name: event.data.name,
          description: event.data.description,
          kind: event.data.kind,
          template: event.data.template,
          fields: [],
          retiredKeys: [],
        };
      case 'ModuleUpdated':
        return withLabels(state, event.data);
      case 'ModuleDeleted':
        return { ...state, status: 'deleted' };
      case 'FieldAdded':
        return { ...state, fields: [...state.fields, event.data.field].sort(byPosition) };
      case 'FieldChanged': {
        const { fieldId, name, required, config, personal } = event.data;
        const change = {
          ...(name !== undefined && { name }),
          ...(required !== undefined && { required }),
          ...(config !== undefined && { config }),
          ...(personal !== undefined && { personal }),
        };
        return {
          ...state,
          fields: state.fields.map((field) => (field.fieldId === fieldId ? { ...field, ...change } : field)),
        };
      }
      case 'FieldRemoved': {
        const removed = state.fields.find((field) => field.fieldId === event.data.fieldId);
        return {
          ...state,
          fields: state.fields.filter((field) => field.fieldId !== event.data.fieldId),
          retiredKeys: removed ? [...state.retiredKeys, removed.key] : state.retiredKeys,
        };
      }
      case 'FieldsOrdered': {
        const positions = new Map(event.data.fieldIds.map((fieldId, index) => [fieldId, index + 1]));
        return {
          ...state,
          fields: state.fields
            .map((field) => ({ ...field, position: positions.get(field.fieldId) ?? field.position }))
            .sort(byPosition),
        };
      }
    }
  },
};
