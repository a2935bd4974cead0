import type { FilterCondition, FilterNode, FilterOperator } from '../../languages/filter/ast';
import {
  formatFilter,
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_DEPTH,
  MAX_FILTER_LENGTH,
  MAX_ORDER_TERMS,
  parseFilter,
  parseOrder,
} from '../../languages/filter/parse';
import { PlatformError } from '../../contracts/errors';
import { thrown } from '../support/thrown';

function cond(field: string, operator: FilterOperator, values: string[], position = 0): FilterCondition {
  return { kind: 'condition', field, operator, values, position };
}

function and(...children: FilterNode[]): FilterNode {
  return { kind: 'and', children };
}

function or(...children: FilterNode[]): FilterNode {
  return { kind: 'or', children };
}

/** Positions depend on spacing; structural comparisons ignore them. */
function withoutPositions(node: FilterNode): FilterNode {
  if (node.kind === 'condition') return { ...node, position: 0 };
  return { kind: node.kind, children: node.children.map(withoutPositions) };
}

describe('parseFilter', () => {
  describe('operators', () => {
    it.each<[string, FilterOperator, string]>([
      ['status=active', '=', 'active'],
      ['status!=active', '!=', 'active'],
      ['age>18', '>', '18'],
      ['age>=18', '>=', '18'],
      ['age<65', '<', '65'],
      ['age<=65', '<=', '65'],
      ['name~%smith%', '~', '%smith%'],
      ['name!~%smith%', '!~', '%smith%'],
    ])('given %s, when parsed, then it is one condition with operator %s', (text, operator, value) => {
      // when
      const node = parseFilter(text);
      // then
      expect(node).toEqual(cond(text.slice(0, text.indexOf(operator)), operator, [value]));
    });

    it('given the IN operator, when parsed, then its comma-separated values form one condition', () => {
      expect(parseFilter('id...1,2,3')).toEqual(cond('id', '...', ['1', '2', '3']));
    });

    it('given an IN set with spaces and quoted items, when parsed, then items are trimmed and unquoted', () => {
      expect(parseFilter('tag... a , "b,c" ,  "  d "')).toEqual(cond('tag', '...', ['a', 'b,c', '  d ']));
    });

    it('given a single IN item, when parsed, then it is a one-value set', () => {
      expect(parseFilter('id...7')).toEqual(cond('id', '...', ['7']));
    });

    it('given = with nothing after it, when parsed, then the value is the empty string', () => {
      expect(parseFilter('email=')).toEqual(cond('email', '=', ['']));
      expect(parseFilter('email=;name=x')).toEqual(
        and(cond('email', '=', ['']), cond('name', '=', ['x'], 7)),
      );
    });

    it.each<[string, FilterOperator]>([
      ['email!=', '!='],
      ['email~', '~'],
      ['email!~', '!~'],
    ])('given %s, when parsed, then the empty value is kept', (text, operator) => {
      expect(parseFilter(text)).toEqual(cond('email', operator, ['']));
    });

    it('given a value starting with dots after ..., when parsed, then the operator takes exactly three dots', () => {
      expect(parseFilter('rank....5')).toEqual(cond('rank', '...', ['.5']));
    });

    it('given dotted field names, when parsed, then the dots belong to the name and not to ...', () => {
      expect(parseFilter('fields.12...a,b')).toEqual(cond('fields.12', '...', ['a', 'b']));
      expect(parseFilter('meta.created_at>=2024')).toEqual(cond('meta.created_at', '>=', ['2024']));
    });
  });

  describe('joins and precedence', () => {
    it('given a=1;b=2|c=3, when parsed, then AND binds tighter: (a ∧ b) ∨ c', () => {
      expect(parseFilter('a=1;b=2|c=3')).toEqual(
        or(and(cond('a', '=', ['1'], 0), cond('b', '=', ['2'], 4)), cond('c', '=', ['3'], 8)),
      );
    });

    it('given a=1|b=2&c=3, when parsed, then it is a ∨ (b ∧ c)', () => {
      expect(parseFilter('a=1|b=2&c=3')).toEqual(
        or(cond('a', '=', ['1'], 0), and(cond('b', '=', ['2'], 4), cond('c', '=', ['3'], 8))),
      );
    });

    it('given ; and & mixed, when parsed, then both mean AND and form one flat node', () => {
      expect(withoutPositions(parseFilter('a=1;b=2&c=3'))).toEqual(
        and(cond('a', '=', ['1']), cond('b', '=', ['2']), cond('c', '=', ['3'])),
      );
    });

    it('given parentheses, when parsed, then they override precedence', () => {
      expect(parseFilter('a=1;(b=2|c=3)')).toEqual(
        and(cond('a', '=', ['1'], 0), or(cond('b', '=', ['2'], 5), cond('c', '=', ['3'], 9))),
      );
    });

    it('given redundant parentheses, when parsed, then single-child and same-kind nodes are collapsed', () => {
      expect(parseFilter('((a=1))')).toEqual(cond('a', '=', ['1'], 2));
      expect(withoutPositions(parseFilter('(a=1;b=2);(c=3;(d=4))'))).toEqual(
        and(cond('a', '=', ['1']), cond('b', '=', ['2']), cond('c', '=', ['3']), cond('d', '=', ['4'])),
      );
      expect(withoutPositions(parseFilter('a=1|(b=2|(c=3))'))).toEqual(
        or(cond('a', '=', ['1']), cond('b', '=', ['2']), cond('c', '=', ['3'])),
      );
    });

    it('given deeply mixed groups, when parsed, then the tree alternates and/or', () => {
      expect(withoutPositions(parseFilter('(a=1|b=2);(c=3|(d=4;e=5))'))).toEqual(
        and(
          or(cond('a', '=', ['1']), cond('b', '=', ['2'])),
          or(cond('c', '=', ['3']), and(cond('d', '=', ['4']), cond('e', '=', ['5']))),
        ),
      );
    });
  });

  describe('grouped values', () => {
    it('given status=(active|pending), when parsed, then it is an OR of = conditions on status', () => {
      expect(parseFilter('status=(active|pending)')).toEqual(
        or(cond('status', '=', ['active']), cond('status', '=', ['pending'])),
      );
    });

    it('given a ~ group, when parsed, then it is an OR of LIKE conditions', () => {
      expect(parseFilter('name~(a%|%b)')).toEqual(or(cond('name', '~', ['a%']), cond('name', '~', ['%b'])));
    });

    it.each<[string, FilterOperator]>([
      ['status!=(a|b)', '!='],
      ['status!~(a|b)', '!~'],
    ])('given %s, when parsed, then it is an AND of the negated conditions', (text, operator) => {
      expect(parseFilter(text)).toEqual(
        and(cond('status', operator, ['a']), cond('status', operator, ['b'])),
      );
    });

    it('given a group with spaces and quoted items, when parsed, then items are trimmed and unquoted', () => {
      expect(parseFilter('status = ( a b | "c|d" | "" )')).toEqual(
        or(cond('status', '=', ['a b']), cond('status', '=', ['c|d']), cond('status', '=', [''])),
      );
    });

    it('given a one-value group, when parsed, then it is a plain condition', () => {
      expect(parseFilter('status=(active)')).toEqual(cond('status', '=', ['active']));
    });

    it('given a negated group joined with more conditions, when parsed, then the ANDs are flattened', () => {
      expect(withoutPositions(parseFilter('status!=(a|b);x=1'))).toEqual(
        and(cond('status', '!=', ['a']), cond('status', '!=', ['b']), cond('x', '=', ['1'])),
      );
    });

    it('given a group inside an OR, when parsed, then the ORs are flattened', () => {
      expect(withoutPositions(parseFilter('status=(a|b)|x=1'))).toEqual(
        or(cond('status', '=', ['a']), cond('status', '=', ['b']), cond('x', '=', ['1'])),
      );
    });
  });

  describe('values, quotes and escapes', () => {
    it('given a quoted value with separators, when parsed, then they are part of the value', () => {
      expect(parseFilter('name="a;b|c&d(e)f,g"')).toEqual(cond('name', '=', ['a;b|c&d(e)f,g']));
    });

    it('given escaped quote and backslash inside quotes, when parsed, then they are unescaped', () => {
      expect(parseFilter('name="say \\"hi\\" \\\\ bye"')).toEqual(cond('name', '=', ['say "hi" \\ bye']));
    });

    it('given backslash escapes in a bare value, when parsed, then each escaped character is literal', () => {
      expect(parseFilter('name=a\\;b\\&c\\|d\\(e\\)f\\\\g\\,h\\"i')).toEqual(
        cond('name', '=', ['a;b&c|d(e)f\\g,h"i']),
      );
    });

    it('given an escaped opening parenthesis, when parsed, then the value starts with "(" instead of a group', () => {
      expect(parseFilter('note=\\(draft\\)')).toEqual(cond('note', '=', ['(draft)']));
    });

    it('given an escaped comma in an IN set, when parsed, then it stays inside one item', () => {
      expect(parseFilter('tag...a\\,b,c')).toEqual(cond('tag', '...', ['a,b', 'c']));
    });

    it('given a quoted value, when parsed, then its inner whitespace is kept', () => {
      expect(parseFilter('name="  padded  "')).toEqual(cond('name', '=', ['  padded  ']));
      expect(parseFilter('name=""')).toEqual(cond('name', '=', ['']));
    });

    it('given a bare value with inner spaces and symbols, when parsed, then only the ends are trimmed', () => {
      expect(parseFilter('name =  John  Smith  ;x=1')).toEqual(
        and(cond('name', '=', ['John  Smith']), cond('x', '=', ['1'], 22)),
      );
      expect(parseFilter('url=https://x.test/a?b=c%20d')).toEqual(
        cond('url', '=', ['https://x.test/a?b=c%20d']),
      );
    });

    it('given a parenthesis or quote inside a bare value, when parsed, then it is literal', () => {
      expect(parseFilter('name=a(b')).toEqual(cond('name', '=', ['a(b']));
      expect(parseFilter('name=5" screen')).toEqual(cond('name', '=', ['5" screen']));
    });

    it('given non-ASCII values, when parsed, then they are kept as written', () => {
      expect(parseFilter('city=Zürich|city=東京')).toEqual(
        or(cond('city', '=', ['Zürich']), cond('city', '=', ['東京'], 12)),
      );
    });
  });

  describe('whitespace and positions', () => {
    it('given whitespace around every token, when parsed, then it is ignored', () => {
      expect(withoutPositions(parseFilter('  ( a = 1 ;\tb != 2 )  |  c ... 3 , 4  '))).toEqual(
        or(and(cond('a', '=', ['1']), cond('b', '!=', ['2'])), cond('c', '...', ['3', '4'])),
      );
    });

    it('given a condition after other text, when parsed, then its position is the offset of its field name', () => {
      const node = parseFilter('  a=1 ; (  bb=2 | ccc=3 )');
      expect(node).toEqual(
        and(cond('a', '=', ['1'], 2), or(cond('bb', '=', ['2'], 11), cond('ccc', '=', ['3'], 18))),
      );
    });
  });

  describe('errors', () => {
    it('given an unknown operator, when parsed, then the message names the operators, position and suggestion', () => {
      // when
      const error = thrown(() => parseFilter('status==active'));
      // then
      expect(error.kind).toBe('filter_syntax');
      expect(error.status).toBe(400);
      expect(error.message).toBe(
        'filter: expected an operator (=, !=, >, >=, <, <=, ~, !~, ...) at position 6, found "==" (did you mean "="?)',
      );
      expect(error.details).toEqual({
        position: 6,
        expected: 'an operator (=, !=, >, >=, <, <=, ~, !~, ...)',
        found: '==',
      });
    });

    it('given a word where an operator belongs, when parsed, then the message quotes that word', () => {
      expect(thrown(() => parseFilter('status x')).message).toBe(
        'filter: expected an operator (=, !=, >, >=, <, <=, ~, !~, ...) at position 7, found "x"',
      );
    });

    it('given an empty filter, when parsed, then it asks for a field name at position 0', () => {
      expect(thrown(() => parseFilter('')).message).toBe(
        'filter: expected a field name at position 0, found end of filter',
      );
      expect(thrown(() => parseFilter('   ')).details).toEqual({
        position: 3,
        expected: 'a field name',
        found: 'end of filter',
      });
    });

    it('given an unclosed parenthesis, when parsed, then the message says which "(" is open', () => {
      expect(thrown(() => parseFilter('a=1;(b=2|c=3')).message).toBe(
        'filter: expected ";", "&", "|" or ")" at position 12, found end of filter (the "(" at position 4 is not closed)',
      );
    });

    it('given an unmatched ")", when parsed, then the message says there is nothing to close', () => {
      expect(thrown(() => parseFilter('a=1)')).message).toBe(
        'filter: expected ";", "&", "|" or end of filter at position 3, found ")" (there is no "(" to close)',
      );
    });

    it('given an unterminated quote, when parsed, then the message points at the end and names the quote', () => {
      expect(thrown(() => parseFilter('name="abc;x=1')).message).toBe(
        "filter: expected a closing '\"' at position 13, found end of filter (the quote at position 5 is not closed)",
      );
    });

    it('given a group after >, when parsed, then the message says groups need =, !=, ~ or !~', () => {
      const error = thrown(() => parseFilter('age>(1|2)'));
      expect(error.message).toContain('filter: expected a value at position 4, found "("');
      expect(error.message).toContain('only allowed after =, !=, ~ and !~');
    });

    it('given parentheses after ..., when parsed, then the message shows the comma-separated form', () => {
      expect(thrown(() => parseFilter('id...(1,2)')).message).toContain('as in id...1,2,3');
    });

    it('given an unknown escape, when parsed, then the message lists the escapable characters', () => {
      expect(thrown(() => parseFilter('path=C:\\temp')).message).toBe(
        'filter: expected a character to escape after "\\" (one of ; & | ( ) , " \\) at position 7, found "\\\\t" (write \\\\ for a literal backslash)',
      );
    });

    const malformed: [string, number, string, string][] = [
      ['', 0, 'a field name', 'end of filter'],
      ['a', 1, 'an operator (=, !=, >, >=, <, <=, ~, !~, ...)', 'end of filter'],
      ['=1', 0, 'a field name', '='],
      ['1a=1', 0, 'a field name', '1a'],
      ['a=1;=2', 4, 'a field name', '='],
      ['a=1;', 4, 'a field name', 'end of filter'],
      ['a=1|', 4, 'a field name', 'end of filter'],
      ['a=1&', 4, 'a field name', 'end of filter'],
      [';a=1', 0, 'a field name', ';'],
      ['a=1;;b=2', 4, 'a field name', ';'],
      ['a=1||b=2', 4, 'a field name', '|'],
      ['a=>1', 1, 'an operator (=, !=, >, >=, <, <=, ~, !~, ...)', '=>'],
      ['a<>1', 1, 'an operator (=, !=, >, >=, <, <=, ~, !~, ...)', '<>'],
      ['a!1', 1, 'an operator (=, !=, >, >=, <, <=, ~, !~, ...)', '!'],
      ['a~=1', 1, 'an operator (=, !=, >, >=, <, <=, ~, !~, ...)', '~='],
      ['a..1', 1, 'an operator (=, !=, >, >=, <, <=, ~, !~, ...)', '..1'],
      ['a b=1', 2, 'an operator (=, !=, >, >=, <, <=, ~, !~, ...)', 'b'],
      ['a.=1', 1, 'an operator (=, !=, >, >=, <, <=, ~, !~, ...)', '.'],
      ['a>', 2, 'a value', 'end of filter'],
      ['a>=;b=1', 3, 'a value', ';'],
      ['a<""', 2, 'a value', '"'],
      ['id...', 5, 'a value', 'end of filter'],
      ['id...1,,2', 7, 'a value', ','],
      ['id...1,2,', 9, 'a value', 'end of filter'],
      ['id..."",1', 5, 'a value', '"'],
      ['id...(1,2)', 5, 'a value', '('],
      ['a>(1|2)', 2, 'a value', '('],
      ['a<=(1)', 3, 'a value', '('],
      ['s=()', 3, 'a value', ')'],
      ['s=(a||b)', 5, 'a value', '|'],
      ['s=(a|)', 5, 'a value', ')'],
      ['s=(a|b', 6, '"|" or ")"', 'end of filter'],
      ['s=(a;b)', 4, '"|" or ")"', ';'],
      ['s=("a"x)', 6, '"|" or ")"', 'x'],
      ['(a=1', 4, '";", "&", "|" or ")"', 'end of filter'],
      ['((a=1)', 6, '";", "&", "|" or ")"', 'end of filter'],
      ['(a="1" b)', 7, '";", "&", "|" or ")"', 'b'],
      ['()', 1, 'a field name', ')'],
      ['a=1)', 3, '";", "&", "|" or end of filter', ')'],
      ['a=1;b=2))', 7, '";", "&", "|" or end of filter', ')'],
      ['a="x"y', 5, '";", "&", "|" or end of filter', 'y'],
      ['a="x', 4, "a closing '\"'", 'end of filter'],
      ['a=("x|y)', 8, "a closing '\"'", 'end of filter'],
      ['a=x\\', 3, 'a character to escape after "\\" (one of ; & | ( ) , " \\)', 'end of filter'],
      ['a="x\\y"', 4, 'a character to escape after "\\" (one of ; & | ( ) , " \\)', '\\y'],
    ];

    it.each(malformed)(
      'given %j, when parsed, then filter_syntax at %i expecting %s',
      (text, position, expected, found) => {
        // when
        const error = thrown(() => parseFilter(text));
        // then
        expect(error.kind).toBe('filter_syntax');
        expect(error.details).toEqual({ position, expected, found });
        expect(error.message).toMatch(new RegExp(`^filter: expected .* at position ${position}, found `));
      },
    );
  });

  describe('limits', () => {
    it(`given a filter of exactly ${MAX_FILTER_LENGTH} characters, when parsed, then it is accepted`, () => {
      const text = `name=${'x'.repeat(MAX_FILTER_LENGTH - 5)}`;
      expect(parseFilter(text)).toEqual(cond('name', '=', ['x'.repeat(MAX_FILTER_LENGTH - 5)]));
    });

    it('given a filter one character too long, when parsed, then it is refused before parsing', () => {
      // given
      const text = `name=${'x'.repeat(MAX_FILTER_LENGTH - 4)}`;
      // when
      const error = thrown(() => parseFilter(text));
      // then
      expect(error.kind).toBe('filter_syntax');
      expect(error.message).toBe(
        `filter: expected at most ${MAX_FILTER_LENGTH} characters at position ${MAX_FILTER_LENGTH}, found ${MAX_FILTER_LENGTH + 1} characters`,
      );
      expect(error.details).toEqual({
        position: MAX_FILTER_LENGTH,
        expected: `at most ${MAX_FILTER_LENGTH} characters`,
        found: `${MAX_FILTER_LENGTH + 1} characters`,
      });
    });

    it(`given ${MAX_FILTER_DEPTH} nested parentheses, when parsed, then it is accepted`, () => {
      const text = `${'('.repeat(MAX_FILTER_DEPTH)}a=1${')'.repeat(MAX_FILTER_DEPTH)}`;
      expect(parseFilter(text)).toEqual(cond('a', '=', ['1'], MAX_FILTER_DEPTH));
    });

    it('given one more level of nesting, when parsed, then the extra "(" is reported', () => {
      const text = `${'('.repeat(MAX_FILTER_DEPTH + 1)}a=1${')'.repeat(MAX_FILTER_DEPTH + 1)}`;
      const error = thrown(() => parseFilter(text));
      expect(error.kind).toBe('filter_syntax');
      expect(error.details).toEqual({
        position: MAX_FILTER_DEPTH,
        expected: `at most ${MAX_FILTER_DEPTH} nested parentheses`,
        found: '(',
      });
    });

    it(`given ${MAX_FILTER_CONDITIONS} conditions, when parsed, then it is accepted`, () => {
      const text = Array.from({ length: MAX_FILTER_CONDITIONS }, (_, index) => `f${index}=1`).join(';');
      const node = parseFilter(text);
      expect(node.kind === 'and' && node.children.length).toBe(MAX_FILTER_CONDITIONS);
    });

    it('given one condition too many, when parsed, then the first extra condition is reported', () => {
      // given
      const conditions = Array.from({ length: MAX_FILTER_CONDITIONS + 1 }, (_, index) => `f${index}=1`);
      const text = conditions.join(';');
      // when
      const error = thrown(() => parseFilter(text));
      // then
      expect(error.kind).toBe('filter_syntax');
      expect(error.details).toEqual({
        position: text.lastIndexOf(`f${MAX_FILTER_CONDITIONS}=`),
        expected: `at most ${MAX_FILTER_CONDITIONS} conditions`,
        found: `f${MAX_FILTER_CONDITIONS}`,
      });
    });

    it('given a value group, when parsed, then each of its values counts as a condition', () => {
      const values = Array.from({ length: MAX_FILTER_CONDITIONS + 1 }, (_, index) => `v${index}`);
      const text = `status=(${values.join('|')})`;
      const error = thrown(() => parseFilter(text));
      expect(error.details).toMatchObject({ position: text.lastIndexOf('v100'), found: 'v100' });
    });

    it('given an IN set with many values, when parsed, then it counts as one condition', () => {
      const values = Array.from({ length: 500 }, (_, index) => String(index));
      expect(parseFilter(`id...${values.join(',')}`)).toEqual(cond('id', '...', values));
    });
  });
});

describe('parseOrder', () => {
  it('given field;DIRECTION pairs, when parsed, then each term keeps its direction and position', () => {
    expect(parseOrder('name;ASC,createdAt;DESC')).toEqual([
      { field: 'name', direction: 'ASC', position: 0 },
      { field: 'createdAt', direction: 'DESC', position: 9 },
    ]);
  });

  it('given a field without direction, when parsed, then it sorts DESC', () => {
    expect(parseOrder('createdAt')).toEqual([{ field: 'createdAt', direction: 'DESC', position: 0 }]);
  });

  it('given lower/mixed-case directions and spaces, when parsed, then they are accepted', () => {
    expect(parseOrder(' a ; asc , b;Desc ,fields.12 ')).toEqual([
      { field: 'a', direction: 'ASC', position: 1 },
      { field: 'b', direction: 'DESC', position: 11 },
      { field: 'fields.12', direction: 'DESC', position: 19 },
    ]);
  });

  it(`given ${MAX_ORDER_TERMS} terms, when parsed, then they are accepted`, () => {
    expect(parseOrder('a,b,c,d,e')).toHaveLength(MAX_ORDER_TERMS);
  });

  it('given a duplicated field, when parsed, then the message names the first occurrence', () => {
    const error = thrown(() => parseOrder('name;ASC,id,name'));
    expect(error.kind).toBe('filter_syntax');
    expect(error.message).toBe(
      'order: expected a field not already in the order at position 12, found "name" ("name" is already sorted at position 0)',
    );
  });

  it('given an unknown direction, when parsed, then the message asks for ASC or DESC', () => {
    expect(thrown(() => parseOrder('name;UP')).message).toBe(
      'order: expected a direction (ASC or DESC) at position 5, found "UP"',
    );
  });

  const malformed: [string, number, string, string][] = [
    ['', 0, 'a field name', 'end of order'],
    ['  ', 2, 'a field name', 'end of order'],
    ['a,', 2, 'a field name', 'end of order'],
    [',a', 0, 'a field name', ','],
    ['a,,b', 2, 'a field name', ','],
    ['-a', 0, 'a field name', '-'],
    ['a;', 2, 'a direction (ASC or DESC)', 'end of order'],
    ['a;ASCENDING', 2, 'a direction (ASC or DESC)', 'ASCENDING'],
    ['a;;ASC', 2, 'a direction (ASC or DESC)', ';'],
    ['a DESC', 2, '";", "," or end of order', 'DESC'],
    ['a;ASC;b', 5, '"," or end of order', ';'],
    ['a;ASC b', 6, '"," or end of order', 'b'],
    ['a,b,c,d,e,f', 10, `at most ${MAX_ORDER_TERMS} sort terms`, 'f'],
    ['a,b,a', 4, 'a field not already in the order', 'a'],
  ];

  it.each(malformed)(
    'given %j, when parsed, then filter_syntax at %i expecting %s',
    (text, position, expected, found) => {
      const error = thrown(() => parseOrder(text));
      expect(error.kind).toBe('filter_syntax');
      expect(error.details).toEqual({ position, expected, found });
      expect(error.message).toMatch(new RegExp(`^order: expected .* at position ${position}, found `));
    },
  );
});

describe('formatFilter', () => {
  it.each([
    ['a=1;b=2|c=3', 'a=1;b=2|c=3'],
    ['a=1;(b=2|c=3)', 'a=1;(b=2|c=3)'],
    [' status = ( active | pending ) ; x = 1', 'status=(active|pending);x=1'],
    ['status!=(a|b)', 'status!=(a|b)'],
    ['id... 1 , 2', 'id...1,2'],
    ['email=', 'email='],
    ['s=(""|x)', 's=(""|x)'],
    ['name=a\\;b', 'name="a;b"'],
    ['name=" x"', 'name=" x"'],
    ['name="=x"', 'name="=x"'],
    ['name="say \\"hi\\""', 'name="say \\"hi\\""'],
  ])('given %j, when parsed and printed, then it prints as %j', (text, printed) => {
    expect(formatFilter(parseFilter(text))).toBe(printed);
  });

  it('given an OR of different fields inside an AND, when printed, then it is parenthesised', () => {
    expect(formatFilter(and(cond('a', '=', ['1']), or(cond('b', '=', ['2']), cond('c', '=', ['3']))))).toBe(
      'a=1;(b=2|c=3)',
    );
  });
});

describe('round trip: formatFilter then parseFilter', () => {
  /** mulberry32: a tiny seeded generator, so a failure names a reproducible seed. */
  function seededRandom(seed: number): () => number {
    let state = seed >>> 0;
    return () => {
      state = (state + 0x6d2b79f5) >>> 0;
      let mixed = state;
      mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
      mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
      return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
    };
  }

  const FIELDS = ['status', 'id', 'name', 'fields.12', 'a_b', '_x', 'Meta.created_at2'];
  const OPERATORS: FilterOperator[] = ['=', '!=', '>', '>=', '<', '<=', '~', '!~', '...'];
  const CHARS = [...'aZ09 ;&|(),"\\=!<>~%_.-é\t'];

  function randomAst(random: () => number): FilterNode {
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const randomValue = (allowEmpty: boolean): string => {
      const length = Math.floor(random() * 7);
      const value = Array.from({ length }, () => pick(CHARS)).join('');
      return value === '' && !allowEmpty ? 'v' : value;
    };
    const condition = (): FilterCondition => {
      const operator = pick(OPERATORS);
      const values =
        operator === '...'
          ? Array.from({ length: 1 + Math.floor(random() * 4) }, () => randomValue(false))
          : [randomValue(['=', '!=', '~', '!~'].includes(operator))];
      return cond(pick(FIELDS), operator, values);
    };
    /** Same field and operator throughout, so it prints as a value group `field op (a|b)`. */
    const valueGroup = (kind: 'and' | 'or'): FilterNode => {
      const field = pick(FIELDS);
      const operator = pick<FilterOperator>(kind === 'or' ? ['=', '~'] : ['!=', '!~']);
      const children = Array.from({ length: 2 + Math.floor(random() * 2) }, () =>
        cond(field, operator, [randomValue(true)]),
      );
      return { kind, children };
    };
    const node = (depth: number, parent: 'and' | 'or' | undefined): FilterNode => {
      if (depth === 0 || random() < 0.35) return condition();
      const kind = parent === 'and' ? 'or' : parent === 'or' ? 'and' : pick(['and', 'or'] as const);
      if (random() < 0.25) return valueGroup(kind);
      const children = Array.from({ length: 2 + Math.floor(random() * 2) }, () => node(depth - 1, kind));
      return { kind, children };
    };
    return node(3, undefined);
  }

  it('given 500 random ASTs, when printed and parsed again, then each comes back unchanged', () => {
    for (let seed = 1; seed <= 500; seed++) {
      // given
      const ast = randomAst(seededRandom(seed));
      // when
      const text = formatFilter(ast);
      // then
      let reparsed: FilterNode;
      try {
        reparsed = parseFilter(text);
      } catch (error) {
        throw new Error(`seed ${seed}: ${JSON.stringify(text)} did not parse: ${(error as Error).message}`);
      }
      if (JSON.stringify(withoutPositions(reparsed)) !== JSON.stringify(ast)) {
        throw new Error(`seed ${seed}: ${JSON.stringify(text)} parsed to ${JSON.stringify(reparsed)}`);
      }
    }
  });

  it('given 2000 random strings, when parsed, then each parses or fails with a positioned filter_syntax', () => {
    const random = seededRandom(42);
    const pieces = [
      'a',
      'b.c',
      '=',
      '!=',
      '>=',
      '~',
      '...',
      ';',
      '&',
      '|',
      '(',
      ')',
      ',',
      '"',
      '\\',
      ' ',
      '1',
      '!',
      '<',
    ];
    for (let run = 0; run < 2000; run++) {
      const length = Math.floor(random() * 12);
      const text = Array.from({ length }, () => pieces[Math.floor(random() * pieces.length)]).join('');
      try {
        parseFilter(text);
      } catch (error) {
        expect(error).toBeInstanceOf(PlatformError);
        const { kind, details } = error as PlatformError;
        expect(kind).toBe('filter_syntax');
        const { position } = details as { position: number };
        expect(position).toBeGreaterThanOrEqual(0);
        expect(position).toBeLessThanOrEqual(text.length);
      }
    }
  });
});
