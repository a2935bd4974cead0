import { PlatformError } from '../../contracts/errors';
import type { FieldChange, FieldValue, RecordEvent } from '../../contracts/events/records';
import type { FieldDefinition } from '../../contracts/fields';
import type { Decider } from '../kit/decider';
import { checkRecordValues, type RelationTargets } from './field-values';

export interface RecordState {
  readonly status: 'none' | 'active' | 'deleted';
  readonly recordId: number;
  readonly moduleId: number;
  readonly spaceId: number;
  readonly name: string;
  readonly fields: Readonly<Record<string, FieldValue>>;
  readonly labelIds: readonly number[];
}

export type RecordCommand =
  | {
      readonly kind: 'CreateRecord';
      readonly recordId: number;
      readonly moduleId: number;
      /** The module's space, or null when the module does not exist. */
      readonly moduleSpaceId: number | null;
      readonly name: string;
      readonly fields: Readonly<Record<string, FieldValue>>;
      /** The module's fields, which the values must fit. */
      readonly schema: readonly FieldDefinition[];
      readonly relations: RelationTargets;
    }
  | {
      readonly kind: 'UpdateRecord';
      readonly name?: string;
      readonly fields?: Readonly<Record<string, FieldValue>>;
      readonly schema: readonly FieldDefinition[];
      readonly relations: RelationTargets;
    }
  | { readonly kind: 'DeleteRecord' }
  /** `moduleActive`: whether the record's module still exists (the route reads it). */
  | { readonly kind: 'RestoreRecord'; readonly moduleActive: boolean }
  /** `labelExists`: whether the label is a live label of the record's system (the route reads it). */
  | { readonly kind: 'LabelRecord'; readonly labelId: number; readonly labelExists: boolean }
  | { readonly kind: 'UnlabelRecord'; readonly labelId: number }
  /** What the button's webhook answered (the route made the call). */
  | {
      readonly kind: 'RecordButtonPress';
      readonly fieldId: number;
      readonly ok: boolean;
      readonly status: number | null;
      readonly durationMs: number;
      readonly error?: string;
    };

function sameValue(a: FieldValue | undefined, b: FieldValue | undefined): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** The changes an update makes; setting a field to null removes it. */
function changesOf(
  state: RecordState,
  name: string | undefined,
  fields: Readonly<Record<string, FieldValue>> | undefined,
): FieldChange[] {
  const changes: FieldChange[] = [];
  if (name !== undefined && name !== state.name) changes.push({ field: 'name', from: state.name, to: name });
  for (const [key, value] of Object.entries(fields ?? {})) {
    // Own keys only: a field named like an Object.prototype member (`constructor`, `toString`) is new, not a function.
    const current = Object.hasOwn(state.fields, key) ? state.fields[key] : undefined;
    if (!sameValue(current, value))
      changes.push({ field: `fields.${key}`, from: current ?? null, to: value });
  }
  return changes;
}

export const recordDecider: Decider<RecordState, RecordCommand, RecordEvent> = {
  initialState: { status: 'none', recordId: 0, moduleId: 0, spaceId: 0, name: '', fields: {}, labelIds: [] },

  decide(command, state) {
    if (command.kind === 'CreateRecord') {
      if (state.status !== 'none')
        throw new PlatformError('conflict', `record ${state.recordId} already exists`);
      if (command.moduleSpaceId === null) {
        throw new PlatformError('validation_failed', `module ${command.moduleId} does not exist`, [
          { path: 'moduleId', message: 'no such module' },
        ]);
      }
      checkRecordValues(command.schema, command.fields, command.relations, 'create');
      const fields = Object.fromEntries(Object.entries(command.fields).filter(([, value]) => value !== null));
      return [
        {
          type: 'RecordCreated',
          data: {
            recordId: command.recordId,
            moduleId: command.moduleId,
            spaceId: command.moduleSpaceId,
            name: command.name,
            fields,
          },
        },
      ];
    }
    if (command.kind === 'RestoreRecord') {
      if (state.status === 'none') throw new PlatformError('not_found', 'record not found');
      if (state.status === 'active')
        throw new PlatformError('conflict', `record ${state.recordId} is not deleted`);
      if (!command.moduleActive)
        throw new PlatformError(
          'conflict',
          `module ${state.moduleId} of record ${state.recordId} was deleted`,
        );
      const { recordId, moduleId, spaceId } = state;
      return [{ type: 'RecordRestored', data: { recordId, moduleId, spaceId } }];
    }
    if (state.status !== 'active') throw new PlatformError('not_found', 'record not found');
    if (command.kind === 'DeleteRecord') {
      return [
        {
          type: 'RecordDeleted',
          data: { recordId: state.recordId, moduleId: state.moduleId, spaceId: state.spaceId },
        },
      ];
    }
    if (command.kind === 'LabelRecord') {
      if (!command.labelExists) throw new PlatformError('not_found', `label ${command.labelId} not found`);
      return state.labelIds.includes(command.labelId)
        ? []
        : [{ type: 'RecordLabelled', data: { recordId: state.recordId, labelId: command.labelId } }];
    }
    if (command.kind === 'RecordButtonPress') {
      const { kind: _kind, ...outcome } = command;
      return [{ type: 'ButtonPressed', data: { recordId: state.recordId, ...outcome } }];
    }
    if (command.kind === 'UnlabelRecord') {
      if (!state.labelIds.includes(command.labelId))
        throw new PlatformError(
          'not_found',
          `record ${state.recordId} does not carry label ${command.labelId}`,
        );
      return [{ type: 'RecordUnlabelled', data: { recordId: state.recordId, labelId: command.labelId } }];
    }
    if (command.fields) checkRecordValues(command.schema, command.fields, command.relations, 'update');
    const changes = changesOf(state, command.name, command.fields);
    return changes.length === 0
      ? []
      : [{ type: 'RecordUpdated', data: { recordId: state.recordId, changes } }];
  },

  evolve(state, event) {
    switch (event.type) {
      case 'RecordCreated':
        return { status: 'active', ...event.data, labelIds: [] };
      case 'RecordUpdated': {
        let name = state.name;
        const fields: Record<string, FieldValue> = { ...state.fields };
        for (const change of event.data.changes) {
          if (change.field === 'name') name = String(change.to);
          else if (change.to === null) delete fields[change.field.slice('fields.'.length)];
          else fields[change.field.slice('fields.'.length)] = change.to;
        }
        return { ...state, name, fields };
      }
      case 'RecordDeleted':
        return { ...state, status: 'deleted' };
      case 'RecordRestored':
        return { ...state, status: 'active' };
      case 'ButtonPressed':
        return state;
      case 'RecordLabelled':
        return { ...state, labelIds: [...state.labelIds, event.data.labelId] };
      case 'RecordUnlabelled':
        return { ...state, labelIds: state.labelIds.filter((labelId) => labelId !== event.data.labelId) };
    }
  },
};
