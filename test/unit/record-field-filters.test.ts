import { FIELD_TYPES, type FieldType } from '../../contracts/fields';
import type { FilterOperator } from '../../languages/filter/ast';
import { parseFilter, parseOrder } from '../../languages/filter/parse';
import {
  fieldReferences,
  modulesRequiredBy,
  namesUsed,
  recordFieldCatalogue,
  type RecordFieldDefinition,
} from '../../languages/filter/record-fields';
import { resolveFilter, resolveOrder, type FieldCatalogue } from '../../languages/filter/resolve';
import { thrown } from '../support/thrown';

const OPTIONS = ['x', 'y z'];

/** One field of every type in module 1, keyed by its type name, with field id = its index + 1. */
const DEFINITIONS: RecordFieldDefinition[] = FIELD_TYPES.map((type, index) => ({
  fieldId: index + 1,
  moduleId: 1,
  key: type,
  type,
  config: type === 'select' || type === 'multi_select' ? { options: OPTIONS } : {},
}));
const FIELDS = recordFieldCatalogue(DEFINITIONS);
const idOf = (type: FieldType): number => FIELD_TYPES.indexOf(type) + 1;

const resolve = (filter: string, fields: FieldCatalogue = FIELDS) =>
  resolveFilter(parseFilter(filter), fields);

/** A valid value of each type, and the stored value it becomes. */
const SAMPLES: Record<FieldType, [string, unknown]> = {
  text: ['abc', 'abc'],
  long_text: ['abc', 'abc'],
  email: ['a@b.example', 'a@b.example'],
  url: ['https://example.com', 'https://example.com'],
  phone: ['+1 555 0100', '+1 555 0100'],
  number: ['-12', -12],
  decimal: ['2.5', 2.5],
  date: ['2024-02-29', '2024-02-29'],
  datetime: ['2024-01-02T05:04:05+02:00', '2024-01-02T03:04:05.000Z'],
  checkbox: ['true', true],
  select: ['x', 'x'],
  multi_select: ['x', 'x'],
  user: ['3', 3],
  relation: ['4', 4],
  file: ['1', 1],
  button: ['1', '1'],
};

const STRING_TYPES: readonly FieldType[] = ['text', 'long_text', 'email', 'url', 'phone', 'select'];
const ORDERED_TYPES: readonly FieldType[] = [
  'number',
  'decimal',
  'date',
  'datetime',
  'checkbox',
  'user',
  'relation',
];
const OPERATORS: readonly FilterOperator[] = ['=', '!=', '>', '>=', '<', '<=', '~', '!~', '...'];

/** Which operators take a (non-empty) value on each type. */
function allows(type: FieldType, operator: FilterOperator): boolean {
  if (STRING_TYPES.includes(type)) return true;
  if (ORDERED_TYPES.includes(type)) return operator !== '~' && operator !== '!~';
  if (type === 'multi_select') return operator === '=' || operator === '!=' || operator === '...';
  return false;
}

function pathOf(type: FieldType): string {
  return type === 'datetime' ? 'instants.datetime' : `fields.${type}`;
}

const MATRIX = FIELD_TYPES.flatMap((type) => OPERATORS.map((operator) => [type, operator] as const));

describe('record field filters: every operator on every field type', () => {
  test.each(MATRIX)('%s %s a valid value', (type, operator) => {
    const [text, value] = SAMPLES[type];
    const filter = `${type}${operator}${text}`;
    if (!allows(type, operator)) {
      const error = thrown(() => resolve(filter));
      expect(error.kind).toBe(type === 'button' ? 'unknown_field' : 'validation_failed');
      expect(error.message).toContain(`"${type}"`);
      return;
    }
    const resolved = resolve(filter);
    const path = pathOf(type);
    // The same filter addressed by field id resolves alike.
    expect(resolve(`fields.${idOf(type)}${operator}${text}`)).toEqual(resolved);
    const list = type === 'multi_select' ? { list: true } : {};
    const numeric = ['number', 'decimal', 'user', 'relation'].includes(type) ? { numeric: true } : {};
    switch (operator) {
      case '~':
      case '!~':
        expect(resolved).toEqual({ kind: 'like', path, pattern: text, negate: operator === '!~' });
        return;
      case '...':
        expect(resolved).toEqual({
          kind: 'in',
          path,
          values: type === 'checkbox' ? [value] : [value],
          ...numeric,
          ...list,
        });
        return;
      default:
        expect(resolved).toMatchObject({ kind: 'compare', path, value, ...numeric, ...list });
    }
  });

  test.each(FIELD_TYPES.filter((type) => type !== 'button'))(
    '%s = with an empty value matches missing, and != with an empty value the rest',
    (type) => {
      const list = type === 'multi_select' || type === 'file' ? { list: true } : {};
      expect(resolve(`${type}=`)).toEqual({
        kind: 'compare',
        path: pathOf(type),
        op: 'eq',
        value: null,
        ...list,
      });
      expect(resolve(`${type}!=`)).toEqual({
        kind: 'compare',
        path: pathOf(type),
        op: 'ne',
        value: null,
        ...list,
      });
    },
  );

  test('an unticked checkbox is unset or false: =false matches both, !=false only true', () => {
    expect(resolve('checkbox=false')).toEqual({ kind: 'in', path: 'fields.checkbox', values: [false, null] });
    expect(resolve('checkbox=0')).toEqual({ kind: 'in', path: 'fields.checkbox', values: [false, null] });
    expect(resolve('checkbox!=false')).toEqual({
      kind: 'compare',
      path: 'fields.checkbox',
      op: 'eq',
      value: true,
    });
    expect(resolve('checkbox...false')).toEqual({
      kind: 'in',
      path: 'fields.checkbox',
      values: [false, null],
    });
    expect(resolve('checkbox!=true')).toEqual({
      kind: 'compare',
      path: 'fields.checkbox',
      op: 'ne',
      value: true,
    });
  });

  test.each<[FieldType, string]>([
    ['number', 'abc'],
    ['number', '1.5'],
    ['number', '0x10'],
    ['number', '1e3'],
    ['number', '0005'],
    ['number', '+5'],
    ['number', '-0'],
    ['number', '9007199254740993'],
    ['user', '1.0'],
    ['user', '0x1'],
    ['relation', '01'],
    ['decimal', 'abc'],
    ['decimal', 'Infinity'],
    ['decimal', '0x10'],
    ['date', '2024-02-30'],
    ['date', '2024-1-2'],
    ['date', '2024-01-02T00:00:00Z'],
    ['datetime', 'tomorrow'],
    ['datetime', '2024-13-01T00:00:00Z'],
    ['checkbox', 'yes'],
    ['checkbox', '2'],
    ['select', 'X'],
    ['select', 'nope'],
    ['multi_select', 'y'],
  ])('%s with the value %j is a 400 that names the field and the value', (type, text) => {
    for (const operator of ['=', '!=', '...'] as const) {
      const error = thrown(() => resolve(`${type}${operator}${JSON.stringify(text)}`));
      expect(error.kind).toBe('validation_failed');
      expect(error.message).toContain(`field "${type}"`);
      expect(error.message).toContain(JSON.stringify(text));
    }
  });

  test('a select value is checked against the options, and named options with spaces work quoted', () => {
    expect(resolve('select=(x|"y z")')).toEqual({
      kind: 'or',
      children: [
        { kind: 'compare', path: 'fields.select', op: 'eq', value: 'x' },
        { kind: 'compare', path: 'fields.select', op: 'eq', value: 'y z' },
      ],
    });
    expect(thrown(() => resolve('select=y')).message).toContain('one of the options "x", "y z"');
    // LIKE matches text, not options: any pattern is accepted.
    expect(resolve('select~y%')).toEqual({
      kind: 'like',
      path: 'fields.select',
      pattern: 'y%',
      negate: false,
    });
  });

  test.each(['nope', 'fields.999', 'fields.01', 'fields.x', 'fields.text.more'])(
    'the unknown field %s is a 400 E4003 naming it',
    (name) => {
      const error = thrown(() => resolve(`${name}=1`));
      expect(error.kind).toBe('unknown_field');
      expect(error.message).toContain(`unknown field "${name}"`);
      expect(error.details).toMatchObject({ field: name });
    },
  );

  test('built-in columns win over field keys; such a field is reached as fields.<fieldId>', () => {
    const shadowing = recordFieldCatalogue([
      { fieldId: 50, moduleId: 1, key: 'name', type: 'number', config: {} },
    ]);
    expect(resolve('name=Beta', shadowing)).toMatchObject({ path: 'name', value: 'Beta' });
    expect(resolve('fields.50>3', shadowing)).toMatchObject({ path: 'fields.name', value: 3, numeric: true });
  });
});

describe('record field order', () => {
  test.each(FIELD_TYPES)('order on %s', (type) => {
    const sortable = !['multi_select', 'file', 'button'].includes(type);
    if (!sortable) {
      const error = thrown(() => resolveOrder(parseOrder(`${type};ASC`), FIELDS));
      expect(error.kind).toBe('unknown_field');
      expect(error.message).toContain('cannot be sorted on');
      return;
    }
    expect(resolveOrder(parseOrder(`${type};ASC,fields.${idOf(type)}`), FIELDS)).toEqual([
      { path: pathOf(type), direction: 'asc' },
      { path: pathOf(type), direction: 'desc' },
    ]);
  });
});

describe('one key in several modules', () => {
  const field = (
    fieldId: number,
    moduleId: number,
    type: FieldType,
    options?: string[],
  ): RecordFieldDefinition => ({
    fieldId,
    moduleId,
    key: 'k',
    type,
    config: options ? { options } : {},
  });

  test('types that compare alike merge; select options are the union', () => {
    const fields = recordFieldCatalogue([
      field(1, 1, 'select', ['a']),
      field(2, 2, 'select', ['b']),
      field(3, 3, 'text'),
    ]);
    expect(thrown(() => resolve('k=c', fields)).message).toContain('one of the options "a", "b"');
    const texts = recordFieldCatalogue([field(1, 1, 'text'), field(2, 2, 'email'), field(3, 3, 'phone')]);
    expect(resolve('k=c', texts)).toEqual({ kind: 'compare', path: 'fields.k', op: 'eq', value: 'c' });
  });

  test.each<[FieldType, FieldType]>([
    ['number', 'text'],
    ['number', 'decimal'],
    ['date', 'datetime'],
    ['select', 'multi_select'],
    ['checkbox', 'number'],
    ['text', 'button'],
  ])('a key that is %s in one module and %s in another is a 400 naming both fields', (first, second) => {
    const fields = recordFieldCatalogue([field(11, 1, first), field(22, 2, second)]);
    const error = thrown(() => resolve('k=', fields));
    expect(error.kind).toBe('validation_failed');
    expect(error.message).toContain('field key "k" has different types');
    expect(error.message).toContain('fields.11');
    expect(error.message).toContain('fields.22');
    // Addressed by id, each resolves with its own type.
    expect(resolve('fields.11=', fields)).toMatchObject({ kind: 'compare', op: 'eq', value: null });
  });
});

describe('what a record list looks up', () => {
  test('names used by filters and orders, split into keys and field ids; built-in columns are not looked up', () => {
    const names = namesUsed(
      [parseFilter('status=a;(fields.12>1|moduleId=3)'), undefined],
      [parseOrder('amount;ASC,id'), undefined],
    );
    expect(names).toEqual(['status', 'fields.12', 'moduleId', 'amount', 'id']);
    expect(fieldReferences(names)).toEqual({ keys: ['status', 'amount'], fieldIds: [12] });
  });

  test.each<[string, number[] | undefined]>([
    ['moduleId=7', [7]],
    ['moduleId=7;amount>1', [7]],
    ['moduleId=(7|8);amount>1', [7, 8]],
    ['moduleId...7,8;moduleId=8', [8]],
    ['moduleId=7|amount>1', undefined],
    ['moduleId!=7', undefined],
    ['moduleId=07', undefined],
    ['amount>1', undefined],
  ])('the filter %s limits keys to the modules %j', (filter, modules) => {
    expect(modulesRequiredBy(parseFilter(filter))).toEqual(modules);
  });
});
