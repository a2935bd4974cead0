import type { z } from 'zod';
import { DEFAULT_MAX_OUTPUT_TOKENS, GENERATED_FIELD_TYPES } from '../../contracts/api/ai';
import { valueInstruction } from '../../contracts/ai-output';
import { fillPrompt } from '../../contracts/ai-prompt';
import { FIELD_CONFIG_SCHEMAS, type FieldDefinition, type FieldType } from '../../contracts/fields';
import type { ChatMessage } from '../../infra/ai/language-model/port';
import type { RecordState } from '../records/domain/record';
import type { ModuleState } from '../structure/domain/module';
import { recordReferences } from './requests';

/**
 * What generation asks of the model: modules and fields for a purpose, and a value for a field. The rules of
 * the field types are read from the types' own schemas, so the model is told what `POST /field` takes.
 */

/** A proposal larger than this is no answer to one request: the model went astray. */
export const MAX_GENERATED_MODULES = 20;
export const MAX_GENERATED_FIELDS = 100;
/** Room for a few modules of a dozen fields each; a longer answer is cut and refused. */
export const MODULES_OUTPUT_TOKENS = 2000;
export const FIELD_OUTPUT_TOKENS = 600;
/** Designs follow the request closely; a little freedom in the wording. */
const DESIGN_TEMPERATURE = 0.2;
/** An example value without a transform: some variety between calls is what a sample is for. */
const EXAMPLE_TEMPERATURE = 0.7;

/** What one generation asks of the model. */
export interface GenerationRequest {
  readonly messages: readonly ChatMessage[];
  readonly maxOutputTokens: number;
  readonly temperature: number;
  readonly model?: string;
}

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

/** Modules and their fields for the purpose `prompt` says. */
export function modulesRequest(prompt: string): GenerationRequest {
  return {
    messages: [
      { role: 'system', content: MODULES_SYSTEM_PROMPT },
      { role: 'user', content: prompt },
    ],
    maxOutputTokens: MODULES_OUTPUT_TOKENS,
    temperature: DESIGN_TEMPERATURE,
  };
}

/** One new field for what `prompt` says, in the space `table` and for `module` when they are known. */
export function fieldRequest(
  prompt: string,
  table: string | null,
  module: ModuleState | null,
): GenerationRequest {
  return {
    messages: [
      { role: 'system', content: FIELD_SYSTEM_PROMPT },
      { role: 'user', content: fieldUserPrompt(prompt, table, module) },
    ],
    maxOutputTokens: FIELD_OUTPUT_TOKENS,
    temperature: DESIGN_TEMPERATURE,
  };
}

/**
 * A value of `field`: as its transform asks (`transform`, its attributes) for `record`, or for a record the
 * model imagines when there is none; without a transform, an example value.
 */
export function valueRequest(
  field: FieldDefinition,
  transform: Readonly<Record<string, unknown>> | undefined,
  record: RecordState | null,
): GenerationRequest {
  const request =
    transform === undefined
      ? exampleRequest(field)
      : record === null
        ? `${String(transform.prompt)}\n\n${NO_RECORD_NOTE}`
        : fillPrompt(String(transform.prompt), recordReferences(record, field));
  return {
    messages: [
      {
        role: 'system',
        content: valueSystemPrompt(field, typeof transform?.format === 'string' ? transform.format : null),
      },
      { role: 'user', content: request },
    ],
    maxOutputTokens:
      typeof transform?.maxOutputTokens === 'number' ? transform.maxOutputTokens : DEFAULT_MAX_OUTPUT_TOKENS,
    temperature: typeof transform?.temperature === 'number' ? transform.temperature : EXAMPLE_TEMPERATURE,
    ...(typeof transform?.model === 'string' && { model: transform.model }),
  };
}
