import { unknownReferences } from '../../contracts/ai-prompt';
import { PlatformError } from '../../contracts/errors';
import type { FieldDefinition } from '../../contracts/fields';
import { streamName } from '../../contracts/streams';
import {
  attributesDecider,
  COLUMN_DATA_TRANSFORM,
  COLUMN_DATA_VALIDATION,
  COLUMN_DATA_VALIDATION_RESULT,
  type AttributesCommand,
  type AttributesState,
} from '../kit/attributes';
import { withPersonalValues, type Decider, type DomainEvent } from '../kit/decider';
import type { AggregateLoader } from '../kit/handler';
import { moduleFields } from '../structure/commands';

/**
 * What the AI operations read and check of the saved configurations: the configuration as it is now, its
 * field, and the references of its prompt.
 */

export const transformDecider = attributesDecider(COLUMN_DATA_TRANSFORM);
export const validationDecider = attributesDecider(COLUMN_DATA_VALIDATION);
const validationResults = attributesDecider(COLUMN_DATA_VALIDATION_RESULT);
/** What a verdict says about its record's data: the value it checked and why. */
const VERDICT_PERSONAL_KEYS = ['checkedValue', 'reason'];

/**
 * Validation results, their checked value and reason sealed under their record's data key (they quote the
 * record's data), so erasing the record erases them.
 */
export const validationResultDecider: Decider<AttributesState, AttributesCommand, DomainEvent> = {
  ...validationResults,
  decide(command, state) {
    const recordId = command.kind === 'Create' ? command.attributes.recordId : state.attributes.recordId;
    return validationResults.decide(command, state).map((event) => {
      const data = event.data as Record<string, unknown>;
      const paths = VERDICT_PERSONAL_KEYS.filter((key) => data[key] !== undefined && data[key] !== null).map(
        (key) => [key],
      );
      return typeof recordId === 'number' && paths.length > 0
        ? withPersonalValues(event, { kind: 'record', id: recordId, paths })
        : event;
    });
  },
};

/** The field a saved configuration writes or checks, and its module's fields (404 when the field is gone). */
export async function configurationField(
  aggregates: AggregateLoader,
  tenant: string,
  configuration: AttributesState,
): Promise<{ field: FieldDefinition; fields: readonly FieldDefinition[] }> {
  const { moduleId, fieldId } = configuration.attributes as { moduleId: number; fieldId: number };
  const module = await moduleFields(aggregates, tenant, moduleId);
  const field = module?.fields.find((candidate) => candidate.fieldId === fieldId);
  if (!module || !field)
    throw new PlatformError('not_found', `the field ${fieldId} of module ${moduleId} no longer exists`);
  return { field, fields: module.fields };
}

/** A saved configuration as it is now (404 when it never was or was deleted). */
export async function activeConfiguration(
  aggregates: AggregateLoader,
  kind: 'transform' | 'validation',
  tenant: string,
  entityId: number,
): Promise<AttributesState> {
  const loaded =
    kind === 'transform'
      ? await aggregates.load(streamName('columnDataTransform', tenant, entityId), transformDecider)
      : await aggregates.load(streamName('columnDataValidation', tenant, entityId), validationDecider);
  if (loaded.state.status !== 'active')
    throw new PlatformError('not_found', `column-data ${kind} ${entityId} not found`);
  return loaded.state;
}

/** The module's field `fieldId`, checked to be of a type in `types` (a 400 naming the types otherwise). */
export async function targetField(
  aggregates: AggregateLoader,
  tenant: string,
  moduleId: number,
  fieldId: number,
  types: readonly string[],
): Promise<{ field: FieldDefinition; fields: readonly FieldDefinition[] }> {
  const module = await moduleFields(aggregates, tenant, moduleId);
  if (!module)
    throw new PlatformError('validation_failed', `module ${moduleId} does not exist`, [
      { path: 'moduleId', message: 'no such module' },
    ]);
  const field = module.fields.find((candidate) => candidate.fieldId === fieldId);
  if (!field)
    throw new PlatformError('validation_failed', `field ${fieldId} is not a field of module ${moduleId}`, [
      { path: 'fieldId', message: `not a field of module ${moduleId}` },
    ]);
  if (!types.includes(field.type))
    throw new PlatformError(
      'validation_failed',
      `field ${fieldId} is a ${field.type} field, an unsupported type here; supported: ${types.join(', ')}`,
      [{ path: 'fieldId', message: `unsupported type ${field.type}` }],
    );
  return { field, fields: module.fields };
}

/** Refuses a prompt that refers to something the module's records do not have. */
export function checkReferences(
  path: string,
  prompt: string | undefined,
  fields: readonly FieldDefinition[],
): void {
  if (prompt === undefined) return;
  const unknown = unknownReferences(
    prompt,
    fields.map((field) => field.key),
  );
  if (unknown.length > 0)
    throw new PlatformError(
      'validation_failed',
      `the ${path} refers to what the records do not have: ${unknown.map((name) => `{{${name}}}`).join(', ')}`,
      [{ path, message: `unknown references: ${unknown.join(', ')}` }],
    );
}
