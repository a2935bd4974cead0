import { PlatformError } from './errors';

/**
 * The prompts of AI transforms and validations refer to the record in double braces: `{{name}}`, `{{id}}`,
 * `{{value}}` (the target field's current value) and `{{<field key>}}`. References are checked when a
 * configuration is saved and filled in when it runs.
 */
const REFERENCE = /\{\{\s*([A-Za-z0-9_]{1,64})\s*\}\}/g;

/** What every prompt may refer to besides the module's field keys. */
export const RECORD_REFERENCES = ['name', 'id', 'value'] as const;

/** The names a prompt refers to, each once, in order of first use. */
export function promptReferences(prompt: string): string[] {
  return [...new Set([...prompt.matchAll(REFERENCE)].map((match) => match[1]!))];
}

/** References that are neither a record reference nor one of `fieldKeys`. */
export function unknownReferences(prompt: string, fieldKeys: Iterable<string>): string[] {
  const known = new Set<string>([...RECORD_REFERENCES, ...fieldKeys]);
  return promptReferences(prompt).filter((reference) => !known.has(reference));
}

/** A value as it reads in a prompt: text as it is, anything else as JSON, nothing as an empty string. */
export function promptText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The longest a prompt may be once its references are filled in, in characters: a reference may stand for a
 * long value and be used many times, and the prompt is built before any balance check could stop it.
 */
export const MAX_RENDERED_PROMPT_CHARS = 200_000;

const PROMPT_TOO_LONG = `the prompt with its references filled in is longer than ${MAX_RENDERED_PROMPT_CHARS} characters; refer to fewer or shorter values`;

/**
 * The prompt with each reference replaced by its value (`values` by reference name). Refused (400) as soon as
 * it would grow past `MAX_RENDERED_PROMPT_CHARS`, before the longer text is built.
 */
export function fillPrompt(prompt: string, values: Readonly<Record<string, unknown>>): string {
  const parts: string[] = [];
  let length = 0;
  let from = 0;
  const add = (part: string) => {
    length += part.length;
    if (length > MAX_RENDERED_PROMPT_CHARS)
      throw new PlatformError('validation_failed', PROMPT_TOO_LONG, [
        { path: 'prompt', message: PROMPT_TOO_LONG },
      ]);
    parts.push(part);
  };
  for (const match of prompt.matchAll(REFERENCE)) {
    add(prompt.slice(from, match.index));
    const reference = match[1]!;
    add(Object.hasOwn(values, reference) ? promptText(values[reference]) : '');
    from = match.index + match[0].length;
  }
  add(prompt.slice(from));
  return parts.join('');
}
