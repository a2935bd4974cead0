import { z } from 'zod';
import { isEntityId, MAX_ENTITY_ID } from '../../../contracts/entity-id';
import { PlatformError } from '../../../contracts/errors';
import type { FieldValue } from '../../../contracts/events/records';
import {
  DECIMAL_DEFAULT_SCALE,
  LONG_TEXT_MAX_LENGTH,
  TEXT_MAX_LENGTH,
  type FieldDefinition,
} from '../../../contracts/fields';

/** What the route found for each record id a relation value names: its module, or null when it is missing. */
export type RelationTargets = ReadonlyMap<number, number | null>;

export interface FieldProblem {
  readonly path: string;
  readonly message: string;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const PHONE = /^\+?[0-9 ().-]{5,32}$/;
const emailSchema = z.email();
const datetimeSchema = z.iso.datetime({ offset: true });

function isCalendarDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function isHttpUrl(value: string): boolean {
  if (value.length > 2048 || !URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'http:' || protocol === 'https:';
}

function rangeProblem(value: number, config: Readonly<Record<string, unknown>>): string | null {
  if (typeof config.min === 'number' && value < config.min) return `must be at least ${config.min}`;
  if (typeof config.max === 'number' && value > config.max) return `must be at most ${config.max}`;
  return null;
}

function optionsOf(field: FieldDefinition): readonly string[] {
  return (field.config.options as readonly string[] | undefined) ?? [];
}

const FILLED_BY_UPLOAD = 'file fields are filled by uploading a file to the record';
/** Types a new record cannot have a value of: file fields fill on upload, buttons hold none. */
const VALUELESS_ON_CREATE = new Set(['file', 'button']);

/** A user or relation value is an id as every JSON body gives one: a number, never a string to coerce. */
function idProblem(what: 'user' | 'record', value: FieldValue): string {
  return `must be a ${what} id: a JSON integer from 1 to ${MAX_ENTITY_ID}${typeof value === 'string' ? ', not a string' : ''}`;
}

/** Why `value` does not fit `field` (null means it fits). `null` values are handled by the caller. */
function valueProblem(field: FieldDefinition, value: FieldValue, relations: RelationTargets): string | null {
  const { config } = field;
  switch (field.type) {
    case 'text':
    case 'long_text': {
      if (typeof value !== 'string') return 'must be a string';
      const fallback = field.type === 'text' ? TEXT_MAX_LENGTH : LONG_TEXT_MAX_LENGTH;
      const maxLength = typeof config.maxLength === 'number' ? config.maxLength : fallback;
      return value.length > maxLength ? `must be at most ${maxLength} characters` : null;
    }
    case 'number':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) return 'must be an integer';
      return rangeProblem(value, config);
    case 'decimal': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      const scale = typeof config.scale === 'number' ? config.scale : DECIMAL_DEFAULT_SCALE;
      if (Number(value.toFixed(scale)) !== value) return `must have at most ${scale} decimal places`;
      return rangeProblem(value, config);
    }
    case 'date':
      return typeof value === 'string' && isCalendarDate(value) ? null : 'must be a date as YYYY-MM-DD';
    case 'datetime':
      return typeof value === 'string' && datetimeSchema.safeParse(value).success
        ? null
        : 'must be an ISO 8601 date-time with a time zone (2030-01-31T09:30:00Z)';
    case 'checkbox':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'select':
      return typeof value === 'string' && optionsOf(field).includes(value)
        ? null
        : `must be one of: ${optionsOf(field).join(', ')}`;
    case 'multi_select': {
      const options = optionsOf(field);
      if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || !options.includes(item)))
        return `must be a list of: ${options.join(', ')}`;
      return new Set(value).size === value.length ? null : 'must not repeat an option';
    }
    case 'email':
      return typeof value === 'string' && emailSchema.safeParse(value).success
        ? null
        : 'must be an email address';
    case 'url':
      return typeof value === 'string' && isHttpUrl(value) ? null : 'must be an absolute http(s) URL';
    case 'phone':
      return typeof value === 'string' && PHONE.test(value) && (value.match(/\d/g)?.length ?? 0) >= 5
        ? null
        : 'must be a phone number (digits, optional +, spaces, dashes, dots, parentheses)';
    case 'user':
      return isEntityId(value) ? null : idProblem('user', value);
    case 'relation': {
      if (!isEntityId(value)) return idProblem('record', value);
      const target = relations.get(value);
      if (target === undefined || target === null) return `record ${value} does not exist`;
      return target === config.moduleId
        ? null
        : `record ${value} is not in module ${String(config.moduleId)}`;
    }
    case 'file':
      return FILLED_BY_UPLOAD;
    case 'button':
      return 'button fields hold no value';
  }
}

/**
 * Checks record values against the module's fields: every key must name a field, every value must fit its
 * type, and (on create, or when a value is cleared) required fields must have a value. Every problem is
 * reported at once, each with its path.
 */
export function checkRecordValues(
  fields: readonly FieldDefinition[],
  values: Readonly<Record<string, FieldValue>>,
  relations: RelationTargets,
  mode: 'create' | 'update',
): void {
  const byKey = new Map(fields.map((field) => [field.key, field]));
  const problems: FieldProblem[] = [];
  for (const [key, value] of Object.entries(values)) {
    const field = byKey.get(key);
    const path = `fields.${key}`;
    if (!field) problems.push({ path, message: 'no such field in this module' });
    else if (field.type === 'file') problems.push({ path, message: FILLED_BY_UPLOAD });
    else if (value === null) {
      if (field.required) problems.push({ path, message: 'is required' });
    } else {
      const problem = valueProblem(field, value, relations);
      if (problem) problems.push({ path, message: problem });
    }
  }
  if (mode === 'create') {
    for (const field of fields)
      if (field.required && !VALUELESS_ON_CREATE.has(field.type) && !Object.hasOwn(values, field.key))
        problems.push({ path: `fields.${field.key}`, message: 'is required' });
  }
  if (problems.length === 0) return;
  const unknownOnly = problems.every((problem) => problem.message === 'no such field in this module');
  throw new PlatformError(
    unknownOnly ? 'unknown_field' : 'validation_failed',
    `invalid record values: ${problems.map((problem) => `${problem.path}: ${problem.message}`).join('; ')}`,
    problems,
  );
}

/** The record ids the values point at through relation fields (for the route to look up). */
export function relationIdsOf(
  fields: readonly FieldDefinition[],
  values: Readonly<Record<string, FieldValue>>,
): number[] {
  const ids = new Set<number>();
  for (const field of fields) {
    const value = Object.hasOwn(values, field.key) ? values[field.key] : undefined;
    if (field.type === 'relation' && isEntityId(value)) ids.add(value);
  }
  return [...ids];
}
