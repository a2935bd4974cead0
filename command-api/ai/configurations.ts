import { PlatformError } from '../../contracts/errors';
import type { FieldDefinition } from '../../contracts/fields';
import { streamName } from '../../contracts/streams';
import {
  attributesDecider,
  COLUMN_DATA_TRANSFORM,
  COLUMN_DATA_VALIDATION,
  COLUMN_DATA_VALIDATION_RESULT,
  type AttributesState,
} from '../kit/attributes';
import type { AggregateLoader } from '../kit/handler';
import { moduleFields } from '../structure/commands';

/** What the AI operations read of the saved configurations: the configuration as it is now, and its field. */

export const transformDecider = attributesDecider(COLUMN_DATA_TRANSFORM);
export const validationDecider = attributesDecider(COLUMN_DATA_VALIDATION);
export const validationResultDecider = attributesDecider(COLUMN_DATA_VALIDATION_RESULT);

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
