/**
 * What a model is asked to answer, and how its answer is read: a field value as JSON `{"value": …}` of the
 * field's type, or a verdict `{"valid": …, "reason": …}`. A model's answer is untrusted text: anything that is
 * not exactly such an object is refused with the reason, never guessed at.
 */
import { FIELD_TYPES, type FieldDefinition, type FieldType } from './fields';

/** Field types a model can write: a value that is text, a number, a date, a choice or a flag. */
export const TRANSFORMABLE_TYPES: readonly FieldType[] = FIELD_TYPES.filter(
  (type) => !['user', 'relation', 'file', 'button'].includes(type),
);

/** Field types a validation may check: all that hold a value. */
export const VALIDATABLE_TYPES: readonly FieldType[] = [...TRANSFORMABLE_TYPES, 'user', 'relation', 'file'];

/** The JSON value the answer's `value` must be, in words, for a field. */
export function valueInstruction(field: Pick<FieldDefinition, 'type' | 'config'>): string {
  const options = (field.config.options as readonly string[] | undefined) ?? [];
  switch (field.type) {
    case 'number':
      return 'an integer (a JSON number)';
    case 'decimal':
      return `a number with at most ${typeof field.config.scale === 'number' ? field.config.scale : 2} decimal places`;
    case 'date':
      return 'a date as a string "YYYY-MM-DD"';
    case 'datetime':
      return 'an ISO 8601 date-time with a time zone as a string, e.g. "2030-01-31T09:30:00Z"';
    case 'checkbox':
      return 'true or false';
    case 'select':
      return `exactly one of these strings: ${JSON.stringify(options)}`;
    case 'multi_select':
      return `an array of distinct strings, each one of: ${JSON.stringify(options)}`;
    case 'email':
      return 'an e-mail address as a string';
    case 'url':
      return 'an absolute http(s) URL as a string';
    case 'phone':
      return 'a phone number as a string (digits, optional +, spaces, dashes)';
    case 'long_text':
      return 'a string (several paragraphs allowed)';
    default:
      return `a string of at most ${typeof field.config.maxLength === 'number' ? field.config.maxLength : 500} characters`;
  }
}

export type Parsed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

/** The JSON object in an answer: the whole text, or the one fenced block a model may wrap it in. */
export function jsonObjectOf(text: string): Parsed<Record<string, unknown>> {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?[ \t]*\n([\s\S]*?)\n?```$/.exec(trimmed);
  const body = fenced ? fenced[1]! : trimmed;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { ok: false, reason: `the model answered no JSON object: ${excerpt(text)}` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { ok: false, reason: `the model answered JSON that is no object: ${excerpt(text)}` };
  return { ok: true, value: parsed as Record<string, unknown> };
}

/** The start of an answer, on one line and quoted, for a message that says what was wrong with it. */
export function excerpt(text: string): string {
  const single = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(single.length > 200 ? `${single.slice(0, 200)}…` : single);
}

/**
 * The field value in an answer `{"value": …}`. Numbers given as numeric text and flags as "true"/"false" are
 * read as such (models often quote them); whether the value fits the field is checked as any write's is.
 */
export function parseValueAnswer(text: string, field: Pick<FieldDefinition, 'type'>): Parsed<unknown> {
  const object = jsonObjectOf(text);
  if (!object.ok) return object;
  if (!Object.hasOwn(object.value, 'value'))
    return { ok: false, reason: `the model's answer has no "value": ${excerpt(text)}` };
  const value = object.value.value;
  if (typeof value === 'string') {
    if ((field.type === 'number' || field.type === 'decimal') && /^-?\d+(\.\d+)?$/.test(value.trim()))
      return { ok: true, value: Number(value.trim()) };
    if (field.type === 'checkbox' && /^(true|false)$/i.test(value.trim()))
      return { ok: true, value: value.trim().toLowerCase() === 'true' };
  }
  return { ok: true, value };
}

export interface Verdict {
  readonly valid: boolean;
  readonly reason: string | null;
}

/** A validation's verdict in an answer `{"valid": true|false, "reason": "…"}`. */
export function parseVerdictAnswer(text: string): Parsed<Verdict> {
  const object = jsonObjectOf(text);
  if (!object.ok) return object;
  const { valid, reason } = object.value;
  if (typeof valid !== 'boolean')
    return { ok: false, reason: `the model's answer has no boolean "valid": ${excerpt(text)}` };
  if (reason !== undefined && reason !== null && typeof reason !== 'string')
    return { ok: false, reason: `the model's "reason" is not text: ${excerpt(text)}` };
  const given = typeof reason === 'string' ? reason.trim().slice(0, 2000) : '';
  return { ok: true, value: { valid, reason: given === '' ? null : given } };
}
