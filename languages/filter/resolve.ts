/**
 * Checks a parsed filter/order against the fields a list route allows, maps field names to document paths
 * and converts values to the field's type, producing the `StoreFilter`/`StoreSort` the read stores compile.
 */
import { PlatformError } from '../../contracts/errors';
import type { FilterCondition, FilterNode, FilterOperator, OrderTerm } from './ast';
import type { Scalar, StoreFilter, StoreSort } from './store-query';

export type FieldType = 'string' | 'integer' | 'number' | 'boolean' | 'datetime' | 'date';

export interface FieldSpec {
  /** Dot-separated document path, segments `[A-Za-z0-9_]+` (the read-store contract). */
  readonly path: string;
  readonly type: FieldType;
  /** Default true. */
  readonly filterable?: boolean;
  /** Default true. */
  readonly sortable?: boolean;
  /**
   * The field holds a list (a multi-select's options, a file field's file ids): `=` `!=` `...` test
   * membership, `=` with an empty value also matches an empty list; no ordering operators, no LIKE.
   */
  readonly list?: boolean;
  /** Only `=` and `!=` with an empty value apply (is the field empty or not): a file field's file ids. */
  readonly emptinessOnly?: boolean;
  /** The values a select field allows: a filter value outside them is a 400 that lists them. */
  readonly options?: readonly string[];
  /** A boolean field whose unset value means false (an unticked checkbox): `=false` matches it too. */
  readonly unsetIsFalse?: boolean;
  /** How errors name the field's type, when not by `type` (a record field's type: `multi_select`). */
  readonly typeName?: string;
}

/**
 * Looks a field name up. `fieldNames` lists the static names for error messages; a plain function works
 * too (errors then name no alternatives).
 */
export interface FieldCatalogue {
  (name: string): FieldSpec | undefined;
  readonly fieldNames?: readonly string[];
}

/** One entry of `validation_failed` details; the same shape the list-parameter schema reports. */
export interface ValidationIssue {
  readonly path: string;
  readonly message: string;
  readonly field?: string;
  readonly position?: number;
  readonly expected?: string;
  readonly found?: string;
}

export interface UnknownFieldDetails {
  readonly field: string;
  readonly position?: number;
  readonly allowed: readonly string[];
}

type FieldUse = 'filter' | 'sort';

const STORE_PATH = /^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$/;

/**
 * A catalogue of static fields, optionally backed by `dynamic` for names that cannot be listed (such as
 * `fields.12` for custom fields). Static names win; prototype keys like `constructor` are never fields.
 */
export function catalogue(
  fields: Readonly<Record<string, FieldSpec>>,
  dynamic?: (name: string) => FieldSpec | undefined,
): FieldCatalogue {
  for (const [name, spec] of Object.entries(fields)) {
    // A bad path is a programming error in the route's catalogue, so fail when it is built.
    if (!STORE_PATH.test(spec.path))
      throw new Error(`field "${name}" has an invalid store path "${spec.path}"`);
  }
  const lookup = (name: string): FieldSpec | undefined =>
    Object.hasOwn(fields, name) ? fields[name] : dynamic?.(name);
  return Object.assign(lookup, { fieldNames: Object.keys(fields) });
}

function allows(spec: FieldSpec, use: FieldUse): boolean {
  return (use === 'filter' ? spec.filterable : spec.sortable) ?? true;
}

/** The listed field names usable for `use`, in catalogue order. */
export function allowedFieldNames(fields: FieldCatalogue, use: FieldUse): string[] {
  return (fields.fieldNames ?? []).filter((name) => {
    const spec = fields(name);
    return spec !== undefined && allows(spec, use);
  });
}

function at(position: number | undefined): string {
  return position === undefined ? '' : ` at position ${position}`;
}

function lookupField(
  field: string,
  position: number | undefined,
  fields: FieldCatalogue,
  use: FieldUse,
): FieldSpec {
  const spec = fields(field);
  if (spec && allows(spec, use)) return spec;
  const subject = use === 'filter' ? 'filter' : 'order';
  const allowed = allowedFieldNames(fields, use);
  const problem = spec
    ? `field "${field}"${at(position)} cannot be ${use === 'filter' ? 'filtered on' : 'sorted on'}`
    : `unknown field "${field}"${at(position)}`;
  const listing =
    allowed.length > 0
      ? `; ${use === 'filter' ? 'filterable' : 'sortable'} fields: ${allowed.join(', ')}`
      : '';
  const details: UnknownFieldDetails = { field, position, allowed };
  throw new PlatformError('unknown_field', `${subject}: ${problem}${listing}`, details);
}

function invalidValue(
  condition: FilterCondition,
  expected: string,
  found: string,
  message: string,
): PlatformError {
  const issue: ValidationIssue = {
    path: 'filter',
    message,
    field: condition.field,
    position: condition.position,
    expected,
    found,
  };
  return new PlatformError('validation_failed', message, [issue]);
}

const EXPECTED_BY_TYPE: Readonly<Record<FieldType, string>> = {
  string: 'a string',
  integer: 'an integer in canonical decimal form',
  number: 'a number',
  boolean: 'true, false, 1 or 0',
  datetime: 'an ISO 8601 date-time such as 2024-05-01T12:00:00Z',
  date: 'a date as YYYY-MM-DD',
};

/** Canonical decimal only: `0x10`, `1e3`, `+5`, `-0` and `0005` name other numbers in other notations. */
const INTEGER = /^(?:0|-?[1-9]\d*)$/;
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** ISO 8601 extended format; a date alone means midnight UTC and a time without an offset is taken as UTC. */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

function isCalendarDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  return day <= days;
}

function parseDate(text: string): string | undefined {
  const match = DATE.exec(text);
  if (!match) return undefined;
  return isCalendarDate(Number(match[1]), Number(match[2]), Number(match[3])) ? text : undefined;
}

/**
 * An ISO 8601 date-time as the UTC instant `toISOString` prints (`2024-05-01T12:00:00.000Z`), undefined when
 * it is not one. Filters compare date-times in this form, so stored ones are kept in it too (records.ts).
 */
export function parseDateTime(text: string): string | undefined {
  const match = DATE_TIME.exec(text);
  if (!match) return undefined;
  const part = (index: number): number => Number(match[index] ?? 0);
  const [year, month, day, hour, minute, second] = [part(1), part(2), part(3), part(4), part(5), part(6)];
  const fraction = match[7] ?? '';
  const [sign, offsetHours, offsetMinutes] = [match[9], part(10), part(11)];
  if (!isCalendarDate(year, month, day) || hour > 23 || minute > 59 || second > 59) return undefined;
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  // setUTCFullYear, unlike Date.UTC, does not read years 0-99 as 1900-1999.
  const instant = new Date(0);
  instant.setUTCFullYear(year, month - 1, day);
  instant.setUTCHours(hour, minute, second, Number(fraction.padEnd(3, '0').slice(0, 3)));
  const offsetMs = (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return new Date(instant.getTime() - offsetMs).toISOString();
}

/** The value converted to the field's type, or undefined when it is not a valid value of that type. */
function convert(text: string, type: FieldType): Scalar | undefined {
  switch (type) {
    case 'string':
      return text;
    case 'integer': {
      const value = Number(text);
      return INTEGER.test(text) && Number.isSafeInteger(value) ? value : undefined;
    }
    case 'number': {
      const value = Number(text);
      return DECIMAL.test(text) && Number.isFinite(value) ? value : undefined;
    }
    case 'boolean': {
      const lower = text.toLowerCase();
      if (lower === 'true' || lower === '1') return true;
      if (lower === 'false' || lower === '0') return false;
      return undefined;
    }
    case 'datetime':
      return parseDateTime(text);
    case 'date':
      return parseDate(text);
  }
}

function convertValue(condition: FilterCondition, text: string, type: FieldType): Scalar {
  const value = convert(text, type);
  if (value !== undefined) return value;
  const expected = EXPECTED_BY_TYPE[type];
  const message = `filter: field "${condition.field}" at position ${condition.position} expects ${expected}, found ${JSON.stringify(text)}`;
  throw invalidValue(condition, expected, text, message);
}

function emptyValueError(condition: FilterCondition, type: FieldType): PlatformError {
  const expected = EXPECTED_BY_TYPE[type];
  const message = `filter: field "${condition.field}" at position ${condition.position} expects ${expected} after "${condition.operator}", found an empty value`;
  return invalidValue(condition, expected, '', message);
}

const COMPARE_OPS = {
  '=': 'eq',
  '!=': 'ne',
  '>': 'gt',
  '>=': 'gte',
  '<': 'lt',
  '<=': 'lte',
} as const satisfies Partial<Record<FilterOperator, string>>;

function onlyValue(condition: FilterCondition): string {
  if (condition.values.length !== 1) {
    // The parser never builds this; only a hand-made AST can.
    throw new Error(
      `filter condition on "${condition.field}" with ${condition.operator} needs exactly one value`,
    );
  }
  return condition.values[0]!;
}

function typeNameOf(spec: FieldSpec): string {
  return spec.typeName ?? spec.type;
}

function operatorNotAllowed(condition: FilterCondition, spec: FieldSpec, allowed: string): PlatformError {
  const message = `filter: field "${condition.field}" at position ${condition.position} has type ${typeNameOf(spec)}; ${condition.operator} does not apply to it (${allowed})`;
  return invalidValue(condition, allowed, condition.operator, message);
}

/** A select's value must be one of its options: a typo would otherwise silently match nothing. */
function checkedOption(condition: FilterCondition, spec: FieldSpec, value: Scalar): Scalar {
  if (spec.options === undefined || typeof value !== 'string' || spec.options.includes(value)) return value;
  const expected = `one of the options ${spec.options.map((option) => JSON.stringify(option)).join(', ')}`;
  const message = `filter: field "${condition.field}" at position ${condition.position} expects ${expected}, found ${JSON.stringify(value)}`;
  throw invalidValue(condition, expected, value, message);
}

function typedValue(condition: FilterCondition, spec: FieldSpec, text: string): Scalar {
  return checkedOption(condition, spec, convertValue(condition, text, spec.type));
}

/** `=false` / `!=false` on a boolean whose unset value means false; other conditions need no rewrite. */
function unsetAsFalse(path: string, op: 'eq' | 'ne', value: Scalar): StoreFilter | undefined {
  if (value !== false) return undefined;
  return op === 'eq'
    ? { kind: 'in', path, values: [false, null] }
    : { kind: 'compare', path, op: 'eq', value: true };
}

function resolveCondition(condition: FilterCondition, fields: FieldCatalogue): StoreFilter {
  const spec = lookupField(condition.field, condition.position, fields, 'filter');
  const { path, type } = spec;
  const { operator } = condition;
  // Catalogue numbers are never stored as booleans: adapters may skip telling 1 from true.
  const numeric = type === 'integer' || type === 'number' ? { numeric: true } : {};
  const list = spec.list === true ? { list: true } : {};
  const emptyTest =
    (operator === '=' || operator === '!=') && condition.values.length === 1 && condition.values[0] === '';
  if (spec.emptinessOnly === true && !emptyTest)
    throw operatorNotAllowed(condition, spec, 'only = and != with an empty value: whether it is empty');
  switch (operator) {
    case '...': {
      if (condition.values.length === 0 || condition.values.includes(''))
        throw emptyValueError(condition, type);
      const values = condition.values.map((text) => typedValue(condition, spec, text));
      if (spec.unsetIsFalse === true && values.includes(false)) values.push(null);
      return { kind: 'in', path, values, ...numeric, ...list };
    }
    case '~':
    case '!~': {
      if (type !== 'string' || spec.list === true) {
        const message = `filter: field "${condition.field}" at position ${condition.position} has type ${typeNameOf(spec)}; ${operator} (${operator === '~' ? 'LIKE' : 'NOT LIKE'}) only applies to string fields`;
        throw invalidValue(condition, 'a string field', typeNameOf(spec), message);
      }
      return { kind: 'like', path, pattern: onlyValue(condition), negate: operator === '!~' };
    }
    default: {
      const text = onlyValue(condition);
      const op = COMPARE_OPS[operator];
      if (spec.list === true && op !== 'eq' && op !== 'ne')
        throw operatorNotAllowed(condition, spec, 'a list: =, != and ... test whether it holds a value');
      if (text === '') {
        if (operator === '=' || operator === '!=') return { kind: 'compare', path, op, value: null, ...list };
        throw emptyValueError(condition, type);
      }
      const value = typedValue(condition, spec, text);
      if (spec.unsetIsFalse === true && (op === 'eq' || op === 'ne')) {
        const rewritten = unsetAsFalse(path, op, value);
        if (rewritten) return rewritten;
      }
      return { kind: 'compare', path, op, value, ...numeric, ...list };
    }
  }
}

/**
 * Checks every field of the filter and converts its values. Throws `unknown_field` for a field the
 * catalogue does not know or that cannot be filtered on, and `validation_failed` for a value of the wrong
 * type; both say where in the filter string.
 */
export function resolveFilter(node: FilterNode, fields: FieldCatalogue): StoreFilter {
  if (node.kind === 'condition') return resolveCondition(node, fields);
  return { kind: node.kind, children: node.children.map((child) => resolveFilter(child, fields)) };
}

/** Maps order terms to store sorts; throws `unknown_field` for an unknown or unsortable field. */
export function resolveOrder(terms: readonly OrderTerm[], fields: FieldCatalogue): StoreSort[] {
  return terms.map((term) => ({
    path: lookupField(term.field, term.position, fields, 'sort').path,
    direction: term.direction === 'ASC' ? 'asc' : 'desc',
  }));
}
