import {
  EXPRESSION_MAX_RESULT_CHARS,
  evaluateToJson,
  type EvaluateExpression,
} from '../../languages/mapping/mapping';

/**
 * Evaluates on the test's own thread, as an expression process does: for unit tests of steps and mappings
 * (the platform never evaluates on its threads: see infra/expressions/pool.ts).
 */
export const evaluateHere: EvaluateExpression = async (expression, input, context) =>
  JSON.parse(await evaluateToJson(expression, input, context, EXPRESSION_MAX_RESULT_CHARS)) as unknown;
