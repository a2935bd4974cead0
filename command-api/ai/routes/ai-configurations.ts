import {
  createTransformBody,
  createValidationBody,
  createValidationResultBody,
  DEFAULT_MAX_OUTPUT_TOKENS,
  TRANSFORM_OPERATIONS,
  updateTransformBody,
  updateValidationBody,
  updateValidationResultBody,
  VALIDATION_OPERATIONS,
  VALIDATION_RESULT_OPERATIONS,
} from '../../../contracts/api/ai';
import { TRANSFORMABLE_TYPES, VALIDATABLE_TYPES } from '../../../contracts/ai-output';
import { PlatformError } from '../../../contracts/errors';
import { streamName } from '../../../contracts/streams';
import {
  COLUMN_DATA_TRANSFORM,
  COLUMN_DATA_VALIDATION,
  COLUMN_DATA_VALIDATION_RESULT,
  type AttributesState,
} from '../../kit/attributes';
import { activeConfiguration, checkReferences, targetField, validationDecider } from '../configurations';
import { recordDecider } from '../../records/domain/record';
import type { AggregateLoader } from '../../kit/handler';
import { attributesResource } from '../../kit/attributes-resource';
import { moduleFields } from '../../structure/commands';

/** The answer shape of an AI configuration: its attributes, with its id as `id` and as the spec's `entityId`. */
function configurationView(state: AttributesState): Record<string, unknown> {
  const { inputDigest: _inputDigest, ...attributes } = state.attributes;
  return { id: state.id, entityId: state.id, ...attributes };
}

/** The saved transforms, validations and validation results. */
export function aiConfigurationResources(aggregates: AggregateLoader, now: () => Date) {
  /** A changed prompt or rule refers only to what the records of the configuration's module have. */
  async function checkChangedPrompt(
    kind: 'transform' | 'validation',
    path: string,
    prompt: string | undefined,
    tenant: string,
    entityId: number,
  ): Promise<void> {
    if (prompt === undefined) return;
    const current = await activeConfiguration(aggregates, kind, tenant, entityId);
    const module = await moduleFields(aggregates, tenant, current.attributes.moduleId as number);
    checkReferences(path, prompt, module?.fields ?? []);
  }

  const transform = attributesResource({
    entity: COLUMN_DATA_TRANSFORM,
    idParam: 'entityId',
    operations: TRANSFORM_OPERATIONS,
    createBody: createTransformBody,
    updateBody: updateTransformBody,
    async checkCreate(body, tenant) {
      const { field, fields } = await targetField(
        aggregates,
        tenant,
        body.moduleId,
        body.fieldId,
        TRANSFORMABLE_TYPES,
      );
      checkReferences('prompt', body.prompt, fields);
      return {
        name: body.name,
        moduleId: body.moduleId,
        fieldId: body.fieldId,
        outputType: field.type,
        prompt: body.prompt,
        model: body.model ?? null,
        format: body.format ?? null,
        onlyEmpty: body.onlyEmpty ?? false,
        maxOutputTokens: body.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
        temperature: body.temperature ?? 0,
        description: body.description ?? null,
      };
    },
    async checkUpdate(body, tenant, entityId) {
      await checkChangedPrompt('transform', 'prompt', body.prompt, tenant, entityId);
      return body;
    },
  });

  const validation = attributesResource({
    entity: COLUMN_DATA_VALIDATION,
    idParam: 'entityId',
    operations: VALIDATION_OPERATIONS,
    createBody: createValidationBody,
    updateBody: updateValidationBody,
    async checkCreate(body, tenant) {
      const { fields } = await targetField(
        aggregates,
        tenant,
        body.moduleId,
        body.fieldId,
        VALIDATABLE_TYPES,
      );
      checkReferences('rule', body.rule, fields);
      return {
        name: body.name,
        moduleId: body.moduleId,
        fieldId: body.fieldId,
        rule: body.rule,
        model: body.model ?? null,
        severity: body.severity ?? 'warning',
        maxOutputTokens: body.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
        description: body.description ?? null,
      };
    },
    async checkUpdate(body, tenant, entityId) {
      await checkChangedPrompt('validation', 'rule', body.rule, tenant, entityId);
      return body;
    },
  });

  const validationResult = attributesResource({
    entity: COLUMN_DATA_VALIDATION_RESULT,
    idParam: 'entityId',
    operations: VALIDATION_RESULT_OPERATIONS,
    createBody: createValidationResultBody,
    updateBody: updateValidationResultBody,
    async checkCreate(body, tenant) {
      const checked = await validationOf(aggregates, tenant, body.validationId);
      const record = await aggregates.load(streamName('record', tenant, body.recordId), recordDecider);
      if (record.state.status !== 'active' || record.state.moduleId !== checked.moduleId)
        throw new PlatformError(
          'validation_failed',
          `record ${body.recordId} is not a record of module ${checked.moduleId}`,
          [{ path: 'recordId', message: `no such record in module ${checked.moduleId}` }],
        );
      const module = await moduleFields(aggregates, tenant, checked.moduleId);
      const key = module?.fields.find((field) => field.fieldId === checked.fieldId)?.key;
      return {
        validationId: body.validationId,
        recordId: body.recordId,
        fieldId: checked.fieldId,
        moduleId: checked.moduleId,
        valid: body.valid,
        reason: body.reason ?? null,
        severity: checked.severity,
        source: 'manual',
        checkedValue: key === undefined ? null : (record.state.fields[key] ?? null),
        checkedAt: now().toISOString(),
        inputDigest: null,
      };
    },
    // A verdict changed by hand is a manual one, as of now.
    checkUpdate: async (body) => ({ ...body, source: 'manual', checkedAt: now().toISOString() }),
  });

  return {
    transform: { ...transform, view: configurationView },
    validation: { ...validation, view: configurationView },
    validationResult: { ...validationResult, view: configurationView },
  };
}

/** The validation a result is for: its module, field and severity (a 400 when it does not exist). */
async function validationOf(aggregates: AggregateLoader, tenant: string, validationId: number) {
  const loaded = await aggregates.load(
    streamName('columnDataValidation', tenant, validationId),
    validationDecider,
  );
  if (loaded.state.status !== 'active')
    throw new PlatformError('validation_failed', `column-data validation ${validationId} does not exist`, [
      { path: 'validationId', message: 'no such validation' },
    ]);
  const { moduleId, fieldId, severity } = loaded.state.attributes;
  return { moduleId: moduleId as number, fieldId: fieldId as number, severity: severity as string };
}
