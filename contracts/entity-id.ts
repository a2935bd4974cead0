/**
 * The one rule for the integer ids of spaces, modules, records, fields, users… wherever a request names one.
 * An id has exactly one spelling: in a path or a query string, the canonical decimal text (`[1-9][0-9]*`);
 * in a JSON body, a JSON number. Number coercion is never used: it reads `0x10`, ` 1`, `1.0`, `1e3`,
 * `0005001` as other ids, so a request would act on an entity it did not name.
 */
import { z } from 'zod';

/** Ids are allocated from 1 and stay within a signed 32-bit integer, the range every client can hold. */
export const MAX_ENTITY_ID = 2 ** 31 - 1;

/** How the API description shows an id, in a body, a path or a query string alike. */
export const ENTITY_ID_JSON_SCHEMA = {
  type: 'integer',
  format: 'int32',
  minimum: 1,
  maximum: MAX_ENTITY_ID,
} as const;

export const ENTITY_ID_TEXT_FORM = `an id: a whole number from 1 to ${MAX_ENTITY_ID} in plain decimal digits (no sign, spaces, leading zeros, fraction, exponent or other notation)`;
export const ENTITY_ID_JSON_FORM = `an id: a JSON integer from 1 to ${MAX_ENTITY_ID}`;

/** Zero, or a non-zero ASCII digit followed by ASCII digits: one spelling per number (linear to match). */
const CANONICAL_DECIMAL = /^(?:0|[1-9][0-9]*)$/;

/** At most this much of a refused text is echoed in the error: enough to recognise it. */
const ECHOED_CHARACTERS = 24;

/**
 * The value of `text` when it is the canonical decimal form of a non-negative integer (`0`, `7`, `5001`; not
 * `007`, `+7`, ` 7`, `7.0`, `7e0`, `0x7`, `７`), else undefined. A very long digit string gives a number
 * beyond every range the callers check (up to Infinity), so it is refused by their range check.
 */
export function canonicalDecimal(text: string): number | undefined {
  return CANONICAL_DECIMAL.test(text) ? Number(text) : undefined;
}

/** The text of a refused value as an error shows it: quoted, and cut short when long. */
export function echoed(text: string): string {
  return JSON.stringify(text.length > ECHOED_CHARACTERS ? `${text.slice(0, ECHOED_CHARACTERS)}…` : text);
}

export function isEntityId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_ENTITY_ID;
}

/** The id a path segment or query value names, or undefined when the text is not an id's canonical form. */
export function entityIdFromText(text: string): number | undefined {
  const value = canonicalDecimal(text);
  return value !== undefined && isEntityId(value) ? value : undefined;
}

/** An id in a path or a query string (already percent-decoded): its canonical decimal text, as a number. */
export const entityIdTextSchema = z
  .string({
    error: (issue) =>
      issue.input === undefined
        ? `is required: ${ENTITY_ID_TEXT_FORM}`
        : Array.isArray(issue.input)
          ? `must be given once, not ${issue.input.length} times`
          : `must be ${ENTITY_ID_TEXT_FORM}`,
  })
  .transform((text, context) => {
    const id = entityIdFromText(text);
    if (id !== undefined) return id;
    context.addIssue({ code: 'custom', message: `must be ${ENTITY_ID_TEXT_FORM}, found ${echoed(text)}` });
    return z.NEVER;
  });

/**
 * An id in a JSON body: a JSON number that is an integer in range. A string is refused (ids are numbers in
 * every body the API answers), so `"7"` and `" 7"` cannot name record 7 by coercion.
 */
export const entityIdSchema = z
  .number({
    error: (issue) =>
      issue.input === undefined
        ? `is required: ${ENTITY_ID_JSON_FORM}`
        : typeof issue.input === 'string'
          ? `must be ${ENTITY_ID_JSON_FORM}, not a string (found ${echoed(issue.input)})`
          : `must be ${ENTITY_ID_JSON_FORM}`,
  })
  .refine(isEntityId, `must be ${ENTITY_ID_JSON_FORM}`)
  // The refinement makes it an integer in range; the API description says so (clients then hold an int32).
  .meta({ override: ENTITY_ID_JSON_SCHEMA });
