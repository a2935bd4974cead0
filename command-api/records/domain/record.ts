import { PlatformError } from '../../../contracts/errors';
import type { FieldChange, FieldValue, RecordEvent } from '../../../contracts/events/records';
import { isPersonalField, type FieldDefinition } from '../../../contracts/fields';
import { ERASED_VALUE, type DataPath } from '../../../contracts/personal-data';
import { MAX_FILES_PER_RECORD } from '../../../contracts/files';
import type { FileAttachedData } from '../../../contracts/events/files';
import { withPersonalValues, type Decider } from '../../kit/decider';
import { checkRecordValues, type RelationTargets } from './field-values';

export interface RecordState {
  readonly status: 'none' | 'active' | 'deleted';
  readonly recordId: number;
  readonly moduleId: number;
  readonly spaceId: number;
  readonly name: string;
  readonly fields: Readonly<Record<string, FieldValue>>;
  readonly labelIds: readonly number[];
  readonly files: readonly AttachedFile[];
  /** Its personal data was erased: its personal values read as erased, and it takes no new ones. */
  readonly erased: boolean;
}

/** A file of the record: its metadata (the bytes are in the blob store under `blobKey`). */
export type AttachedFile = Omit<FileAttachedData, 'recordId'>;

/** An uploaded file, already in the blob store, to attach. */
export type UploadedFile = Omit<AttachedFile, 'fieldId' | 'weight'>;

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
  /** `fields`: the keys whose values had been sealed (the route finds them in the stored events). */
  | { readonly kind: 'EraseRecord'; readonly reason: string; readonly fields: readonly string[] }
  /** `moduleActive`: whether the record's module still exists (the route reads it). */
  | { readonly kind: 'RestoreRecord'; readonly moduleActive: boolean }
  /** `labelExists`: whether the label is a live label of the record's system (the route reads it). */
  | { readonly kind: 'LabelRecord'; readonly labelId: number; readonly labelExists: boolean }
  | { readonly kind: 'UnlabelRecord'; readonly labelId: number }
  /** `field`: the file field the file fills (looked up in the module by the route), or null. */
  | {
      readonly kind: 'AttachFile';
      readonly file: UploadedFile;
      readonly fieldId: number | null;
      readonly schema: readonly FieldDefinition[];
    }
  | { readonly kind: 'DetachFile'; readonly fileId: number; readonly schema: readonly FieldDefinition[] }
  | {
      readonly kind: 'SetFileWeights';
      readonly weights: readonly { readonly fileId: number; readonly weight: number }[];
    }
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

/** The keys of the module's fields whose values are personal data. */
function personalKeys(schema: readonly FieldDefinition[]): ReadonlySet<string> {
  return new Set(schema.filter(isPersonalField).map((field) => field.key));
}

/** The record's event, its personal values (at `paths`) marked to be sealed under the record's key. */
function personalOf<Event extends RecordEvent>(
  recordId: number,
  event: Event,
  paths: readonly DataPath[],
): Event {
  return withPersonalValues(event, { kind: 'record', id: recordId, paths });
}

/** An update's changes of the name or of a personal field: both what they were and what they became. */
function updatePersonalPaths(changes: readonly FieldChange[], personal: ReadonlySet<string>): DataPath[] {
  return changes.flatMap((change, index) =>
    change.field === 'name' || personal.has(change.field.slice('fields.'.length))
      ? [
          ['changes', index, 'from'],
          ['changes', index, 'to'],
        ]
      : [],
  );
}

/** The file ids a file field of the record holds. */
function fileIdsIn(state: RecordState, key: string): number[] {
  const value = Object.hasOwn(state.fields, key) ? state.fields[key] : undefined;
  return Array.isArray(value) ? value.filter((id): id is number => typeof id === 'number') : [];
}

function fileFieldOf(schema: readonly FieldDefinition[], fieldId: number): FieldDefinition {
  const field = schema.find((candidate) => candidate.fieldId === fieldId);
  if (field?.type === 'file') return field;
  const problem = field
    ? `field ${fieldId} is a ${field.type} field, not a file field`
    : `field ${fieldId} is not a field of the record's module`;
  throw new PlatformError('validation_failed', problem, [{ path: 'fieldId', message: problem }]);
}

function attachFile(
  state: RecordState,
  command: Extract<RecordCommand, { kind: 'AttachFile' }>,
): RecordEvent[] {
  if (state.files.length >= MAX_FILES_PER_RECORD)
    throw new PlatformError(
      'conflict',
      `record ${state.recordId} already has ${MAX_FILES_PER_RECORD} files, the most a record can have`,
    );
  const field = command.fieldId === null ? null : fileFieldOf(command.schema, command.fieldId);
  const { file } = command;
  const weight = state.files.reduce((next, attached) => Math.max(next, attached.weight + 1), 0);
  // A file's name often names the person it is about: sealed, as the record's own name is.
  const events: RecordEvent[] = [
    personalOf(
      state.recordId,
      { type: 'FileAttached', data: { recordId: state.recordId, ...file, fieldId: command.fieldId, weight } },
      [['name']],
    ),
  ];
  if (field) {
    const before = fileIdsIn(state, field.key);
    events.push({
      type: 'RecordUpdated',
      data: {
        recordId: state.recordId,
        changes: [
          {
            field: `fields.${field.key}`,
            from: before.length > 0 ? before : null,
            to: [...before, file.fileId],
          },
        ],
      },
    });
  }
  return events;
}

function detachFile(
  state: RecordState,
  command: Extract<RecordCommand, { kind: 'DetachFile' }>,
): RecordEvent[] {
  const file = state.files.find((attached) => attached.fileId === command.fileId);
  if (!file) throw new PlatformError('not_found', `record ${state.recordId} has no file ${command.fileId}`);
  const events: RecordEvent[] = [
    {
      type: 'FileDetached',
      data: { recordId: state.recordId, fileId: file.fileId, fieldId: file.fieldId, blobKey: file.blobKey },
    },
  ];
  // The field may have been removed from the module since: then only the file goes.
  const field = command.schema.find(
    (candidate) => candidate.fieldId === file.fieldId && candidate.type === 'file',
  );
  const before = field ? fileIdsIn(state, field.key) : [];
  if (field && before.includes(file.fileId)) {
    const after = before.filter((fileId) => fileId !== file.fileId);
    if (after.length === 0 && field.required)
      throw new PlatformError(
        'conflict',
        `field ${field.key} is required: upload another file to it before removing its last one`,
      );
    events.push({
      type: 'RecordUpdated',
      data: {
        recordId: state.recordId,
        changes: [{ field: `fields.${field.key}`, from: before, to: after.length > 0 ? after : null }],
      },
    });
  }
  return events;
}

function setFileWeights(
  state: RecordState,
  command: Extract<RecordCommand, { kind: 'SetFileWeights' }>,
): RecordEvent[] {
  const current = new Map(state.files.map((file) => [file.fileId, file.weight]));
  const problems = command.weights.flatMap(({ fileId }, index) => {
    if (!current.has(fileId))
      return [{ path: `files.${index}.fileId`, message: `record ${state.recordId} has no file ${fileId}` }];
    if (command.weights.findIndex((other) => other.fileId === fileId) !== index)
      return [{ path: `files.${index}.fileId`, message: `file ${fileId} is named twice` }];
    return [];
  });
  if (problems.length > 0)
    throw new PlatformError(
      'validation_failed',
      `invalid file weights: ${problems.map((problem) => problem.message).join('; ')}`,
      problems,
    );
  const weights = command.weights.filter(({ fileId, weight }) => current.get(fileId) !== weight);
  return weights.length === 0
    ? []
    : [
        {
          type: 'FileWeightsSet',
          data: {
            recordId: state.recordId,
            weights: weights.map(({ fileId, weight }) => ({ fileId, weight })),
          },
        },
      ];
}

export const recordDecider: Decider<RecordState, RecordCommand, RecordEvent> = {
  initialState: {
    status: 'none',
    recordId: 0,
    moduleId: 0,
    spaceId: 0,
    name: '',
    fields: {},
    labelIds: [],
    files: [],
    erased: false,
  },

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
      const personal = personalKeys(command.schema);
      return [
        personalOf(
          command.recordId,
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
          [
            ['name'],
            ...Object.keys(fields)
              .filter((key) => personal.has(key))
              .map((key) => ['fields', key]),
          ],
        ),
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
    if (command.kind === 'EraseRecord') {
      if (state.status === 'none') throw new PlatformError('not_found', 'record not found');
      if (state.erased) return [];
      const { recordId, moduleId, spaceId } = state;
      return [
        personalOf(
          recordId,
          {
            type: 'RecordErased',
            data: { recordId, moduleId, spaceId, reason: command.reason, fields: [...command.fields] },
          },
          [],
        ),
      ];
    }
    if (state.status !== 'active') throw new PlatformError('not_found', 'record not found');
    if (state.erased && (command.kind === 'UpdateRecord' || command.kind === 'AttachFile'))
      throw new PlatformError(
        'gone',
        `the personal data of record ${state.recordId} was erased: it takes no new values or files`,
      );
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
    if (command.kind === 'AttachFile') return attachFile(state, command);
    if (command.kind === 'DetachFile') return detachFile(state, command);
    if (command.kind === 'SetFileWeights') return setFileWeights(state, command);
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
      : [
          personalOf(
            state.recordId,
            { type: 'RecordUpdated', data: { recordId: state.recordId, changes } },
            updatePersonalPaths(changes, personalKeys(command.schema)),
          ),
        ];
  },

  evolve(state, event) {
    switch (event.type) {
      case 'RecordCreated':
        return { status: 'active', ...event.data, labelIds: [], files: [], erased: false };
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
      case 'RecordErased': {
        const fields: Record<string, FieldValue> = { ...state.fields };
        for (const key of event.data.fields) if (Object.hasOwn(fields, key)) fields[key] = ERASED_VALUE;
        return {
          ...state,
          erased: true,
          name: ERASED_VALUE,
          fields,
          files: state.files.map((file) => ({ ...file, name: ERASED_VALUE })),
        };
      }
      case 'ButtonPressed':
        return state;
      case 'RecordLabelled':
        return { ...state, labelIds: [...state.labelIds, event.data.labelId] };
      case 'RecordUnlabelled':
        return { ...state, labelIds: state.labelIds.filter((labelId) => labelId !== event.data.labelId) };
      case 'FileAttached': {
        const { recordId: _recordId, ...file } = event.data;
        return { ...state, files: [...state.files, file] };
      }
      case 'FileDetached':
        return { ...state, files: state.files.filter((file) => file.fileId !== event.data.fileId) };
      case 'FileWeightsSet': {
        const weights = new Map(event.data.weights.map(({ fileId, weight }) => [fileId, weight]));
        return {
          ...state,
          files: state.files.map((file) => ({ ...file, weight: weights.get(file.fileId) ?? file.weight })),
        };
      }
    }
  },
};
