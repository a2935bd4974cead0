/**
 * A webhook's data structure (Make's "Data structure"): the platform's own small type system. A definition is
 * data, checked by `dataStructureSchema`; `validatorOf` turns it into a checker of incoming bundles at run
 * time (no generated code, no user-supplied patterns); `determineStructure` reads the shape of a sample.
 */
import { z } from 'zod';

export const STRUCTURE_FIELD_TYPES = [
  'text',
  'number',
  'boolean',
  'date',
  'buffer',
  'collection',
  'array',
  'any',
] as const;
export type StructureFieldType = (typeof STRUCTURE_FIELD_TYPES)[number];

export interface StructureItem {
  readonly type: StructureFieldType;
  readonly required?: boolean | undefined;
  /** The fields of a collection. */
  readonly fields?: readonly StructureField[] | undefined;
  /** The items of an array. */
  readonly items?: StructureItem | undefined;
}

export interface StructureField extends StructureItem {
  readonly name: string;
}

export interface DataStructure {
  readonly fields: readonly StructureField[];
}

export const MAX_STRUCTURE_DEPTH = 8;
export const MAX_STRUCTURE_FIELDS = 500;
const MAX_REASONS = 50;

const fieldName = z
  .string()
  .min(1, 'a field name is not empty')
  .max(100, 'a field name has at most 100 characters');

const itemSchema: z.ZodType<StructureItem> = z.lazy(() =>
  z.strictObject({
    type: z.enum(STRUCTURE_FIELD_TYPES),
    required: z.boolean().optional(),
    fields: z.array(fieldSchema).max(MAX_STRUCTURE_FIELDS).optional(),
    items: itemSchema.optional(),
  }),
);
const fieldSchema: z.ZodType<StructureField> = z.lazy(() =>
  z.strictObject({
    name: fieldName,
    type: z.enum(STRUCTURE_FIELD_TYPES),
    required: z.boolean().optional(),
    fields: z.array(fieldSchema).max(MAX_STRUCTURE_FIELDS).optional(),
    items: itemSchema.optional(),
  }),
);

/** Checks what a structure's parts say about each other: the shape of a collection, an array, the bounds. */
function checkItem(
  item: StructureItem,
  path: string,
  depth: number,
  count: { fields: number },
  issues: string[],
) {
  if (depth > MAX_STRUCTURE_DEPTH) {
    issues.push(`${path}: structures nest at most ${MAX_STRUCTURE_DEPTH} deep`);
    return;
  }
  if (item.fields !== undefined && item.type !== 'collection')
    issues.push(`${path}: only a collection has fields`);
  if (item.items !== undefined && item.type !== 'array') issues.push(`${path}: only an array has items`);
  if (item.type === 'array' && item.items === undefined)
    issues.push(`${path}: an array says what its items are`);
  if (item.fields !== undefined) checkFields(item.fields, `${path}.fields`, depth + 1, count, issues);
  if (item.items !== undefined) checkItem(item.items, `${path}.items`, depth + 1, count, issues);
}

function checkFields(
  fields: readonly StructureField[],
  path: string,
  depth: number,
  count: { fields: number },
  issues: string[],
) {
  const names = new Set<string>();
  fields.forEach((field, index) => {
    count.fields += 1;
    if (names.has(field.name)) issues.push(`${path}.${index}.name: "${field.name}" is there twice`);
    names.add(field.name);
    checkItem(field, `${path}.${index}`, depth, count, issues);
  });
}

/** What the parts of a structure's fields say wrong about each other (nesting, names, bounds). */
export function structureIssues(fields: readonly StructureField[]): string[] {
  const issues: string[] = [];
  const count = { fields: 0 };
  checkFields(fields, 'fields', 1, count, issues);
  if (count.fields > MAX_STRUCTURE_FIELDS)
    issues.push(`a structure has at most ${MAX_STRUCTURE_FIELDS} fields in all, this one ${count.fields}`);
  return issues;
}

/** A structure's list of fields, checked as a whole. */
export const structureFieldsSchema = z
  .array(fieldSchema)
  .max(MAX_STRUCTURE_FIELDS)
  .superRefine((fields, ctx) => {
    for (const message of structureIssues(fields)) ctx.addIssue({ code: 'custom', message });
  });

export const dataStructureSchema: z.ZodType<DataStructure> = z
  .strictObject({ fields: structureFieldsSchema })
  .meta({
    id: 'DataStructure',
    description: 'Fields with a type (text, number, boolean, date, buffer, collection, array, any).',
  });

export interface Reason {
  readonly path: string;
  readonly message: string;
}
export type Validation = { readonly ok: true } | { readonly ok: false; readonly reasons: Reason[] };

type Check = (value: unknown, path: string, reasons: Reason[]) => void;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/** `YYYY-MM-DD`, optionally `THH:MM[:SS[.fff]]` and a zone: a fixed pattern, checked for a real calendar date. */
const ISO_DATE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

function isDate(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value !== 'string' || value.length > 40) return false;
  const match = ISO_DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  const timeOk =
    match[4] === undefined || (Number(match[4]) < 24 && Number(match[5]) < 60 && Number(match[6] ?? 0) < 60);
  return (
    date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day && timeOk
  );
}

/** A number, or text that is one (query strings and forms carry only text). */
function isNumber(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  return (
    typeof value === 'string' && value.trim() !== '' && value.length <= 100 && Number.isFinite(Number(value))
  );
}

const BOOLEAN_TEXTS = new Set(['true', 'false', '1', '0']);

function checkerOf(item: StructureItem): Check {
  const typed = typeCheck(item);
  return (value, path, reasons) => {
    if (isEmpty(value)) {
      if (item.required === true) reasons.push({ path, message: 'is required' });
      return;
    }
    typed(value, path, reasons);
  };
}

function typeCheck(item: StructureItem): Check {
  const simple =
    (accepts: (value: unknown) => boolean, expected: string): Check =>
    (value, path, reasons) => {
      if (!accepts(value)) reasons.push({ path, message: `must be ${expected}` });
    };
  switch (item.type) {
    case 'any':
      return () => undefined;
    case 'text':
      return simple((value) => typeof value === 'string', 'text');
    case 'number':
      return simple(isNumber, 'a number');
    case 'boolean':
      return simple(
        (value) => typeof value === 'boolean' || (typeof value === 'string' && BOOLEAN_TEXTS.has(value)),
        'true or false',
      );
    case 'date':
      return simple(isDate, 'a date (ISO 8601) or a time in milliseconds');
    case 'buffer':
      return simple(
        (value) => typeof value === 'string' || value instanceof Uint8Array,
        'binary data or text',
      );
    case 'collection': {
      const fields = collectionOf(item.fields ?? []);
      return (value, path, reasons) => {
        if (!isRecord(value)) return void reasons.push({ path, message: 'must be a collection (an object)' });
        fields(value, path, reasons);
      };
    }
    case 'array': {
      const each = checkerOf(item.items ?? { type: 'any' });
      return (value, path, reasons) => {
        if (!Array.isArray(value)) return void reasons.push({ path, message: 'must be an array' });
        for (let index = 0; index < value.length && reasons.length < MAX_REASONS; index++)
          each(value[index], `${path}.${index}`, reasons);
      };
    }
  }
}

function collectionOf(
  fields: readonly StructureField[],
): (value: Record<string, unknown>, path: string, reasons: Reason[]) => void {
  const checks = fields.map((field) => ({ name: field.name, check: checkerOf(field) }));
  return (value, path, reasons) => {
    for (const { name, check } of checks) {
      if (reasons.length >= MAX_REASONS) return;
      // Own keys only: `constructor` or `__proto__` in a structure never reads the prototype.
      check(
        Object.hasOwn(value, name) ? value[name] : undefined,
        path === '' ? name : `${path}.${name}`,
        reasons,
      );
    }
  };
}

/** The checker of a bundle against `structure`; extra keys are allowed (they are passed on). */
export function validatorOf(structure: DataStructure): (bundle: unknown) => Validation {
  const fields = collectionOf(structure.fields);
  return (bundle) => {
    if (!isRecord(bundle))
      return { ok: false, reasons: [{ path: '(root)', message: 'must be a collection (an object)' }] };
    const reasons: Reason[] = [];
    fields(bundle, '', reasons);
    return reasons.length === 0 ? { ok: true } : { ok: false, reasons: reasons.slice(0, MAX_REASONS) };
  };
}

/** The shape of a sample bundle ("Re-determine data structure"): nothing required, bounded in depth and size. */
export function determineStructure(sample: unknown): DataStructure {
  const budget = { fields: MAX_STRUCTURE_FIELDS };
  const itemOf = (value: unknown, depth: number): StructureItem => {
    if (depth >= MAX_STRUCTURE_DEPTH) return { type: 'any' };
    if (value instanceof Uint8Array) return { type: 'buffer' };
    if (Array.isArray(value))
      return { type: 'array', items: value.length === 0 ? { type: 'any' } : itemOf(value[0], depth + 1) };
    if (isRecord(value)) return { type: 'collection', fields: fieldsOf(value, depth + 1) };
    if (typeof value === 'number') return { type: 'number' };
    if (typeof value === 'boolean') return { type: 'boolean' };
    if (typeof value === 'string') return { type: 'text' };
    return { type: 'any' };
  };
  const fieldsOf = (value: Record<string, unknown>, depth: number): StructureField[] => {
    const fields: StructureField[] = [];
    for (const name of Object.keys(value)) {
      if (budget.fields <= 0 || name.length === 0 || name.length > 100) continue;
      budget.fields -= 1;
      fields.push({ name, ...itemOf(value[name], depth) });
    }
    return fields;
  };
  return { fields: isRecord(sample) ? fieldsOf(sample, 1) : [] };
}
