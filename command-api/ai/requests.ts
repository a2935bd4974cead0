import { valueInstruction } from '../../contracts/ai-output';
import { fillPrompt } from '../../contracts/ai-prompt';
import type { FieldDefinition } from '../../contracts/fields';
import type { CompletionRequest } from '../../infra/ai/language-model/port';
import type { RecordState } from '../records/domain/record';

/** What the saved AI configurations ask of the model for one record (executes and the preview). */

const TRANSFORM_SYSTEM_PROMPT =
  'You rewrite one field of a record in a database. Follow the instructions. Answer with one JSON object ' +
  'and nothing else: {"value": <the new value>}, where <the new value> is ';
const VALIDATION_SYSTEM_PROMPT =
  'You check one field value of a record in a database against a rule. Answer with one JSON object and ' +
  'nothing else: {"valid": true or false, "reason": "<one short sentence>"}.';

/** What a prompt's references stand for in a record: its field values, then its name, id and the target value. */
export function recordReferences(record: RecordState, field: FieldDefinition): Record<string, unknown> {
  return {
    ...record.fields,
    name: record.name,
    id: record.recordId,
    value: record.fields[field.key] ?? null,
  };
}

/** What a transform asks of the model for one record. */
export function transformRequest(
  attributes: Readonly<Record<string, unknown>>,
  field: FieldDefinition,
  references: Readonly<Record<string, unknown>>,
  signal?: AbortSignal,
): CompletionRequest {
  const format = typeof attributes.format === 'string' ? `\nOutput format: ${attributes.format}` : '';
  return {
    messages: [
      {
        role: 'system',
        content: `${TRANSFORM_SYSTEM_PROMPT}${valueInstruction(field)} for the field "${field.name}" (or null for no value).${format}`,
      },
      { role: 'user', content: fillPrompt(String(attributes.prompt), references) },
    ],
    maxOutputTokens: Number(attributes.maxOutputTokens),
    temperature: Number(attributes.temperature ?? 0),
    json: true,
    ...(typeof attributes.model === 'string' && { model: attributes.model }),
    ...(signal && { signal }),
  };
}

/** What a validation asks of the model for one record. */
export function validationRequest(
  attributes: Readonly<Record<string, unknown>>,
  field: FieldDefinition,
  record: RecordState,
  references: Readonly<Record<string, unknown>>,
  signal: AbortSignal,
): CompletionRequest {
  const value = record.fields[field.key] ?? null;
  return {
    messages: [
      { role: 'system', content: VALIDATION_SYSTEM_PROMPT },
      {
        role: 'user',
        content:
          `Rule: ${fillPrompt(String(attributes.rule), references)}\n` +
          `Field: "${field.name}" (${field.type})\n` +
          `Value: ${JSON.stringify(value)}\n` +
          `Record: "${record.name}"`,
      },
    ],
    maxOutputTokens: Number(attributes.maxOutputTokens),
    temperature: 0,
    json: true,
    ...(typeof attributes.model === 'string' && { model: attributes.model }),
    signal,
  };
}
