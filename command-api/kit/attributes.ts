import { PlatformError } from '../../contracts/errors';
import type { Decider, DomainEvent } from './decider';

/**
 * Entities that are a set of attributes and nothing more (categories, teams, menus, field groups): created
 * once, changed where a command differs, deleted once. What each attribute may hold, and which other
 * entities it may point at, the routes check before the command.
 */
export interface AttributesState {
  readonly status: 'none' | 'active' | 'deleted';
  readonly id: number;
  readonly attributes: Readonly<Record<string, unknown>>;
}

export type AttributesCommand =
  | { readonly kind: 'Create'; readonly id: number; readonly attributes: Readonly<Record<string, unknown>> }
  /** Only the attributes given change. */
  | { readonly kind: 'Update'; readonly attributes: Readonly<Record<string, unknown>> }
  | { readonly kind: 'Delete' };

export interface AttributesEntity {
  /** The noun in messages and paths (`field-group`). */
  readonly noun: string;
  /** The stream category, id sequence and permission module, when not the noun (`fieldGroup`). */
  readonly category?: string;
  /** The key of the integer id in every event's data (`categoryId`). */
  readonly idKey: string;
  readonly events: { readonly created: string; readonly updated: string; readonly deleted: string };
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function attributesDecider(
  entity: AttributesEntity,
): Decider<AttributesState, AttributesCommand, DomainEvent> {
  const { noun, idKey, events } = entity;
  return {
    initialState: { status: 'none', id: 0, attributes: {} },

    decide(command, state) {
      if (command.kind === 'Create') {
        if (state.status !== 'none')
          throw new PlatformError('conflict', `${noun} ${state.id} already exists`);
        return [{ type: events.created, data: { [idKey]: command.id, ...command.attributes } }];
      }
      if (state.status !== 'active') throw new PlatformError('not_found', `${noun} not found`);
      if (command.kind === 'Delete') return [{ type: events.deleted, data: { [idKey]: state.id } }];
      const changed = Object.fromEntries(
        Object.entries(command.attributes).filter(
          ([key, value]) => value !== undefined && !sameJson(value, state.attributes[key]),
        ),
      );
      return Object.keys(changed).length === 0
        ? []
        : [{ type: events.updated, data: { [idKey]: state.id, ...changed } }];
    },

    evolve(state, event) {
      const { [idKey]: id, ...attributes } = event.data as Record<string, unknown>;
      switch (event.type) {
        case events.created:
          return { status: 'active', id: Number(id), attributes };
        case events.updated:
          return { ...state, attributes: { ...state.attributes, ...attributes } };
        case events.deleted:
          return { ...state, status: 'deleted' };
        default:
          return state;
      }
    },
  };
}

/** An entity whose events are `<Prefix>Created`, `<Prefix>Updated` and `<Prefix>Deleted`. */
function attributesEntity(
  noun: string,
  eventPrefix: string,
  idKey: string,
  category?: string,
): AttributesEntity {
  return {
    noun,
    ...(category !== undefined && { category }),
    idKey,
    events: {
      created: `${eventPrefix}Created`,
      updated: `${eventPrefix}Updated`,
      deleted: `${eventPrefix}Deleted`,
    },
  };
}

export const CATEGORY = attributesEntity('category', 'Category', 'categoryId');
export const TEAM = attributesEntity('team', 'Team', 'teamId');
export const MENU = attributesEntity('menu', 'Menu', 'menuId');
export const FIELD_GROUP = attributesEntity('field-group', 'FieldGroup', 'fieldGroupId', 'fieldGroup');
export const LABEL = attributesEntity('label', 'Label', 'labelId');
export const SEGMENT = attributesEntity('segment', 'Segment', 'segmentId');
export const DATA_STRUCTURE = attributesEntity(
  'data-structure',
  'DataStructure',
  'dataStructureId',
  'dataStructure',
);
export const COLUMN_DATA_TRANSFORM = attributesEntity(
  'ai/column-data-transform',
  'ColumnDataTransform',
  'transformId',
  'columnDataTransform',
);
export const COLUMN_DATA_VALIDATION = attributesEntity(
  'ai/column-data-validation',
  'ColumnDataValidation',
  'validationId',
  'columnDataValidation',
);
export const COLUMN_DATA_VALIDATION_RESULT = attributesEntity(
  'ai/column-data-validation-result',
  'ColumnDataValidationResult',
  'validationResultId',
  'columnDataValidationResult',
);
