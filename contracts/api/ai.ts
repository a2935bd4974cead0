/**
 * AI features: saved column-data transforms (a prompt that rewrites one field of a module's records),
 * column-data validations (a rule a model checks a field against) and their results; executing and
 * previewing them, generating modules, fields and field values; the system's AI token balance.
 */
import { z } from 'zod';
import { entityIdSchema } from '../entity-id';
import { isValidTenant } from '../streams';
import { FIELD_TYPES } from '../fields';
import { operation } from './operation';
import { updateOf } from './catalogue';
import {
  auditFields,
  entityId,
  entityOperations,
  idAsText,
  listed,
  listQuery,
  pageOf,
  pathIds,
  READ_ERRORS,
  WRITE_ERRORS,
} from './shared';

export const MAX_PROMPT_CHARS = 8000;
export const MAX_FORMAT_CHARS = 1000;
export const MAX_EXECUTE_IDS = 10_000;
/** How much of a written text a job's outcome shows (the record holds it whole). */
export const MAX_SHOWN_VALUE_CHARS = 2000;
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

// Executes, previews and generation

const configurationPath = pathIds({ entityId: 'The saved configuration.' });
export const executeBody = z
  .strictObject({
    ids: z
      .array(entityIdSchema)
      .min(1, 'at least one record id')
      .max(MAX_EXECUTE_IDS, `at most ${MAX_EXECUTE_IDS} record ids`)
      .refine((ids) => new Set(ids).size === ids.length, 'record ids must not repeat')
      .meta({ description: "Records of the configuration's module." }),
  })
  .meta({ id: 'AiExecute' });

export const JOB_ITEM_STATUSES = ['done', 'unchanged', 'skipped', 'failed'] as const;
const jobItem = z
  .object({
    recordId: entityId,
    status: z.enum(JOB_ITEM_STATUSES).meta({
      description:
        '`done`: written; `unchanged`: the answer was the value already there (nothing written); `skipped`: not asked (an `onlyEmpty` transform and a filled field); `failed`: see `reason`.',
    }),
    value: z
      .unknown()
      .optional()
      .meta({
        description: `The value written, or the verdict (\`{valid, reason}\`); a text longer than ${MAX_SHOWN_VALUE_CHARS} characters is cut (see \`cut\`).`,
      }),
    cut: z
      .boolean()
      .optional()
      .meta({ description: 'The value shown is the start of a longer text: the record holds it whole.' }),
    validationResultId: entityId.optional(),
    reason: z.string().optional(),
    tokens: z.int().meta({ description: 'Tokens this record cost (0 when answered from the result cache).' }),
    cached: z.boolean().meta({ description: 'The same question was answered before: nothing spent.' }),
  })
  .meta({ id: 'AiJobItem' });
export const JOB_STATUSES = ['running', 'finished'] as const;
const jobSummary = z
  .object({
    jobId: entityId,
    kind: z.enum(['transform', 'validation']),
    entityId: entityId.meta({ description: 'The configuration it runs.' }),
    status: z.enum(JOB_STATUSES),
    total: z.int(),
    done: z.int(),
    unchanged: z.int(),
    skipped: z.int(),
    failed: z.int(),
    tokens: z.int(),
    startedAt: z.string(),
    finishedAt: z.string().nullable(),
  })
  .meta({ id: 'AiJob' });
const executeAnswer = jobSummary
  .extend({
    items: z
      .array(jobItem)
      .meta({ description: 'Per record id, in the order asked (only on a finished job).' }),
  })
  .meta({ id: 'AiExecuteResult' });
const executeDescription = (what: string) =>
  `${what} A job: records go to the model a few at a time (AI_CONCURRENCY), rate limits and the model's 5xx are retried with backoff, and every finished record is kept as it finishes. When the job finishes within AI_EXECUTE_WAIT_MS the answer is 201 with every record's outcome; otherwise 202 with its progress, and \`GET /ai/job/{jobId}\` follows it. Asking the same of an unchanged record again spends nothing (the answers are kept by what was asked). \`Idempotency-Key\` makes a retry the same job.`;
const executeResponses = {
  201: { description: 'The job finished: every record’s outcome.', schema: executeAnswer },
  202: {
    description: 'The job goes on: its progress (`Location` says where to follow it).',
    schema: jobSummary,
    headers: { Location: 'Where the job is read.' },
  },
  ...WRITE_ERRORS,
  ...AI_ERRORS,
};
export const executeTransform = operation({
  operationId: 'executeColumnDataTransform',
  method: 'post',
  path: '/column-data-transform/{entityId}/execute',
  tag: 'ai',
  summary: 'Rewrite records’ field by a saved transform',
  description: executeDescription(
    'Each record’s field is rewritten as a record update by the transform (the record history names it), validated like any write.',
  ),
  params: configurationPath,
  body: { schema: executeBody, example: { ids: [41, 42, 43] } },
  responses: executeResponses,
  security: 'token',
  tool: true,
});
export const executeValidation = operation({
  operationId: 'executeColumnDataValidation',
  method: 'post',
  path: '/ai/column-data-validation/{entityId}/execute',
  tag: 'ai',
  summary: 'Check records’ field against a saved validation',
  description: executeDescription(
    'Each verdict is written as a column-data validation result (a record already judged on the same value keeps its result).',
  ),
  params: configurationPath,
  body: { schema: executeBody, example: { ids: [41, 42, 43] } },
  responses: executeResponses,
  security: 'token',
  tool: true,
});
export const getAiJob = operation({
  operationId: 'getAiJob',
  method: 'get',
  path: '/ai/job/{jobId}',
  tag: 'ai',
  summary: 'Read an execute job: its progress and counts',
  params: pathIds({ jobId: 'The job.' }),
  responses: { 200: { description: 'The job.', schema: jobSummary }, ...READ_ERRORS },
  security: 'token',
});
export const listAiJobItems = operation({
  operationId: 'listAiJobItems',
  method: 'get',
  path: '/ai/job/{jobId}/item',
  tag: 'ai',
  summary: 'List the records an execute job finished, with each outcome',
  description: 'Filter on `recordId`, `status`, `tokens`, `cached`.',
  params: pathIds({ jobId: 'The job.' }),
  query: listQuery,
  responses: {
    200: { description: 'A page of outcomes.', schema: pageOf(jobItem, 'AiJobItemPage') },
    ...READ_ERRORS,
  },
  security: 'token',
});

/** A sample record: `{name?, fields: {<key>: value}}`, or the field values themselves (`{<key>: value}`). */
export const previewBody = z
  .strictObject({
    prompt: prompt.meta({
      description: `The prompt to try (the saved one is not changed). ${PROMPT_REFERENCES_DESCRIPTION}`,
    }),
    preview: z
      .record(z.string().max(64), z.unknown())
      .refine(
        (sample) => JSON.stringify(sample).length <= 100_000,
        'must be at most 100,000 characters as JSON',
      )
      .meta({
        description:
          'One sample record: `{"name": …, "fields": {"<key>": value}}`, or its field values as `{"<key>": value}`.',
      }),
  })
  .meta({ id: 'AiPreview' });
const previewAnswer = z
  .object({
    entityId,
    fieldId: entityId,
    outputType: z.string(),
    prompt: z.string().meta({ description: 'The prompt as sent, its references filled from the sample.' }),
    value: z.unknown().meta({ description: 'What the transform would write.' }),
    fits: z.boolean().meta({ description: 'The value passes the field’s checks, as a write would.' }),
    problem: z.string().nullable().meta({ description: 'Why it does not fit (null when it does).' }),
    model: z.string(),
    tokens: z.int(),
  })
  .meta({ id: 'AiPreviewResult' });
export const previewTransform = operation({
  operationId: 'previewColumnDataTransform',
  method: 'post',
  path: '/column-data-transform/{entityId}/preview',
  tag: 'ai',
  summary: 'Try a prompt of a transform on one sample record (nothing is saved)',
  description:
    'Spends tokens, so it needs the right to change the transform (`columnDataTransform: update`); a read right alone is a 403. The prompt with its references filled in may be at most 200,000 characters (a 400 otherwise, before any model is asked).',
  params: configurationPath,
  body: {
    schema: previewBody,
    example: {
      prompt: 'Summarise: {{description}}',
      preview: { name: 'Acme', fields: { description: '…' } },
    },
  },
  responses: { 201: { description: 'The transformed value.', schema: previewAnswer }, ...AI_ERRORS },
  security: 'token',
});

const generated = z
  .object({ result: z.string().meta({ description: 'JSON text (see the operation).' }) })
  .meta({ id: 'AiGenerated' });
const nullableText = (what: string) =>
  z
    .string()
    .trim()
    .max(MAX_PROMPT_CHARS, `must be at most ${MAX_PROMPT_CHARS} characters`)
    .nullable()
    .meta({ description: what });
export const generateModulesBody = z
  .strictObject({
    prompt: nullableText('What the modules are for; required in substance (null or empty: 400).'),
  })
  .meta({ id: 'AiGenerateModules' });
export const generateFieldBody = z
  .strictObject({
    prompt: nullableText('What the field holds; required in substance (null or empty: 400).'),
    table: nullableText('The space the module is in (its name), as context; optional.'),
    module: nullableText('The module the field is for: its id or its exact name; optional.'),
  })
  .meta({ id: 'AiGenerateField' });
export const GENERATED_FIELD_TYPES = FIELD_TYPES.filter((type) => type !== 'button' && type !== 'relation');
export const generateModules = operation({
  operationId: 'generateCustomModules',
  method: 'post',
  path: '/ai/generate-custom-modules',
  tag: 'ai',
  summary: 'Propose custom modules and their fields for a purpose',
  description: `\`result\` is JSON text: \`{"modules": [{"name", "description", "fields": [{"name", "type", "required", "config"}]}]}\`. Each module is the body of \`POST /module\` (add \`spaceId\`), each field the body of \`POST /field\` (add \`moduleId\`); every part is checked against those operations' rules before it is answered. Field types: ${GENERATED_FIELD_TYPES.join(', ')}. 400 when the prompt is empty, or asks for something no supported type holds.`,
  body: { schema: generateModulesBody, example: { prompt: 'Track job applicants and their interviews' } },
  responses: { 200: { description: 'The proposal.', schema: generated }, ...AI_ERRORS },
  security: 'token',
  tool: true,
});
export const generateField = operation({
  operationId: 'generateCustomField',
  method: 'post',
  path: '/ai/generate-custom-field',
  tag: 'ai',
  summary: 'Propose one field for a module',
  description: `\`result\` is JSON text: the body of \`POST /field\` (\`{"moduleId"?, "name", "type", "required", "config"}\`, \`moduleId\` when \`module\` names one module), checked against that operation's rules. Field types: ${GENERATED_FIELD_TYPES.join(', ')}. 400 when the prompt is empty, \`module\` names no module, or the field asked for needs a type that does not exist.`,
  body: {
    schema: generateFieldBody,
    example: { prompt: 'How likely the deal closes', table: 'Sales', module: 'Deals' },
  },
  responses: { 200: { description: 'The proposal.', schema: generated }, ...AI_ERRORS },
  security: 'token',
  tool: true,
});
export const generateFieldValue = operation({
  operationId: 'generateFieldValue',
  method: 'get',
  path: '/field/generate/{fieldId}',
  tag: 'ai',
  summary: 'Generate a value for a field',
  description:
    "A value of the field's type, checked as a record write would check it. The field's AI configuration is the first saved column-data transform of the field: with one, its prompt and format guide the value and `recordId` fills its references from that record; without one, the value is a plausible example from the field's name, type and options. Spends tokens (a GET that writes: the gateway sends it to the command API), so it needs `field: read` and `record: update`; read rights alone are a 403. A prompt longer than 200,000 characters once its references are filled in is a 400.",
  params: pathIds({ fieldId: 'The field.' }),
  query: z.strictObject({
    recordId: idAsText(
      'A record of the field’s module whose values fill the prompt’s references.',
    ).optional(),
  }),
  responses: {
    200: {
      description: 'The value.',
      schema: z
        .object({
          fieldId: entityId,
          key: z.string(),
          type: z.string(),
          value: z.unknown(),
          transformId: entityId
            .nullable()
            .meta({ description: 'The transform that guided it (null: none).' }),
          model: z.string(),
          tokens: z.int(),
        })
        .meta({ id: 'AiFieldValue' }),
    },
    ...AI_ERRORS,
  },
  security: 'token',
  servedByCommandApi: true,
});

// The model of a system

export const systemAiBody = z
  .strictObject({
    baseUrl: z
      .url({ protocol: /^https?$/, message: 'must be an absolute http(s) URL' })
      .max(2048)
      .meta({
        description: 'An OpenAI-compatible endpoint, `/v1` included.',
        example: 'https://api.openai.com/v1',
      }),
    model: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .meta({ description: 'The model asked when a configuration names none.' }),
    apiKey: z.string().min(1).max(4096).optional().meta({
      description: 'The endpoint’s key, kept sealed and never shown; left out, the key set before stays.',
    }),
    timeoutMs: z
      .int()
      .min(100)
      .max(600_000)
      .optional()
      .meta({ description: 'The longest one call may take.' }),
  })
  .meta({ id: 'SystemAiSettings' });
const systemPath = z.object({
  system: z
    .string()
    .refine(isValidTenant, 'must be a system name (a DNS label)')
    .meta({ description: 'The system.' }),
});
const systemAiAnswer = z
  .object({
    system: z.string(),
    source: z.enum(['system', 'deployment', 'none']).meta({
      description:
        '`system`: set here; `deployment`: the deployment’s AI_URL; `none`: the AI routes answer 501.',
    }),
    baseUrl: z.string().nullable(),
    model: z.string().nullable(),
    hasApiKey: z.boolean(),
    timeoutMs: z.int().nullable(),
  })
  .meta({ id: 'SystemAi' });
const systemAiDescription =
  'Operator administrators only: the platform calls this address on the system’s behalf, so only the operator may choose it.';
export const getSystemAi = operation({
  operationId: 'getSystemAi',
  method: 'get',
  path: '/system/{system}/ai',
  tag: 'systems',
  summary: 'Read which model a system’s AI features use',
  description: systemAiDescription,
  params: systemPath,
  responses: { 200: { description: 'The setting (never the key).', schema: systemAiAnswer } },
  security: 'token',
  servedByCommandApi: true,
});
export const setSystemAi = operation({
  operationId: 'setSystemAi',
  method: 'put',
  path: '/system/{system}/ai',
  tag: 'systems',
  summary: 'Set the model a system’s AI features use',
  description: systemAiDescription,
  params: systemPath,
  body: {
    schema: systemAiBody,
    example: { baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini', apiKey: 'sk-…' },
  },
  responses: { 200: { description: 'The setting (never the key).', schema: systemAiAnswer } },
  security: 'token',
});
export const clearSystemAi = operation({
  operationId: 'clearSystemAi',
  method: 'delete',
  path: '/system/{system}/ai',
  tag: 'systems',
  summary: 'Let a system use the deployment’s model again',
  description: systemAiDescription,
  params: systemPath,
  responses: { 200: { description: 'The setting now.', schema: systemAiAnswer } },
  security: 'token',
});

export const AI_OPERATIONS = [
  ...listed(TRANSFORM_OPERATIONS),
  ...listed(VALIDATION_OPERATIONS),
  ...listed(VALIDATION_RESULT_OPERATIONS),
  executeTransform,
  executeValidation,
  getAiJob,
  listAiJobItems,
  previewTransform,
  generateModules,
  generateField,
  generateFieldValue,
  getAiBalance,
  topUpAiBalance,
  getAiUsage,
  getSystemAi,
  setSystemAi,
  clearSystemAi,
];
