import { z } from 'zod';
import {
  canonicalDecimal,
  ENTITY_ID_JSON_FORM,
  ENTITY_ID_TEXT_FORM,
  entityIdFromText,
  entityIdSchema,
  entityIdTextSchema,
  isEntityId,
  MAX_ENTITY_ID,
} from '../../contracts/entity-id';

/**
 * Texts that JavaScript number coercion (`Number`, `+x`, `z.coerce.number()`) reads as some other id, or that
 * are not an id at all. As path segments they arrive percent-decoded: `%201` is ` 1`.
 */
const NOT_CANONICAL: readonly string[] = [
  '0x10',
  '0X10',
  '0o7',
  '0b1',
  ' 1',
  '1 ',
  ' 1 ',
  '\t1',
  '1\n',
  '1\u0000',
  '\u00a01',
  '1\u2003',
  '+1',
  '-1',
  '-0',
  '0',
  '00',
  '01',
  '0005001',
  '5001.0',
  '5001.',
  '.5',
  '5.001e3',
  '1e3',
  '1E3',
  '0.1e1',
  '1_000',
  '1,000',
  'Infinity',
  '-Infinity',
  'NaN',
  '１２',
  '١٢',
  '۱۲',
  '१२',
  '',
  'one',
  '1a',
  '2147483648',
  '4294967297',
  '9007199254740993',
  '9'.repeat(400),
  '1'.repeat(100_000),
];

const ACCEPTED: ReadonlyArray<[string, number]> = [
  ['1', 1],
  ['7', 7],
  ['10', 10],
  ['5001', 5001],
  ['2147483647', 2147483647],
];

describe('ids in a path or query string (canonical decimal text)', () => {
  test.each(ACCEPTED)('%j names id %d', (text, id) => {
    expect(entityIdFromText(text)).toBe(id);
    expect(entityIdTextSchema.parse(text)).toBe(id);
  });

  test.each(
    NOT_CANONICAL.map((text) => [text.length > 30 ? `${text.slice(0, 12)}… (${text.length})` : text, text]),
  )('%j names no id, and the refusal says which form is accepted', (_label, text) => {
    expect(entityIdFromText(text)).toBeUndefined();
    const result = entityIdTextSchema.safeParse(text);
    expect(result.success).toBe(false);
    expect(result.error?.issues).toHaveLength(1);
    const found = JSON.stringify(text.length > 24 ? `${text.slice(0, 24)}…` : text);
    expect(result.error?.issues[0]?.message).toBe(`must be ${ENTITY_ID_TEXT_FORM}, found ${found}`);
  });

  test('the coercion the rule replaces really reads those texts as ids (the cases are not vacuous)', () => {
    const coerced = NOT_CANONICAL.filter((text) => isEntityId(Number(text)));
    expect(coerced).toEqual(
      expect.arrayContaining([
        ' 1',
        '1 ',
        '+1',
        '01',
        '0005001',
        '5001.0',
        '5.001e3',
        '1e3',
        '0x10',
        '0o7',
        '0b1',
      ]),
    );
  });

  test('a refused text is echoed cut short, so a huge one does not make a huge error', () => {
    const message = entityIdTextSchema.safeParse('1'.repeat(100_000)).error?.issues[0]?.message ?? '';
    expect(message).toContain(`found "${'1'.repeat(24)}…"`);
    expect(message.length).toBeLessThan(300);
  });

  test('a missing, repeated or non-text value is refused, saying so', () => {
    const schema = z.object({ fieldId: entityIdTextSchema });
    const messageFor = (input: unknown) =>
      schema.safeParse(input).error?.issues.map((issue) => issue.message);
    expect(messageFor({})).toEqual([`is required: ${ENTITY_ID_TEXT_FORM}`]);
    expect(messageFor({ fieldId: ['1', '2'] })).toEqual(['must be given once, not 2 times']);
    expect(messageFor({ fieldId: 1 })).toEqual([`must be ${ENTITY_ID_TEXT_FORM}`]);
    expect(schema.parse({ fieldId: '12' })).toEqual({ fieldId: 12 });
    expect(schema.safeParse({ fieldId: ' 12' }).error?.issues[0]?.path).toEqual(['fieldId']);
  });
});

describe('canonical decimal counts (offset, limit)', () => {
  test.each([
    ['0', 0],
    ['7', 7],
    ['1000', 1000],
  ])('%j is %d', (text, value) => {
    expect(canonicalDecimal(text)).toBe(value);
  });

  test.each(NOT_CANONICAL.filter((text) => text !== '0' && !/^[1-9][0-9]*$/.test(text)))(
    '%j is not a canonical count',
    (text) => {
      expect(canonicalDecimal(text)).toBeUndefined();
    },
  );

  test('a canonical but huge digit string is a number beyond every range, not a wrapped one', () => {
    expect(canonicalDecimal('9'.repeat(400))).toBe(Infinity);
    expect(canonicalDecimal('2147483648')).toBe(2147483648);
  });
});

describe('ids in a JSON body (JSON integers)', () => {
  test.each([1, 7, 5001, MAX_ENTITY_ID])('%d is an id', (id) => {
    expect(entityIdSchema.parse(id)).toBe(id);
    expect(isEntityId(id)).toBe(true);
  });

  test.each([0, -1, -0, 1.5, 5001.000001, MAX_ENTITY_ID + 1, 2 ** 53, 2 ** 53 + 2, Infinity, -Infinity, NaN])(
    '%d is not an id',
    (value) => {
      expect(isEntityId(value)).toBe(false);
      expect(entityIdSchema.safeParse(value).error?.issues.map((issue) => issue.message)).toEqual([
        `must be ${ENTITY_ID_JSON_FORM}`,
      ]);
    },
  );

  test.each(['1', '5001', ' 1', '0x10', '1e3', ''])('the string %j is refused as a string', (text) => {
    expect(entityIdSchema.safeParse(text).error?.issues.map((issue) => issue.message)).toEqual([
      `must be ${ENTITY_ID_JSON_FORM}, not a string (found ${JSON.stringify(text)})`,
    ]);
  });

  test.each([true, null, [1], { id: 1 }])('%j is not an id', (value) => {
    expect(entityIdSchema.safeParse(value).error?.issues.map((issue) => issue.message)).toEqual([
      `must be ${ENTITY_ID_JSON_FORM}`,
    ]);
  });

  test('a missing id says it is required and what it must be', () => {
    const schema = z.object({ moduleId: entityIdSchema });
    expect(schema.safeParse({}).error?.issues).toEqual([
      expect.objectContaining({ path: ['moduleId'], message: `is required: ${ENTITY_ID_JSON_FORM}` }),
    ]);
  });

  test('JSON has one number type: 5001.0 and 5.001e3 in a body are the number 5001 itself', () => {
    expect(entityIdSchema.parse(JSON.parse('5001.0'))).toBe(5001);
    expect(entityIdSchema.parse(JSON.parse('5.001e3'))).toBe(5001);
  });
});
