import { z } from 'zod';
import { GENERATED_FIELD_TYPES } from '../../contracts/api/ai';
import { createFieldBody } from '../../contracts/api/fields';
import { createModuleBody } from '../../contracts/api/structure';
import { excerpt, jsonObjectOf, parseValueAnswer } from '../../contracts/ai-output';
import { PlatformError } from '../../contracts/errors';
import { fieldValueSchema } from '../../contracts/events/records';
import {
  FIELD_CONFIG_SCHEMAS,
  FIELD_TYPES,
  type FieldDefinition,
  type FieldType,
} from '../../contracts/fields';
import { issuesOf } from '../../contracts/validation';
import { checkRecordValues } from '../records/domain/field-values';
import type { ModuleState } from '../structure/domain/module';
import {
  FIELD_OUTPUT_TOKENS,
  MAX_GENERATED_FIELDS,
  MAX_GENERATED_MODULES,
  MODULES_OUTPUT_TOKENS,
} from './generation-prompts';
import type { MeteredAnswer } from './metered-model';

/**
 * The model's answers to generation, checked: proposals against the rules of the operations that would create
 * them (`POST /module`, `POST /field`), values as a record write checks them. A model's answer is untrusted:
 * one that is not what was asked is a 502, never guessed at; one that needs an unsupported type is a 400.
 */

/** Stands for the module or space a proposal is checked against before it has one (stripped again). */
const PLACEHOLDER_ID = 1;

function unusable(reason: string, text: string, details?: unknown): PlatformError {
  return new PlatformError('upstream_failed', `${reason}: ${excerpt(text)}`, details);
}

function summary(error: z.ZodError): string {
  return issuesOf(error)
    .map((issue) => `${issue.path}: ${issue.message}`)
    .join('; ');
}

/**
 * The JSON object of an answer (the whole text, or the one fenced block a model may wrap it in); a 502 for an
 * answer cut at its output limit or that is no JSON object. A model's answer is untrusted: never guessed at.
 */
function answerObject(answer: MeteredAnswer, limit: number): Record<string, unknown> {
  if (answer.finishReason === 'length')
    throw unusable(`the model's answer was cut at its limit of ${limit} tokens`, answer.text);
  const object = jsonObjectOf(answer.text);
  if (!object.ok) throw new PlatformError('upstream_failed', object.reason);
  return object.value;
}

/** The model's `{"unsupported": why}`: the request needs a type that does not exist (a 400, not a failure). */
function refuseUnsupported(answer: Record<string, unknown>): void {
  const why = answer.unsupported;
  if (typeof why === 'string' && why.trim() !== '')
    throw new PlatformError(
      'validation_failed',
      `unsupported field type: the request needs what no supported field type holds (${why.trim().slice(0, 500)}); supported types: ${GENERATED_FIELD_TYPES.join(', ')}`,
      [{ path: 'prompt', message: 'needs an unsupported field type' }],
    );
}

/** The shape asked for; the values are judged by the operations' own rules afterwards. */
const answeredField = z.strictObject({
  name: z.unknown(),
  type: z.string(),
  required: z.unknown().optional(),
  config: z.unknown().optional(),
});
const answeredModules = z.strictObject({
  modules: z
    .array(
      z.strictObject({
        name: z.unknown(),
        description: z.unknown().optional(),
        fields: z.array(answeredField).min(1).max(MAX_GENERATED_FIELDS),
      }),
    )
    .min(1)
    .max(MAX_GENERATED_MODULES),
});
type AnsweredField = z.infer<typeof answeredField>;

export interface ProposedField {
  readonly name: string;
  readonly type: FieldType;
  readonly required: boolean;
  readonly config: Record<string, unknown>;
}

/** A type the proposal may not use: one that does not exist, or one generation leaves out. A 400. */
function refuseUnsupportedType(field: AnsweredField, where: string): void {
  if ((GENERATED_FIELD_TYPES as readonly string[]).includes(field.type)) return;
  const exists = (FIELD_TYPES as readonly string[]).includes(field.type);
  throw new PlatformError(
    'validation_failed',
    `unsupported field type: the request needs a ${JSON.stringify(field.type)} field (${where}), ${exists ? 'a type generation does not propose' : 'a type that does not exist'}; supported types: ${GENERATED_FIELD_TYPES.join(', ')}`,
    [{ path: 'prompt', message: `needs an unsupported field type ${JSON.stringify(field.type)}` }],
  );
}

/** The field as `POST /field` would take it, normalised; a 502 naming what breaks that operation's rules. */
function checkedField(field: AnsweredField, where: string, text: string): ProposedField {
  const body = createFieldBody.safeParse({
    moduleId: PLACEHOLDER_ID,
    name: field.name,
    type: field.type,
    ...(field.required !== undefined && { required: field.required }),
    ...(field.config !== undefined && { config: field.config }),
  });
  if (!body.success)
    throw unusable(`the model proposed an invalid field (${where}: ${summary(body.error)})`, text);
  const configSchema = FIELD_CONFIG_SCHEMAS[body.data.type] as z.ZodType<Record<string, unknown>>;
  const config = configSchema.safeParse(body.data.config ?? {});
  if (!config.success)
    throw unusable(
      `the model proposed an invalid config for a ${body.data.type} field (${where}: ${summary(config.error)})`,
      text,
    );
  return {
    name: body.data.name,
    type: body.data.type,
    required: body.data.required ?? false,
    config: config.data,
  };
}

/** Names compare as users read them: case and surrounding spaces aside. */
const sameName = (name: string) => name.trim().toLowerCase();

function refuseRepeatedNames(names: readonly string[], what: string, text: string): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(sameName(name)))
      throw unusable(`the model proposed two ${what} named ${JSON.stringify(name)}`, text);
    seen.add(sameName(name));
  }
}

/** `{"modules": […]}` checked against `POST /module` and `POST /field`, normalised. */
export function proposedModules(answer: MeteredAnswer) {
  const object = answerObject(answer, MODULES_OUTPUT_TOKENS);
  refuseUnsupported(object);
  const shaped = answeredModules.safeParse(object);
  if (!shaped.success)
    throw unusable(`the model's proposal is not in the shape asked (${summary(shaped.error)})`, answer.text);
  const where = (moduleIndex: number, fieldIndex: number) => `modules.${moduleIndex}.fields.${fieldIndex}`;
  // Every type first: an unsupported one says the request cannot be met, whatever else is wrong.
  shaped.data.modules.forEach((module, moduleIndex) =>
    module.fields.forEach((field, fieldIndex) =>
      refuseUnsupportedType(field, where(moduleIndex, fieldIndex)),
    ),
  );
  const modules = shaped.data.modules.map((module, moduleIndex) => {
    const body = createModuleBody.safeParse({
      spaceId: PLACEHOLDER_ID,
      name: module.name,
      ...(module.description !== undefined && { description: module.description }),
    });
    if (!body.success)
      throw unusable(
        `the model proposed an invalid module (modules.${moduleIndex}: ${summary(body.error)})`,
        answer.text,
      );
    const fields = module.fields.map((field, fieldIndex) =>
      checkedField(field, where(moduleIndex, fieldIndex), answer.text),
    );
    refuseRepeatedNames(
      fields.map((field) => field.name),
      `fields in modules.${moduleIndex}`,
      answer.text,
    );
    // Without a template, `createModuleBody` has made sure of a name.
    return { name: body.data.name!, description: body.data.description ?? null, fields };
  });
  refuseRepeatedNames(
    modules.map((module) => module.name),
    'modules',
    answer.text,
  );
  return { modules };
}

/** One field checked against `POST /field`, and against the fields its module has. */
export function proposedField(answer: MeteredAnswer, module: ModuleState | null): ProposedField {
  const object = answerObject(answer, FIELD_OUTPUT_TOKENS);
  refuseUnsupported(object);
  const shaped = answeredField.safeParse(object);
  if (!shaped.success)
    throw unusable(`the model's field is not in the shape asked (${summary(shaped.error)})`, answer.text);
  refuseUnsupportedType(shaped.data, 'the field');
  const field = checkedField(shaped.data, 'the field', answer.text);
  const existing = module?.fields.find((candidate) => sameName(candidate.name) === sameName(field.name));
  if (module !== null && existing)
    throw unusable(
      `the model proposed a field module ${module.moduleId} has already (${JSON.stringify(existing.name)})`,
      answer.text,
    );
  return field;
}

/** The answer's value, checked as a record write checks it; a 502 saying why it does not fit. */
export function fittingValue(answer: MeteredAnswer, field: FieldDefinition): unknown {
  if (answer.finishReason === 'length')
    throw unusable("the model's answer was cut at its output limit", answer.text);
  const parsed = parseValueAnswer(answer.text, field);
  if (!parsed.ok) throw new PlatformError('upstream_failed', parsed.reason);
  const value = fieldValueSchema.safeParse(parsed.value);
  if (!value.success || value.data === null)
    throw unusable(`the model answered no value a ${field.type} field holds`, answer.text);
  try {
    checkRecordValues([field], { [field.key]: value.data }, new Map(), 'update');
  } catch (error) {
    if (!(error instanceof PlatformError)) throw error;
    const problems = (error.details as ReadonlyArray<{ message: string }>).map((problem) => problem.message);
    throw unusable(
      `the model's value does not fit field ${JSON.stringify(field.name)} (${problems.join('; ')})`,
      answer.text,
      error.details,
    );
  }
  return value.data;
}
