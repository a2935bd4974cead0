/**
 * AI features: saved column-data transforms (a prompt that rewrites one field of a module's records),
 * column-data validations (a rule a model checks a field against) and their results; executing and
 * previewing them, generating modules, fields and field values; the system's AI token balance.
 */
import { z } from 'zod';
import { entityIdSchema } from '../entity-id';
import { operation } from './operation';
import { updateOf } from './catalogue';
import {
  auditFields,
  entityId,
  entityOperations,
  listed,
  pathIds,
  READ_ERRORS,
  WRITE_ERRORS,
} from './shared';

export const MAX_PROMPT_CHARS = 8000;
export const MAX_FORMAT_CHARS = 1000;
export const MAX_EXECUTE_IDS = 10_000;
export const DEFAULT_MAX_OUTPUT_TOKENS = 256;
export const MAX_OUTPUT_TOKENS = 4000;
export const VALIDATION_SEVERITIES = ['info', 'warning', 'error'] as const;

/** What each AI route may answer beyond the common errors. */
export const AI_ERRORS = {
  402: {
    description: 'The AI token balance cannot cover the estimate of the call (`E4021`); nothing was spent.',
  },
  501: { description: 'No language model is configured for this system (`E5010`): the message says how.' },
  502: { description: 'The model answered something unusable, or refused the request (`E5020`).' },
  503: { description: 'The model is unavailable or rate limited (`E5030`, `Retry-After` when known).' },
  504: { description: 'The model did not answer in time (`E5041`).' },
} as const;

const name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const description = z.string().max(5000, 'must be at most 5000 characters').nullable();
const prompt = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(MAX_PROMPT_CHARS, `must be at most ${MAX_PROMPT_CHARS} characters`);
const model = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .nullable()
  .meta({ description: "The model asked (null: the system's configured model)." });
const maxOutputTokens = z
  .int()
  .min(1)
  .max(MAX_OUTPUT_TOKENS)
  .meta({ description: `The most tokens one answer may take (default ${DEFAULT_MAX_OUTPUT_TOKENS}).` });
const temperature = z.number().min(0).max(2).meta({ description: 'Sampling temperature (default 0).' });

export const PROMPT_REFERENCES_DESCRIPTION =
  'References to the record in double braces: `{{name}}` (the record name), `{{id}}`, `{{value}}` (the ' +
  "target field's current value) and `{{<field key>}}` for any field of the module; every reference must " +
  'name one of these.';

// Column-data transforms

const transformFields = {
  name,
  moduleId: entityIdSchema.meta({ description: 'The module whose records it rewrites.' }),
  fieldId: entityIdSchema.meta({
    description:
      'The field it rewrites: text, long_text, number, decimal, date, datetime, checkbox, select, multi_select, email, url or phone.',
  }),
  prompt: prompt.meta({ description: `What to write into the field. ${PROMPT_REFERENCES_DESCRIPTION}` }),
  model,
  format: z
    .string()
    .trim()
    .max(MAX_FORMAT_CHARS)
    .nullable()
    .meta({ description: 'Further instructions on the output (`at most 5 words`, `title case`).' }),
  onlyEmpty: z
    .boolean()
    .meta({ description: 'Only records whose field is empty are rewritten (default false).' }),
  maxOutputTokens,
  temperature,
  description,
};
export const createTransformBody = z
  .strictObject({
    ...transformFields,
    model: model.optional(),
    format: transformFields.format.optional(),
    onlyEmpty: transformFields.onlyEmpty.optional(),
    maxOutputTokens: maxOutputTokens.optional(),
    temperature: temperature.optional(),
    description: description.optional(),
  })
  .meta({ id: 'ColumnDataTransformCreate' });
// A transform stays with its module and field.
const { moduleId: _transformModule, fieldId: _transformField, ...changeableTransform } = transformFields;
export const updateTransformBody = updateOf(changeableTransform).meta({ id: 'ColumnDataTransformUpdate' });
const transformCore = {
  id: entityId,
  entityId: entityId.meta({ description: 'The same as `id` (the spec’s name).' }),
  name: z.string(),
  moduleId: entityId,
  fieldId: entityId,
  outputType: z.string().meta({ description: "The target field's type: what the answer is read as." }),
  prompt: z.string(),
  model: z.string().nullable(),
  format: z.string().nullable(),
  onlyEmpty: z.boolean(),
  maxOutputTokens: z.int(),
  temperature: z.number(),
  description: z.string().nullable(),
};
export const TRANSFORM_OPERATIONS = entityOperations({
  noun: 'ai/column-data-transform',
  label: 'column-data transform',
  name: 'ColumnDataTransform',
  plural: 'ColumnDataTransforms',
  tag: 'ai',
  idName: 'entityId',
  createBody: createTransformBody,
  updateBody: updateTransformBody,
  written: z.object(transformCore).meta({ id: 'ColumnDataTransformWritten' }),
  read: z.object({ ...transformCore, ...auditFields }).meta({ id: 'ColumnDataTransform' }),
  createWithId: true,
  examples: {
    create: {
      name: 'Short summary',
      moduleId: 3,
      fieldId: 12,
      prompt: 'Summarise in one sentence: {{description}}',
      format: 'at most 20 words',
    },
  },
});

// Column-data validations

const validationFields = {
  name,
  moduleId: entityIdSchema.meta({ description: 'The module whose records it checks.' }),
  fieldId: entityIdSchema.meta({ description: 'The field it checks.' }),
  rule: prompt.meta({
    description: `The rule the value must follow, in words. ${PROMPT_REFERENCES_DESCRIPTION}`,
  }),
  model,
  severity: z
    .enum(VALIDATION_SEVERITIES)
    .meta({ description: 'How much a failed check matters (default `warning`).' }),
  maxOutputTokens,
  description,
};
export const createValidationBody = z
  .strictObject({
    ...validationFields,
    model: model.optional(),
    severity: validationFields.severity.optional(),
    maxOutputTokens: maxOutputTokens.optional(),
    description: description.optional(),
  })
  .meta({ id: 'ColumnDataValidationCreate' });
const { moduleId: _validationModule, fieldId: _validationField, ...changeableValidation } = validationFields;
export const updateValidationBody = updateOf(changeableValidation).meta({ id: 'ColumnDataValidationUpdate' });
const validationCore = {
  id: entityId,
  entityId: entityId.meta({ description: 'The same as `id` (the spec’s name).' }),
  name: z.string(),
  moduleId: entityId,
  fieldId: entityId,
  rule: z.string(),
  model: z.string().nullable(),
  severity: z.enum(VALIDATION_SEVERITIES),
  maxOutputTokens: z.int(),
  description: z.string().nullable(),
};
export const VALIDATION_OPERATIONS = entityOperations({
  noun: 'ai/column-data-validation',
  label: 'column-data validation',
  name: 'ColumnDataValidation',
  plural: 'ColumnDataValidations',
  tag: 'ai',
  idName: 'entityId',
  createBody: createValidationBody,
  updateBody: updateValidationBody,
  written: z.object(validationCore).meta({ id: 'ColumnDataValidationWritten' }),
  read: z.object({ ...validationCore, ...auditFields }).meta({ id: 'ColumnDataValidation' }),
  examples: {
    create: {
      name: 'Plausible e-mail',
      moduleId: 3,
      fieldId: 14,
      rule: 'The value is a business e-mail address, not a free mail provider.',
      severity: 'warning',
    },
  },
});

// Column-data validation results

const reason = z.string().trim().max(2000, 'must be at most 2000 characters').nullable();
export const createValidationResultBody = z
  .strictObject({
    validationId: entityIdSchema.meta({ description: 'The validation the verdict is for.' }),
    recordId: entityIdSchema.meta({ description: "The record (of the validation's module)." }),
    valid: z.boolean().meta({ description: 'Whether the value follows the rule.' }),
    reason: reason.optional().meta({ description: 'Why, in a sentence.' }),
  })
  .meta({ id: 'ColumnDataValidationResultCreate' });
export const updateValidationResultBody = updateOf({ valid: z.boolean(), reason }).meta({
  id: 'ColumnDataValidationResultUpdate',
});
const validationResultCore = {
  id: entityId,
  entityId: entityId.meta({ description: 'The same as `id` (the spec’s name).' }),
  validationId: entityId,
  recordId: entityId,
  fieldId: entityId,
  moduleId: entityId,
  valid: z.boolean(),
  reason: z.string().nullable(),
  severity: z.enum(VALIDATION_SEVERITIES),
  source: z
    .enum(['ai', 'manual'])
    .meta({ description: '`ai`: written by an execute; `manual`: written or last changed through the API.' }),
  checkedValue: z.unknown().meta({ description: 'The field value the verdict is about.' }),
  checkedAt: z.string().meta({ description: 'ISO 8601 time of the verdict.' }),
};
export const VALIDATION_RESULT_OPERATIONS = entityOperations({
  noun: 'ai/column-data-validation-result',
  label: 'column-data validation result',
  name: 'ColumnDataValidationResult',
  plural: 'ColumnDataValidationResults',
  tag: 'ai',
  idName: 'entityId',
  createBody: createValidationResultBody,
  updateBody: updateValidationResultBody,
  written: z.object(validationResultCore).meta({ id: 'ColumnDataValidationResultWritten' }),
  read: z.object({ ...validationResultCore, ...auditFields }).meta({ id: 'ColumnDataValidationResult' }),
  examples: { create: { validationId: 2, recordId: 41, valid: false, reason: 'A free mail address.' } },
});

// The AI token balance

export const topUpBody = z
  .strictObject({
    tokens: z.int().min(1).max(1_000_000_000_000).meta({ description: 'Tokens added to the balance.' }),
    note: z.string().trim().max(500).optional().meta({ description: 'Why (an invoice number…).' }),
  })
  .meta({ id: 'AiTopUp' });
const balance = z
  .object({
    tokens: z.int().meta({ description: 'Tokens left: added minus spent.' }),
    reserved: z.int().meta({ description: 'Tokens held by calls under way (their estimates).' }),
    available: z.int().meta({ description: 'What a new call may use: `tokens` minus `reserved`.' }),
    toppedUp: z.int().meta({ description: 'Tokens added, ever.' }),
    spent: z.int().meta({ description: 'Tokens spent, ever.' }),
  })
  .meta({ id: 'AiBalance' });
export const getAiBalance = operation({
  operationId: 'getAiBalance',
  method: 'get',
  path: '/ai/balance',
  tag: 'ai',
  summary: "Read the system's AI token balance",
  description: 'As of every write acknowledged before the call.',
  responses: { 200: { description: 'The balance.', schema: balance }, ...READ_ERRORS },
  security: 'token',
});
export const topUpAiBalance = operation({
  operationId: 'topUpAiBalance',
  method: 'post',
  path: '/ai/balance/top-up',
  tag: 'ai',
  summary: 'Add tokens to the AI token balance (administrators)',
  description: '`Idempotency-Key` makes a retry safe.',
  body: { schema: topUpBody, example: { tokens: 100000, note: 'invoice 2026-114' } },
  responses: { 201: { description: 'The balance after it.', schema: balance }, ...WRITE_ERRORS },
  security: 'token',
});
const month = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'must be a month as YYYY-MM');
export const usageQuery = z.strictObject({
  from: month.optional().meta({ description: 'The first month counted (`YYYY-MM`, UTC).' }),
  to: month.optional().meta({ description: 'The last month counted (`YYYY-MM`, UTC).' }),
  group_by: z
    .enum([
      'configuration',
      'user',
      'operation',
      'configuration,user',
      'configuration,operation',
      'user,operation',
    ])
    .optional()
    .meta({ description: 'What the totals are per (default `configuration,user`).' }),
});
const usageRow = z
  .object({
    configuration: z
      .object({ kind: z.enum(['transform', 'validation', 'field']), entityId: entityId })
      .nullable()
      .meta({ description: 'The transform or validation (null: previews of prompts and generation).' }),
    userId: z.string().nullable(),
    operation: z.string().nullable(),
    calls: z.int(),
    promptTokens: z.int(),
    completionTokens: z.int(),
    tokens: z.int(),
  })
  .meta({ id: 'AiUsageRow' });
export const getAiUsage = operation({
  operationId: 'getAiUsage',
  method: 'get',
  path: '/ai/usage',
  tag: 'ai',
  summary: 'AI token spending per configuration and user',
  query: usageQuery,
  responses: {
    200: {
      description: 'Totals, most spent first.',
      schema: z
        .object({ items: z.array(usageRow), total: usageRow.pick({ calls: true, tokens: true }) })
        .meta({ id: 'AiUsage' }),
    },
    ...READ_ERRORS,
  },
  security: 'token',
});

export const AI_OPERATIONS = [
  ...listed(TRANSFORM_OPERATIONS),
  ...listed(VALIDATION_OPERATIONS),
  ...listed(VALIDATION_RESULT_OPERATIONS),
  getAiBalance,
  topUpAiBalance,
  getAiUsage,
];

export const pathEntityId = pathIds({ entityId: 'The configuration.' });
