import jsonata from 'jsonata';
import { isExpression, type MappedValue } from './integrator';
import { compileLinear, LinearRegex } from './linear-regex';

/**
 * Mapping expressions (JSONata, jsonata ≥ 2.2.1 for its prototype-pollution and code-execution fixes), with
 * guards: a time limit, a recursion depth and a sequence length, and regular expressions matched in linear
 * time (`LinearRegex`), so one scenario's expression cannot hold the integrator. Compiled expressions are
 * cached by their text.
 */
const GUARDS = {
  timeout: 1000,
  stack: 200,
  sequence: 100_000,
  RegexEngine: LinearRegex as unknown as RegExpConstructor,
};
const CACHE_SIZE = 5000;
const compiled = new Map<string, jsonata.Expression>();

export class MappingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MappingError';
  }
}

function describe(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const { message, position } = error as { message?: unknown; position?: unknown };
    const text = typeof message === 'string' ? message : String(error);
    return typeof position === 'number' ? `${text} (at character ${position})` : text;
  }
  return String(error);
}

/** The compiled expression; a syntax error is a `MappingError` naming where. */
export function compileExpression(text: string): jsonata.Expression {
  const known = compiled.get(text);
  if (known) return known;
  let expression: jsonata.Expression;
  try {
    expression = jsonata(text, GUARDS);
  } catch (error) {
    throw new MappingError(`invalid expression ${JSON.stringify(text.slice(0, 80))}: ${describe(error)}`);
  }
  for (const pattern of regexLiterals(expression.ast())) {
    try {
      compileLinear(pattern);
    } catch (error) {
      throw new MappingError(
        `invalid expression ${JSON.stringify(text.slice(0, 80))}: the pattern /${pattern.source.slice(0, 80)}/ cannot be matched in linear time (no backreferences or lookarounds): ${describe(error)}`,
      );
    }
  }
  if (compiled.size >= CACHE_SIZE) compiled.delete(compiled.keys().next().value!);
  compiled.set(text, expression);
  return expression;
}

/** The `/…/` patterns of an expression's syntax tree. */
function regexLiterals(node: unknown, found: RegExp[] = []): RegExp[] {
  if (node instanceof RegExp) found.push(node);
  else if (Array.isArray(node)) for (const child of node) regexLiterals(child, found);
  else if (typeof node === 'object' && node !== null)
    for (const child of Object.values(node)) regexLiterals(child, found);
  return found;
}

/** Every expression inside a mapped value is compiled (for checking a scenario before it is saved). */
export function checkMappedValue(value: MappedValue | undefined): void {
  if (value !== undefined && isExpression(value)) compileExpression(value.expr);
}

/** A mapped value for one input: a literal as it is, an expression evaluated (undefined result → null). */
export async function evaluateMapped(
  value: MappedValue | undefined,
  input: unknown,
  bindings: Record<string, unknown>,
): Promise<unknown> {
  if (value === undefined) return undefined;
  if (!isExpression(value)) return value;
  try {
    const result: unknown = await compileExpression(value.expr).evaluate(input, bindings);
    return result === undefined ? null : normalise(result);
  } catch (error) {
    if (error instanceof MappingError) throw error;
    throw new MappingError(
      `expression ${JSON.stringify(value.expr.slice(0, 80))} failed: ${describe(error)}`,
    );
  }
}

/** JSONata sequences are arrays with extra properties: plain JSON from here on. */
function normalise(value: unknown): unknown {
  const text = JSON.stringify(value);
  return text === undefined ? null : (JSON.parse(text) as unknown);
}
