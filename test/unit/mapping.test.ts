import { compileExpression, evaluateMapped, MappingError } from '../../languages/mapping/mapping';
import { LinearRegex } from '../../languages/mapping/linear-regex';
import { evaluateHere } from '../support/expressions';

/** Mapping expressions cannot hold the integrator: every guard ends an expression with a clear error. */
describe('mapping expressions', () => {
  const evaluate = (expr: string, input: unknown = {}) => evaluateMapped({ expr }, input, {}, evaluateHere);

  test('literals stay as they are; an expression is evaluated over the bundle and the bindings', async () => {
    expect(await evaluateMapped('text', {}, {}, evaluateHere)).toBe('text');
    expect(await evaluateMapped({ expr: 'amount * 2' }, { amount: 21 }, {}, evaluateHere)).toBe(42);
    expect(await evaluateMapped({ expr: '$vars.total' }, {}, { vars: { total: 7 } }, evaluateHere)).toBe(7);
    expect(await evaluate('missing')).toBeNull();
  });

  test('a syntax error is a MappingError naming where', () => {
    expect(() => compileExpression('amount +')).toThrow(MappingError);
    expect(() => compileExpression('amount +')).toThrow(/at character \d+/);
  });

  test.each([
    ['endless recursion', '($f := function($n) { $f($n + 1) }; $f(0))'],
    ['a loop that never ends', '($f := function($n) { $n < 0 ? $n : $f($n + 1) }; $f(1))'],
    ['a sequence too long', '[1..10000000]'],
  ])('%s ends with a MappingError', async (_name, expr) => {
    const started = Date.now();
    await expect(evaluate(expr)).rejects.toThrow(MappingError);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  // Patterns that backtrack exponentially on a native RegExp: every one of them answers at once here.
  const catastrophic = ['(a+)+$', '(a|a)+$', '(a|aa)+$', '(.*a){20}$', '([a-z]+)*$', '(\\w+\\s?)*$'];
  test.each(catastrophic)('the pattern /%s/ on a long hostile input ends at once', async (pattern) => {
    const hostile = `${'a'.repeat(5_000)}!`;
    const started = Date.now();
    await evaluate(`[$match(s, /${pattern}/), $contains(s, /${pattern}/), $replace(s, /${pattern}/, "x")]`, {
      s: hostile,
    });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  test.each(['(a)\\1', 'a(?=b)', 'a(?!b)', '(?<=a)b'])(
    'the pattern /%s/ (not linear-time) is refused when the expression is compiled',
    (pattern) => {
      expect(() => compileExpression(`$match(s, /${pattern}/)`)).toThrow(/cannot be matched in linear time/);
    },
  );

  test('$match, $replace, $split, $contains and ~> give what JSONata gives with a native RegExp', async () => {
    expect(await evaluate('$match("ab12cd345", /[0-9]+/)')).toEqual([
      { match: '12', index: 2, groups: [] },
      { match: '345', index: 6, groups: [] },
    ]);
    expect(await evaluate('$match("x-y_z", /(\\w)([-_])/)')).toEqual([
      { match: 'x-', index: 0, groups: ['x', '-'] },
      { match: 'y_', index: 2, groups: ['y', '_'] },
    ]);
    expect(await evaluate('$replace("Hello World", /o/i, "0")')).toBe('Hell0 W0rld');
    expect(await evaluate('$replace("John Smith", /(\\w+)\\s(\\w+)/, "$2, $1")')).toBe('Smith, John');
    expect(await evaluate('$split("a1b22c", /[0-9]+/)')).toEqual(['a', 'b', 'c']);
    expect(await evaluate('$contains("LINE one\\nline two", /^line two$/m)')).toBe(true);
    expect(await evaluate('$replace("😀a😀b", /[ab]/, "X")')).toBe('😀X😀X');
    expect(
      await evaluate('items[name ~> /^a/i].name', {
        items: [{ name: 'Ada' }, { name: 'bob' }, { name: 'al' }],
      }),
    ).toEqual(['Ada', 'al']);
  });
});

describe('LinearRegex', () => {
  // The same patterns and inputs through RegExp and LinearRegex: every match, its groups and where it is.
  const patterns = [/[0-9]+/g, /(\w+)@(\w+)\.com/g, /^a.c$/gm, /colou?r/gi, /(x)?y/g, /\s+/g, /é+/g];
  const inputs = [
    '',
    'abc 123 def 45',
    'ada@example.com, bob@test.com',
    'abc\naXc\nab',
    'Color COLOUR',
    'y xy',
    'ééé e é',
  ];
  test.each(patterns.map((pattern) => [pattern]))('%s matches as RegExp does', (pattern) => {
    for (const input of inputs) {
      const native = new RegExp(pattern.source, pattern.flags);
      const linear = new LinearRegex(pattern);
      for (;;) {
        const expected = native.exec(input);
        const actual = linear.exec(input);
        expect(actual === null ? null : { groups: [...actual], index: actual.index }).toEqual(
          expected === null ? null : { groups: [...expected], index: expected.index },
        );
        if (expected === null) break;
        expect(linear.lastIndex).toBe(native.lastIndex);
        if (expected[0] === '') native.lastIndex = linear.lastIndex = native.lastIndex + 1;
      }
    }
  });
});
