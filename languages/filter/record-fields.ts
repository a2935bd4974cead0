import { entityIdFromText } from '../../contracts/entity-id';
import { PlatformError } from '../../contracts/errors';
import { FIELD_TYPES, type FieldType as RecordFieldType } from '../../contracts/fields';
import type { StoreFilter, StoreSort } from './store-query';
import type { FilterNode, OrderTerm } from './ast';
import { parseFilter, parseOrder } from './parse';
import { catalogue, resolveFilter, resolveOrder, type FieldCatalogue, type FieldSpec } from './resolve';

/** The audit columns every entity read model carries. */
export const AUDIT_COLUMNS = {
  createdAt: { path: 'createdAt', type: 'datetime' },
  updatedAt: { path: 'updatedAt', type: 'datetime' },
  createdBy: { path: 'createdBy', type: 'string' },
  updatedBy: { path: 'updatedBy', type: 'string' },
} as const;

/**
 * The built-in columns a record list lets a client filter and sort on, and where they live in the records
 * read model. A field of the module whose key is one of these is reached as `fields.<fieldId>`.
 */
const recordColumns = {
  id: { path: 'recordId', type: 'integer' },
  moduleId: { path: 'moduleId', type: 'integer' },
  spaceId: { path: 'spaceId', type: 'integer' },
  name: { path: 'name', type: 'string' },
  ...AUDIT_COLUMNS,
} as const satisfies Record<string, FieldSpec>;

const deletedRecordColumns = {
  ...recordColumns,
  deletedAt: { path: 'deletedAt', type: 'datetime' },
  deletedBy: { path: 'deletedBy', type: 'string' },
} as const satisfies Record<string, FieldSpec>;

/** The built-in columns only: what a list of records answers before it knows any field definition. */
export const RECORD_FIELDS: FieldCatalogue = catalogue(recordColumns);
export const DELETED_RECORD_FIELDS: FieldCatalogue = catalogue(deletedRecordColumns);

/** What a record filter needs to know of a field definition. */
export interface RecordFieldDefinition {
  readonly fieldId: number;
  readonly moduleId: number;
  readonly key: string;
  readonly type: RecordFieldType;
  readonly config: Readonly<Record<string, unknown>>;
}

/** A field definition as the fields read model holds it, or undefined when the document is not one. */
export function recordFieldDefinitionOf(
  doc: Readonly<Record<string, unknown>>,
): RecordFieldDefinition | undefined {
  const { fieldId, moduleId, key, type, config } = doc;
  if (typeof fieldId !== 'number' || typeof moduleId !== 'number' || typeof key !== 'string')
    return undefined;
  const known = FIELD_TYPES.find((candidate) => candidate === type);
  if (!known) return undefined;
  const settings = typeof config === 'object' && config !== null ? (config as Record<string, unknown>) : {};
  return { fieldId, moduleId, key, type: known, config: settings };
}

/** The fields read model's filter for the fields with one of these keys or ids (undefined: none named). */
export function namedFieldsFilter(
  keys: readonly string[],
  fieldIds: readonly number[],
): StoreFilter | undefined {
  const named: StoreFilter[] = [];
  if (keys.length > 0) named.push({ kind: 'in', path: 'key', values: keys });
  if (fieldIds.length > 0) named.push({ kind: 'in', path: 'fieldId', values: fieldIds, numeric: true });
  if (named.length <= 1) return named[0];
  return { kind: 'or', children: named };
}

/** Where a record stores a field's value: under its key (see contracts/fields.ts). */
export function fieldValuePath(key: string): string {
  return `fields.${key}`;
}

/**
 * Where the records read model keeps a date-time value as a UTC instant (`toISOString`): the value itself
 * keeps the offset it was written with, and text order is time order only in one form.
 */
export function instantPath(key: string): string {
  return `instants.${key}`;
}

const FIELD_BY_ID_PREFIX = 'fields.';

/** The id of `fields.<fieldId>` (a field addressed by its id, spelt as every id), else undefined. */
function addressedFieldId(name: string): number | undefined {
  return name.startsWith(FIELD_BY_ID_PREFIX)
    ? entityIdFromText(name.slice(FIELD_BY_ID_PREFIX.length))
    : undefined;
}

function optionsOf(definition: RecordFieldDefinition): readonly string[] {
  const { options } = definition.config;
  return Array.isArray(options)
    ? options.filter((option): option is string => typeof option === 'string')
    : [];
}

/**
 * How a field's values compare: by the stored JSON type (numbers numerically; dates, date-times and
 * strings as text, which orders `YYYY-MM-DD` and UTC ISO date-times by time), selects by option.
 */
export function recordFieldSpec(definition: RecordFieldDefinition): FieldSpec {
  const path = fieldValuePath(definition.key);
  const typeName = definition.type;
  switch (definition.type) {
    case 'text':
    case 'long_text':
    case 'email':
    case 'url':
    case 'phone':
      return { path, type: 'string', typeName };
    case 'number':
    case 'user':
    case 'relation':
      return { path, type: 'integer', typeName };
    case 'decimal':
      return { path, type: 'number', typeName };
    case 'date':
      return { path, type: 'date', typeName };
    case 'datetime':
      return { path: instantPath(definition.key), type: 'datetime', typeName };
    case 'checkbox':
      return { path, type: 'boolean', unsetIsFalse: true, typeName };
    case 'select':
      return { path, type: 'string', options: optionsOf(definition), typeName };
    case 'multi_select':
      return { path, type: 'string', list: true, options: optionsOf(definition), sortable: false, typeName };
    case 'file':
      return { path, type: 'integer', list: true, emptinessOnly: true, sortable: false, typeName };
    case 'button':
      return { path, type: 'string', filterable: false, sortable: false, typeName };
  }
}

/** Everything of a spec but what merely describes it: two fields that agree on this filter alike. */
function behaviour(spec: FieldSpec): string {
  const { options: _options, typeName: _typeName, ...rest } = spec;
  return JSON.stringify(rest, Object.keys(rest).sort());
}

/**
 * The one spec of a key that several modules in scope define. Fields that compare alike merge (a select's
 * options are the union); a key that compares differently in two modules is ambiguous: a 400 that says
 * how to pick one.
 */
function specOfKey(key: string, definitions: readonly RecordFieldDefinition[]): FieldSpec {
  const specs = definitions.map(recordFieldSpec);
  const first = specs[0]!;
  if (specs.every((spec) => behaviour(spec) === behaviour(first))) {
    const typeNames = [...new Set(specs.map((spec) => spec.typeName))];
    const options = first.options && [...new Set(specs.flatMap((spec) => spec.options ?? []))];
    return { ...first, typeName: typeNames.join('/'), ...(options && { options }) };
  }
  const meanings = definitions
    .map((definition) => `${definition.type} in module ${definition.moduleId} (fields.${definition.fieldId})`)
    .join(', ');
  throw new PlatformError(
    'validation_failed',
    `field key "${key}" has different types in the modules of this list: ${meanings}; narrow the list to one module (moduleId=…, or GET /module/{moduleId}/item) or name one field as fields.<fieldId>`,
    [{ path: 'filter', message: `ambiguous field key "${key}"`, field: key }],
  );
}

/**
 * The record list catalogue: the built-in columns, then the fields of `definitions` (the modules in scope)
 * by key and as `fields.<fieldId>`. Built-in names win over keys.
 */
export function recordFieldCatalogue(
  definitions: readonly RecordFieldDefinition[],
  deleted = false,
): FieldCatalogue {
  const byId = new Map(definitions.map((definition) => [definition.fieldId, definition]));
  const byKey = new Map<string, RecordFieldDefinition[]>();
  for (const definition of definitions)
    byKey.set(definition.key, [...(byKey.get(definition.key) ?? []), definition]);
  return catalogue(deleted ? deletedRecordColumns : recordColumns, (name) => {
    const fieldId = addressedFieldId(name);
    if (fieldId !== undefined) {
      const definition = byId.get(fieldId);
      return definition && recordFieldSpec(definition);
    }
    const sameKey = byKey.get(name);
    return sameKey && sameKey.length > 0 ? specOfKey(name, sameKey) : undefined;
  });
}

/** The field names a filter and orders use, each once. */
export function namesUsed(
  filters: ReadonlyArray<FilterNode | undefined>,
  orders: ReadonlyArray<readonly OrderTerm[] | undefined>,
): string[] {
  const names = new Set<string>();
  const visit = (node: FilterNode): void => {
    if (node.kind === 'condition') names.add(node.field);
    else node.children.forEach(visit);
  };
  for (const filter of filters) if (filter) visit(filter);
  for (const order of orders) for (const term of order ?? []) names.add(term.field);
  return [...names];
}

/** The record-field references among `names`: keys, and ids of `fields.<fieldId>`; built-in columns are not. */
export function fieldReferences(names: readonly string[]): { keys: string[]; fieldIds: number[] } {
  const keys: string[] = [];
  const fieldIds: number[] = [];
  for (const name of names) {
    const fieldId = addressedFieldId(name);
    if (fieldId !== undefined) fieldIds.push(fieldId);
    else if (!Object.hasOwn(deletedRecordColumns, name) && !name.includes('.')) keys.push(name);
  }
  return { keys, fieldIds };
}

/**
 * The modules a filter limits a list to, when its top level requires `moduleId=<id>` (or `moduleId=(a|b)`,
 * `moduleId...a,b`): field keys then resolve against those modules' fields only. Undefined: no such limit.
 */
export function modulesRequiredBy(filter: FilterNode | undefined): number[] | undefined {
  if (!filter) return undefined;
  const idsOf = (node: FilterNode): number[] | undefined => {
    if (node.kind === 'condition') {
      const plain = node.field === 'moduleId' && (node.operator === '=' || node.operator === '...');
      if (!plain) return undefined;
      const ids = node.values.map(entityIdFromText);
      return ids.every((id): id is number => id !== undefined) ? ids : undefined;
    }
    if (node.kind === 'or') {
      const each = node.children.map(idsOf);
      return each.every((ids) => ids !== undefined) ? [...new Set(each.flat())] : undefined;
    }
    return undefined;
  };
  if (filter.kind !== 'and') return idsOf(filter);
  // Every required set limits the list: their intersection.
  let required: number[] | undefined;
  for (const child of filter.children) {
    const ids = idsOf(child);
    if (ids) required = required ? required.filter((id) => ids.includes(id)) : ids;
  }
  return required;
}

/** Finds the definitions of the record fields with these keys or ids (in the scope of a list). */
export type NamedRecordFields = (named: {
  readonly keys: readonly string[];
  readonly fieldIds: readonly number[];
}) => Promise<readonly RecordFieldDefinition[]>;

/**
 * A record list's filter and order texts resolved as its list resolves them: field keys against the fields
 * `fieldsNamed` finds, narrowed to the modules the filter requires, if it requires some. Throws the list's 400
 * when a text does not parse or names what is not there.
 */
export async function resolveRecordListTexts(
  fieldsNamed: NamedRecordFields,
  texts: { readonly filter?: string | undefined; readonly order?: string | undefined },
): Promise<{ filter?: StoreFilter; order?: StoreSort[] }> {
  const filter = texts.filter === undefined ? undefined : parseFilter(texts.filter);
  const order = texts.order === undefined ? undefined : parseOrder(texts.order);
  const required = modulesRequiredBy(filter);
  const definitions = (await fieldsNamed(fieldReferences(namesUsed([filter], [order])))).filter(
    (definition) => required === undefined || required.includes(definition.moduleId),
  );
  const fields = recordFieldCatalogue(definitions);
  return {
    ...(filter && { filter: resolveFilter(filter, fields) }),
    ...(order && { order: resolveOrder(order, fields) }),
  };
}
