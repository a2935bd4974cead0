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

/** The prompt with each reference replaced by its value (`values` by reference name). */
export function fillPrompt(prompt: string, values: Readonly<Record<string, unknown>>): string {
  return prompt.replace(REFERENCE, (_whole, reference: string) =>
    Object.hasOwn(values, reference) ? promptText(values[reference]) : '',
  );
}
