import { join } from 'node:path';
import fc from 'fast-check';
import pino from 'pino';
import { MappingError } from '../../languages/mapping/mapping';
import { ExpressionPool } from '../../infra/expressions/pool';

jest.setTimeout(120_000);

const MEMORY_MB = 64;
const TIMEOUT_MS = 1_500;
const pool = new ExpressionPool({
  entry: join(__dirname, '..', '..', 'bin', 'expression-process.ts'),
  size: 2,
  perTenant: 1,
  memoryMb: MEMORY_MB,
  timeoutMs: TIMEOUT_MS,
  maxResultBytes: 1_000_000,
  maxInputBytes: 4_000_000,
  logger: pino({ level: 'silent' }),
});
afterAll(() => pool.close());

/** Expressions that build huge strings, huge arrays or objects, recurse deeply or never end, on any input. */
const json = fc.jsonValue({ maxDepth: 3 });
const on = (expression: fc.Arbitrary<string>) => fc.record({ expression, input: json });
const hostile = fc.oneof(
  on(fc.integer({ min: 50_000_000, max: 500_000_000 }).map((n) => `$length($pad("x", ${n}))`)),
  // The reproduction: the size comes from the request.
  fc.record({
    expression: fc.constant('$length($pad("x", $number(n)))'),
    input: fc.integer({ min: 50_000_000, max: 500_000_000 }).map((n) => ({ n: String(n) })),
  }),
  on(fc.integer({ min: 100_001, max: 100_000_000 }).map((n) => `$count([1..${n}])`)),
  on(
    fc
      .integer({ min: 24, max: 40 })
      .map((depth) => `($f := function($s) { $s & $s }; ${'$f('.repeat(depth)}"xy"${')'.repeat(depth)})`),
  ),
  on(
    fc
      .integer({ min: 2_000_000, max: 50_000_000 })
      .map((n) => `$join([1..99999].$string()) & $pad("", ${n})`),
  ),
  on(fc.constant('($f := function($n) { $f($n + 1) }; $f(0))')),
  on(fc.constant('($f := function($n) { $n < 0 ? $n : $f($n + 1) }; $f(1))')),
  on(fc.integer({ min: 1_000, max: 99_999 }).map((n) => `[1..${n}].{"k" & $string($): $pad("v", 5000)}`)),
  on(
    fc
      .integer({ min: 1, max: 8 })
      .map(
        (n) =>
          `($r := function($n) { $n = 0 ? [] : $append($r($n - 1), [1..1000]) }; $count($r(${n * 10_000})))`,
      ),
  ),
);

test('every hostile expression ends with a MappingError naming a limit, in bounded time; the pool answers on', async () => {
  await fc.assert(
    fc.asyncProperty(hostile, fc.constantFrom('a', 'b'), async ({ expression, input: value }, tenant) => {
      const started = Date.now();
      const outcome = await pool.evaluate(tenant, expression, value, { runId: 'r' }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(outcome).toBeInstanceOf(MappingError);
      expect((outcome as Error).message).toMatch(
        /more than \d+ MB of memory|longer than \d+ ms|timeout|maximum sequence length|Stack overflow|more than \d+ characters|Invalid string length|Maximum call stack|must not exceed/i,
      );
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 10_000);
      expect(
        await pool.evaluate(tenant, '$sum(values) + $vars.x', { values: [1, 2] }, { vars: { x: 3 } }),
      ).toBe(6);
    }),
    { numRuns: 12 },
  );
});

test('a result larger than the cap is a MappingError, not a message the platform must hold', async () => {
  await expect(pool.evaluate('a', '$pad("", 2000000)', {}, {})).rejects.toThrow(
    /more than 1000000 characters/,
  );
});

test('an input larger than the cap is refused before it is sent', async () => {
  await expect(pool.evaluate('a', '$count(items)', { items: 'x'.repeat(5_000_000) }, {})).rejects.toThrow(
    /more than 4000000/,
  );
});

test('one system cannot hold every process: another system is evaluated while it waits', async () => {
  const endless = '($f := function($n) { $n < 0 ? $n : $f($n + 1) }; $f(1))';
  // Both processes running (the tests before may have ended one).
  await Promise.all([pool.evaluate('x', '1', {}, {}), pool.evaluate('y', '1', {}, {})]);
  const busy = Array.from({ length: 4 }, () => pool.evaluate('hog', endless, {}, {}).catch(() => null));
  await new Promise((resolve) => setTimeout(resolve, 100));
  const started = Date.now();
  expect(await pool.evaluate('other', '1 + 1', {}, {})).toBe(2);
  expect(Date.now() - started).toBeLessThan(1_000);
  await Promise.all(busy);
});

test('only what an expression names crosses: the context, the item and the outputs it reads', async () => {
  const context = { runId: 'run-7', vars: { a: 1 }, outputs: { '0': 'first' }, item: { n: 4 }, index: 2 };
  expect(await pool.evaluate('a', '[$runId, $vars.a, $step(0), $item.n, $index]', {}, context)).toEqual([
    'run-7',
    1,
    'first',
    4,
    2,
  ]);
  expect(await pool.evaluate('a', '$eval("$step(0)")', {}, context)).toBe('first');
  // The same input object, sent once and kept, and a changed one.
  const bundle = { total: 5 };
  expect(await pool.evaluate('a', 'total', bundle, {})).toBe(5);
  expect(await pool.evaluate('a', 'total * 2', bundle, {})).toBe(10);
  expect(await pool.evaluate('a', 'total', { total: 6 }, {})).toBe(6);
});
