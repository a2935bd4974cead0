import { LRUCache } from 'lru-cache';
import jsonata from 'jsonata';
import { HOOK_MAX_BODY_BYTES, isExpression, type MappedValue } from '../../contracts/integrator';
import { compileLinear, LinearRegex } from './linear-regex';

/**
 * Mapping expressions (JSONata, jsonata ≥ 2.2.1 for its prototype-pollution and code-execution fixes), with
 * guards: a time limit, a recursion depth and a sequence length, and regular expressions matched in linear
 * time (`LinearRegex`). The time limit is not checked inside one built-in call and no guard bounds memory, so
 * the platform evaluates expressions in processes of their own (infra/expressions), never on its threads.
 * Compiled expressions are cached by their text.
 */
const GUARDS = {
  timeout: 1000,
  stack: 200,
  sequence: 100_000,
  RegexEngine: LinearRegex as unknown as RegExpConstructor,
};
const CACHE_SIZE = 5000;

/** The largest result of one expression, in characters of JSON (as large as a request's body may be). */
export const EXPRESSION_MAX_RESULT_CHARS = HOOK_MAX_BODY_BYTES;
/** The largest input and context one expression is evaluated over (serialized): a bundle and its run's variables. */
export const EXPRESSION_MAX_INPUT_BYTES = 8 * HOOK_MAX_BODY_BYTES;
const compiled = new LRUCache<string, jsonata.Expression>({ max: CACHE_SIZE });

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

/**
 * What an expression reads besides its input (the bundle): `$vars`, `$runId`, `$step(place)` (the output of an
 * earlier step on its path), and in an iteration `$item`, `$index`. Plain data, so it can cross to the
 * process that evaluates.
 */
export interface ExpressionContext {
  readonly vars?: Readonly<Record<string, unknown>>;
  /** The outputs of the steps done before on this path, by place (`2`, `4.1.0`). */
  readonly outputs?: Readonly<Record<string, unknown>>;
  readonly runId?: string;
  readonly item?: unknown;
  readonly index?: number;
}

/** Evaluates one expression for one system; the result as plain JSON (nothing → null), or a `MappingError`. */
export type EvaluateExpression = (
  expression: string,
  input: unknown,
  context: ExpressionContext,
) => Promise<unknown>;

/**
 * Where user-written expressions run: apart from the thread that answers requests, so that an expression that
 * runs out of memory or time ends its evaluation, not the platform (infra/expressions).
 */
export interface ExpressionEvaluator {
  evaluate(tenant: string, expression: string, input: unknown, context: ExpressionContext): Promise<unknown>;
}

/** The bindings an expression's `$` names resolve to. */
export function bindingsOf(context: ExpressionContext): Record<string, unknown> {
  const outputs = context.outputs ?? {};
  return {
    vars: context.vars ?? {},
    runId: context.runId,
    step: (place: unknown) => {
      const key = String(place);
      return Object.hasOwn(outputs, key) ? outputs[key] : undefined;
    },
    ...(context.index !== undefined && { item: context.item, index: context.index }),
  };
}

/** The parts of the context an expression names (`$eval` may name any: then all of them). */
export interface ContextReads {
  readonly vars: boolean;
  readonly outputs: boolean;
  readonly item: boolean;
}

const reads = new WeakMap<jsonata.Expression, ContextReads>();

/** What `text` reads of its context, so only that is sent to where it is evaluated. */
export function contextReads(text: string): ContextReads {
  const expression = compileExpression(text);
  const known = reads.get(expression);
  if (known) return known;
  const names = new Set<string>();
  variableNames(expression.ast(), names);
  const all = names.has('eval');
  const found = {
    vars: all || names.has('vars'),
    outputs: all || names.has('step'),
    item: all || names.has('item') || names.has('index'),
  };
  reads.set(expression, found);
  return found;
}

function variableNames(node: unknown, found: Set<string>): void {
  if (Array.isArray(node)) for (const child of node) variableNames(child, found);
  else if (typeof node === 'object' && node !== null && !(node instanceof RegExp)) {
    const { type, value } = node as { type?: unknown; value?: unknown };
    if (type === 'variable' && typeof value === 'string') found.add(value);
    for (const child of Object.values(node)) variableNames(child, found);
  }
}

/**
 * Evaluates `text` here, on this thread: only where running out of memory or time cannot stop the platform
 * (the expression process). The result as JSON text (nothing → `null`), at most `maxBytes` long.
 */
export async function evaluateToJson(
  text: string,
  input: unknown,
  context: ExpressionContext,
  maxBytes: number,
): Promise<string> {
  let json: string | undefined;
  try {
    const result: unknown = await compileExpression(text).evaluate(input, bindingsOf(context));
    json = JSON.stringify(result);
  } catch (error) {
    if (error instanceof MappingError) throw error;
    throw new MappingError(`expression ${JSON.stringify(text.slice(0, 80))} failed: ${describe(error)}`);
  }
  if (json === undefined) return 'null';
  if (json.length > maxBytes)
    throw new MappingError(
      `expression ${JSON.stringify(text.slice(0, 80))} failed: its result is more than ${maxBytes} characters of JSON`,
    );
  return json;
}

/** A mapped value for one input: a literal as it is (on this thread), an expression evaluated by `evaluate`. */
export async function evaluateMapped(
  value: MappedValue | undefined,
  input: unknown,
  context: ExpressionContext,
  evaluate: EvaluateExpression,
): Promise<unknown> {
  if (value === undefined) return undefined;
  if (!isExpression(value)) return value;
  return evaluate(value.expr, input, context);
}
