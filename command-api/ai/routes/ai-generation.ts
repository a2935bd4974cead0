import type { Request, Router } from 'express';
import { z } from 'zod';
import {
  DEFAULT_MAX_OUTPUT_TOKENS,
  GENERATED_FIELD_TYPES,
  generateField,
  generateFieldBody,
  generateFieldValue,
  generateModules,
  generateModulesBody,
} from '../../../contracts/api/ai';
import { createFieldBody } from '../../../contracts/api/fields';
import { createModuleBody } from '../../../contracts/api/structure';
import {
  excerpt,
  jsonObjectOf,
  parseValueAnswer,
  TRANSFORMABLE_TYPES,
  valueInstruction,
} from '../../../contracts/ai-output';
import { fillPrompt } from '../../../contracts/ai-prompt';
import type { Principal } from '../../../contracts/auth';
import { entityIdFromText } from '../../../contracts/entity-id';
import { PlatformError } from '../../../contracts/errors';
import type { AiSpendingPurpose } from '../../../contracts/events/ai';
import { fieldValueSchema } from '../../../contracts/events/records';
import {
  FIELD_CONFIG_SCHEMAS,
  FIELD_TYPES,
  type FieldDefinition,
  type FieldType,
} from '../../../contracts/fields';
import { streamName } from '../../../contracts/streams';
import { issuesOf, validate } from '../../../contracts/validation';
import type { ChatMessage } from '../../../infra/ai/language-model/port';
import { mount } from '../../../infra/http/operations';
import { idParam } from '../../../infra/http/params';
import type { MeteredAnswer } from '../metered-model';
import { recordReferences } from '../requests';
import type { CommandDeps } from '../../deps';
import { checkRecordValues } from '../../records/domain/field-values';
import type { ModuleState } from '../../structure/domain/module';
import { recordDecider, type RecordState } from '../../records/domain/record';
import { activeConfiguration } from '../configurations';
import { authorize, commandContext, sendAt } from '../../kit/route-context';
import { moduleFields } from '../../structure/commands';
import { inSlot } from '../ai-slots';

/** A proposal larger than this is no answer to one request: the model went astray. */
const MAX_GENERATED_MODULES = 20;
const MAX_GENERATED_FIELDS = 100;
/** Room for a few modules of a dozen fields each; a longer answer is cut and refused. */
const MODULES_OUTPUT_TOKENS = 2000;
const FIELD_OUTPUT_TOKENS = 600;
/** Designs follow the request closely; a little freedom in the wording. */
const DESIGN_TEMPERATURE = 0.2;
/** An example value without a transform: some variety between calls is what a sample is for. */
const EXAMPLE_TEMPERATURE = 0.7;
/** Rate limits and the model's 5xx are retried this often before the route answers 503. */
const MODEL_ATTEMPTS = 3;
/** Stands for the module or space a proposal is checked against before it has one (stripped again). */
const PLACEHOLDER_ID = 1;

/** What a type holds, where its name alone leaves the model guessing. */
const TYPE_NOTES: Readonly<Partial<Record<FieldType, string>>> = {
  text: 'one line of text',
  long_text: 'text of several paragraphs',
  number: 'a whole number',
  decimal: 'a number with decimal places, such as an amount or a rate',
  checkbox: 'yes or no',
  select: 'one of fixed choices',
  multi_select: 'several of fixed choices',
  user: 'a user account of this system, such as an owner or an assignee',
  file: 'uploaded files, such as documents or images',
};

/** What a configuration key takes, in the model's terms. */
const CONFIG_KEY_NOTES: Readonly<Partial<Record<string, string>>> = {
  maxLength: 'an integer, the most characters',
  min: 'a number, the least value',
  max: 'a number, the greatest value',
  scale: 'an integer from 0 to 10, the decimal places',
  options: 'an array of distinct non-empty strings, the choices',
};

/** One line per generated type: what it holds and its `config` keys, read from the types' own schemas. */
const FIELD_TYPE_LINES = GENERATED_FIELD_TYPES.map((type) => {
  const note = TYPE_NOTES[type];
  const keys = Object.entries<z.ZodType>((FIELD_CONFIG_SCHEMAS[type] as z.ZodObject).shape).map(
    ([key, schema]) => {
      const need = schema.safeParse(undefined).success ? 'optional' : 'required';
      const keyNote = CONFIG_KEY_NOTES[key];
      return `"${key}" (${need})${keyNote ? `: ${keyNote}` : ''}`;
    },
  );
  return `- ${type}${note ? ` (${note})` : ''}: config ${keys.length === 0 ? '{}' : `{${keys.join('; ')}}`}`;
}).join('\n');

const FIELD_RULES = `Field types, each with the keys its "config" may have (no others):
${FIELD_TYPE_LINES}
Rules for fields:
- "name": what users see, 1 to 200 characters. Do not add a field for the record's name: every record has one.
- "required": true only when a record makes no sense without the value.
- "config": {} when the type takes none; select and multi_select must have "options".
- No links between modules: a reference to another record is a text field.
- When the request needs something none of these types can hold, answer only {"unsupported": "<why, in one sentence>"}.`;

const MODULES_SYSTEM_PROMPT = `You design custom modules (tables of records) and their fields for a records platform.
Answer with one JSON object and nothing else, in exactly this shape:
{"modules": [{"name": "<module name>", "description": "<one sentence>", "fields": [{"name": "<field name>", "type": "<field type>", "required": <true or false>, "config": {}}]}]}
Rules for modules: 1 to ${MAX_GENERATED_MODULES} modules, as few as the purpose needs; each with 1 to ${MAX_GENERATED_FIELDS} fields whose names differ; module names at most 200 characters and different from each other; no keys other than those shown.
${FIELD_RULES}`;

const FIELD_SYSTEM_PROMPT = `You design one new field of a module (a table of records) of a records platform.
Answer with one JSON object and nothing else, in exactly this shape:
{"name": "<field name>", "type": "<field type>", "required": <true or false>, "config": {}}
No keys other than those shown. The field must not repeat one the module has already.
${FIELD_RULES}`;

const VALUE_SYSTEM_PROMPT = `You write the value of one field of a record of a records platform.
Answer with one JSON object and nothing else: {"value": <the value>}.`;

/** What the model is told when there is no record: references of the prompt stand for a sample record. */
const NO_RECORD_NOTE =
  'No record is given: references in double braces stand for values of a record you imagine; write a plausible value.';

/** What the model is asked for a field without a transform: an example of its values. */
const exampleRequest = (field: FieldDefinition) =>
  `Give a plausible example value for the field "${field.name}".`;

/** The field a value is asked for: its name and type, what the value must be, and the output instructions. */
function valueSystemPrompt(field: FieldDefinition, format: string | null): string {
  const lines = [
    VALUE_SYSTEM_PROMPT,
    `The field: "${field.name}", of type ${field.type}. The value is ${valueInstruction(field)}.`,
  ];
  if (format !== null) lines.push(`Output instructions: ${format}`);
  return lines.join('\n');
}

/** The request a field is designed for, with what is known of its module. */
function fieldUserPrompt(prompt: string, table: string | null, module: ModuleState | null): string {
  const lines = [`The field: ${prompt}`];
  if (table !== null) lines.push(`The space the module is in: ${table}`);
  if (module !== null) {
    lines.push(`The module: ${module.name}`);
    lines.push(
      module.fields.length === 0
        ? 'It has no fields yet.'
        : `Its fields now:\n${module.fields.map((field) => `- ${field.name} (${field.type})`).join('\n')}`,
    );
  }
  return lines.join('\n');
}

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

interface ProposedField {
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
function proposedModules(answer: MeteredAnswer) {
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
function proposedField(answer: MeteredAnswer, module: ModuleState | null): ProposedField {
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

/** The prompt, refused with a 400 when it says nothing. */
function requiredPrompt(prompt: string | null, what: string): string {
  if (prompt === null || prompt === '')
    throw new PlatformError('validation_failed', `the prompt is needed: say ${what}`, [
      { path: 'prompt', message: 'must not be empty' },
    ]);
  return prompt;
}

/** The module `module` names: its canonical id, else its exact name (one module only). A 400 otherwise. */
async function namedModule(deps: CommandDeps, tenant: string, module: string): Promise<ModuleState> {
  const id = entityIdFromText(module);
  const ids = id !== undefined ? [id] : await deps.reads.modulesNamed(tenant, module);
  if (ids.length === 0)
    throw new PlatformError('validation_failed', `no module is named ${JSON.stringify(module)}`, [
      { path: 'module', message: 'no such module' },
    ]);
  if (ids.length > 1)
    throw new PlatformError(
      'validation_failed',
      `several modules are named ${JSON.stringify(module)}; give its id`,
      [{ path: 'module', message: 'names several modules' }],
    );
  const found = await moduleFields(deps.handler, tenant, ids[0]!);
  if (!found)
    throw new PlatformError('validation_failed', `module ${ids[0]} does not exist`, [
      { path: 'module', message: 'no such module' },
    ]);
  return found;
}

/** The field `fieldId` and its module (a 404 when either is gone). */
async function fieldAndModule(deps: CommandDeps, tenant: string, fieldId: number) {
  const moduleId = await deps.reads.fieldModule(tenant, fieldId);
  const module = moduleId === null ? null : await moduleFields(deps.handler, tenant, moduleId);
  const field = module?.fields.find((candidate) => candidate.fieldId === fieldId);
  if (!module || !field) throw new PlatformError('not_found', `field ${fieldId} not found`);
  return { module, field };
}

/** Record `recordId`, which must be one of `module`'s. */
async function recordOf(
  deps: CommandDeps,
  tenant: string,
  recordId: number,
  module: ModuleState,
): Promise<RecordState> {
  const record = (await deps.handler.load(streamName('record', tenant, recordId), recordDecider)).state;
  if (record.status !== 'active') throw new PlatformError('not_found', `record ${recordId} not found`);
  if (record.moduleId !== module.moduleId)
    throw new PlatformError(
      'validation_failed',
      `record ${recordId} is not a record of module ${module.moduleId}, the field's module`,
      [{ path: 'recordId', message: `not in module ${module.moduleId}` }],
    );
  return record;
}

/** The transform that guides the field's values, when it has one. */
async function transformOf(deps: CommandDeps, tenant: string, fieldId: number) {
  const transformId = await deps.reads.transformOfField(tenant, fieldId);
  if (transformId === null) return null;
  try {
    return await activeConfiguration(deps.handler, 'transform', tenant, transformId);
  } catch (error) {
    // The read model may still list a transform another process deleted a moment ago: then there is none.
    if (error instanceof PlatformError && error.kind === 'not_found') return null;
    throw error;
  }
}

interface GenerationCall {
  readonly req: Request;
  readonly principal: Principal;
  readonly purpose: Omit<AiSpendingPurpose, 'userId'>;
  readonly messages: readonly ChatMessage[];
  readonly maxOutputTokens: number;
  readonly temperature: number;
  readonly model?: string;
}

/** One metered model call for a generation: never cached (each asks anew), retried on the model's hiccups. */
function ask(deps: CommandDeps, call: GenerationCall): Promise<MeteredAnswer> {
  const { commandId: _none, ...context } = commandContext(call.req, call.principal, '');
  return inSlot(deps.ai.slots, call.principal.tenant, call.principal.credential.id, deps.ai.slotWaitMs, () =>
    deps.ai.model.complete({
      tenant: call.principal.tenant,
      purpose: { ...call.purpose, userId: call.principal.userId },
      request: {
        messages: call.messages,
        maxOutputTokens: call.maxOutputTokens,
        temperature: call.temperature,
        json: true,
        ...(call.model !== undefined && { model: call.model }),
      },
      attempts: MODEL_ATTEMPTS,
      context,
    }),
  );
}

/** The answer's value, checked as a record write checks it; a 502 saying why it does not fit. */
function fittingValue(answer: MeteredAnswer, field: FieldDefinition): unknown {
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

/**
 * Generation: modules and fields proposed for a purpose (answered as the JSON text of the bodies that create
 * them, checked against those operations' rules), and a value for a field. Every call is metered against the
 * system's AI token balance; an answer that is not what was asked is a 502, never guessed at.
 */
export function addAiGenerationRoutes(router: Router, deps: CommandDeps): void {
  mount(router, generateModules, async (req, res) => {
    const principal = authorize(req, 'module', 'create');
    const body = validate(generateModulesBody, req.body, 'body');
    const prompt = requiredPrompt(body.prompt, 'what the modules are for');
    const answer = await ask(deps, {
      req,
      principal,
      purpose: { operation: 'generate-modules', configuration: null, recordId: null },
      messages: [
        { role: 'system', content: MODULES_SYSTEM_PROMPT },
        { role: 'user', content: prompt },
      ],
      maxOutputTokens: MODULES_OUTPUT_TOKENS,
      temperature: DESIGN_TEMPERATURE,
    });
    sendAt(res, 200, answer.position, { result: JSON.stringify(proposedModules(answer)) });
  });

  mount(router, generateField, async (req, res) => {
    const principal = authorize(req, 'field', 'create');
    const body = validate(generateFieldBody, req.body, 'body');
    const prompt = requiredPrompt(body.prompt, 'what the field holds');
    const module =
      body.module === null || body.module === ''
        ? null
        : await namedModule(deps, principal.tenant, body.module);
    const answer = await ask(deps, {
      req,
      principal,
      purpose: { operation: 'generate-field', configuration: null, recordId: null },
      messages: [
        { role: 'system', content: FIELD_SYSTEM_PROMPT },
        { role: 'user', content: fieldUserPrompt(prompt, body.table === '' ? null : body.table, module) },
      ],
      maxOutputTokens: FIELD_OUTPUT_TOKENS,
      temperature: DESIGN_TEMPERATURE,
    });
    const field = proposedField(answer, module);
    const result = module === null ? field : { moduleId: module.moduleId, ...field };
    sendAt(res, 200, answer.position, { result: JSON.stringify(result) });
  });

  mount(router, generateFieldValue, async (req, res) => {
    const principal = authorize(req, 'field', 'read');
    // A generated value spends the system's tokens, for a record value: the right to write records says so.
    authorize(req, 'record', 'update');
    const fieldId = idParam(req, 'fieldId');
    const query = validate(generateFieldValue.query, req.query, 'query');
    const { module, field } = await fieldAndModule(deps, principal.tenant, fieldId);
    if (!TRANSFORMABLE_TYPES.includes(field.type))
      throw new PlatformError(
        'validation_failed',
        `field ${fieldId} is a ${field.type} field, an unsupported type: no value of it is generated; supported: ${TRANSFORMABLE_TYPES.join(', ')}`,
        [{ path: 'fieldId', message: `unsupported type ${field.type}` }],
      );
    const record =
      query.recordId === undefined ? null : await recordOf(deps, principal.tenant, query.recordId, module);
    const transform = await transformOf(deps, principal.tenant, fieldId);
    const attributes = transform?.attributes;
    const request =
      attributes === undefined
        ? exampleRequest(field)
        : record === null
          ? `${String(attributes.prompt)}\n\n${NO_RECORD_NOTE}`
          : fillPrompt(String(attributes.prompt), recordReferences(record, field));
    const answer = await ask(deps, {
      req,
      principal,
      purpose: {
        operation: 'generate-field-value',
        configuration: { kind: 'field', entityId: fieldId },
        recordId: query.recordId ?? null,
      },
      messages: [
        {
          role: 'system',
          content: valueSystemPrompt(
            field,
            typeof attributes?.format === 'string' ? attributes.format : null,
          ),
        },
        { role: 'user', content: request },
      ],
      maxOutputTokens:
        typeof attributes?.maxOutputTokens === 'number'
          ? attributes.maxOutputTokens
          : DEFAULT_MAX_OUTPUT_TOKENS,
      temperature: typeof attributes?.temperature === 'number' ? attributes.temperature : EXAMPLE_TEMPERATURE,
      ...(typeof attributes?.model === 'string' && { model: attributes.model }),
    });
    const value = fittingValue(answer, field);
    sendAt(res, 200, answer.position, {
      fieldId,
      key: field.key,
      type: field.type,
      value,
      transformId: transform?.id ?? null,
      model: answer.model,
      tokens: answer.tokens,
    });
  });
}
