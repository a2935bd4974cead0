import { z } from 'zod';
import { lifecycle } from './catalogues';
import type { EventDefinition } from './definition';

/**
 * AI configurations (transforms, validations, validation results: entities made of attributes) and the AI
 * token balance of a system (`aiBalance-<tenant>.tokens`): top-ups, reservations held while a call is under
 * way, and what the model reported it used.
 */
const id = z.number().int().positive();
const tokens = z.number().int().min(0);
const severity = z.enum(['info', 'warning', 'error']);

const transformAttributes = {
  name: z.string(),
  moduleId: id,
  fieldId: id,
  outputType: z.string(),
  prompt: z.string(),
  model: z.string().nullable(),
  format: z.string().nullable(),
  onlyEmpty: z.boolean(),
  maxOutputTokens: z.number().int(),
  temperature: z.number(),
  description: z.string().nullable(),
};
const validationAttributes = {
  name: z.string(),
  moduleId: id,
  fieldId: id,
  rule: z.string(),
  model: z.string().nullable(),
  severity,
  maxOutputTokens: z.number().int(),
  description: z.string().nullable(),
};
const validationResultAttributes = {
  validationId: id,
  recordId: id,
  fieldId: id,
  moduleId: id,
  valid: z.boolean(),
  reason: z.string().nullable(),
  severity,
  source: z.enum(['ai', 'manual']),
  checkedValue: z.unknown(),
  checkedAt: z.iso.datetime(),
  /** What the model was asked (a digest): an execute on unchanged input finds the verdict it gave. */
  inputDigest: z.string().nullable(),
};

/** What a call was for: the operation, and the configuration it ran (null: a preview or a generation). */
export const aiSpendingPurposeSchema = z.object({
  operation: z.enum([
    'transform-execute',
    'transform-preview',
    'validation-execute',
    'generate-modules',
    'generate-field',
    'generate-field-value',
  ]),
  configuration: z.object({ kind: z.enum(['transform', 'validation', 'field']), entityId: id }).nullable(),
  userId: z.string().nullable(),
  recordId: id.nullable(),
});
export type AiSpendingPurpose = z.infer<typeof aiSpendingPurposeSchema>;

/** What became of one record of an execute job. */
export const aiJobItemSchema = z.object({
  recordId: id,
  status: z.enum(['done', 'unchanged', 'skipped', 'failed']),
  value: z.unknown().optional(),
  /** `value` is the start of a longer text. */
  cut: z.boolean().optional(),
  validationResultId: id.optional(),
  reason: z.string().optional(),
  tokens,
  cached: z.boolean(),
});
export type AiJobItem = z.infer<typeof aiJobItemSchema>;

export const AI_EVENTS: readonly EventDefinition[] = [
  ...lifecycle('ColumnDataTransform', 'transformId', transformAttributes, [
    'moduleId',
    'fieldId',
    'outputType',
  ]),
  ...lifecycle('ColumnDataValidation', 'validationId', validationAttributes, ['moduleId', 'fieldId']),
  ...lifecycle('ColumnDataValidationResult', 'validationResultId', validationResultAttributes, [
    'validationId',
    'recordId',
    'fieldId',
    'moduleId',
  ]),
  {
    /** The model a system uses (`aiSettings-<operator>.<system>`), set by an operator administrator. */
    type: 'SystemAiSettingsSet',
    version: 1,
    schema: z.object({
      system: z.string(),
      baseUrl: z.string(),
      model: z.string(),
      /** The key, sealed (null: none). */
      sealedApiKey: z.string().nullable(),
      timeoutMs: z.number().int().positive().nullable(),
    }),
  },
  { type: 'SystemAiSettingsCleared', version: 1, schema: z.object({ system: z.string() }) },
  {
    /** An execute job (`aiJob-<tenant>.<jobId>`): which configuration, on which records, for whom. */
    type: 'AiJobStarted',
    version: 1,
    schema: z.object({
      jobId: id,
      kind: z.enum(['transform', 'validation']),
      entityId: id,
      ids: z.array(id),
      userId: z.string().nullable(),
      credentialId: z.string().nullable(),
      concurrency: z.number().int().positive(),
      startedAt: z.iso.datetime(),
    }),
  },
  {
    /** Records the job finished, a few at a time as they finish. */
    type: 'AiJobItemsFinished',
    version: 1,
    schema: z.object({ jobId: id, items: z.array(aiJobItemSchema).min(1) }),
  },
  {
    /** The process that runs the job, until when: another takes it over only once that has passed. */
    type: 'AiJobLeased',
    version: 1,
    schema: z.object({ jobId: id, owner: z.string(), until: z.iso.datetime() }),
  },
  { type: 'AiJobFinished', version: 1, schema: z.object({ jobId: id, finishedAt: z.iso.datetime() }) },
  {
    type: 'AiTokensToppedUp',
    version: 1,
    schema: z.object({ tokens: tokens, note: z.string().nullable(), userId: z.string().nullable() }),
  },
  {
    type: 'AiTokensReserved',
    version: 1,
    schema: z.object({
      reservationId: z.string(),
      tokens,
      at: z.iso.datetime(),
      /** A reservation its call never settled (the process died) stops holding tokens then. */
      expiresAt: z.iso.datetime(),
      /** The job whose calls it covers (`aiJob:<job>`): the job's end lets go what a process that died left held. */
      heldFor: z.string().optional(),
    }),
  },
  {
    type: 'AiTokensSpent',
    version: 1,
    schema: z.object({
      reservationId: z.string().nullable(),
      /** The tokens of the reservation it settles (absent: all of it). */
      settles: tokens.optional(),
      at: z.iso.datetime(),
      promptTokens: tokens,
      completionTokens: tokens,
      tokens,
      /** The usage came from the model (false: it reported none, and the estimate was charged). */
      reported: z.boolean(),
      model: z.string(),
      purpose: aiSpendingPurposeSchema,
    }),
  },
  {
    /** A model's answer kept under the digest of what it was asked (`aiAnswer-<tenant>.<digest>`). */
    type: 'AiAnswerRecorded',
    version: 1,
    schema: z.object({
      digest: z.string(),
      text: z.string(),
      model: z.string(),
      promptTokens: tokens,
      completionTokens: tokens,
      /**
       * Whose call paid for it (a job's record, `aiJob:<job>:<record>`), and the reservation its spending settles:
       * a job run again after a crash answers that record from it with what it cost, and settles that spending
       * once. Absent on answers kept before.
       */
      paidBy: z.string().optional(),
      reservationId: z.string().optional(),
      settles: tokens.optional(),
      /** Cut at the output limit: kept for its payer only; anyone else asks anew. */
      cut: z.literal(true).optional(),
    }),
  },
  {
    type: 'AiReservationReleased',
    version: 1,
    schema: z.object({ reservationId: z.string(), at: z.iso.datetime() }),
  },
];
