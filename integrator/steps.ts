import {
  HOOK_MAX_BODY_BYTES,
  type HookResponse,
  type MappedValue,
  type ScenarioStep,
} from '../contracts/integrator';
import {
  evaluateMapped,
  type EvaluateExpression,
  type ExpressionContext,
} from '../languages/mapping/mapping';
import {
  headerText,
  responseHeaderProblem,
  withoutSurroundingSpace,
} from '../contracts/hook-response-headers';

/** A step that cannot go on: the run fails with this message (not retried, unlike infrastructure errors). */
export class StepFailure extends Error {}

/** The item of an iteration a step runs for (`$item`, `$index` in its expressions). */
export interface IterationItem {
  readonly value: unknown;
  readonly index: number;
}

/** What a step sees: the request's bundle, the variables set so far and the run. */
export interface StepScope {
  readonly bundle: unknown;
  readonly vars: Readonly<Record<string, unknown>>;
  /** The outputs of the steps done before on this path, by place (`2`, `4.1.0`). */
  readonly outputs?: Readonly<Record<string, unknown>>;
  readonly runId: string;
  readonly item?: IterationItem;
  /** For an aggregator: where each item's steps ended (the items a filter stopped are not there). */
  readonly iterations?: ReadonlyArray<{
    readonly vars: Readonly<Record<string, unknown>>;
    readonly outputs?: Readonly<Record<string, unknown>>;
    readonly item?: IterationItem;
  }>;
  /** Where the run's expressions are evaluated (for its system; never on this thread). */
  readonly expressions: EvaluateExpression;
}

/** What a step did: its output (kept in the run), the variables it set, whether the run goes on. */
export interface StepResult {
  readonly output: unknown;
  readonly vars?: Readonly<Record<string, unknown>>;
  /** A filter that did not pass: the steps after it do not run. */
  readonly stops?: boolean;
}

const RECORD_STEP_KINDS = [
  'createRecord',
  'updateRecord',
  'getRecord',
  'deleteRecord',
  'searchRecords',
  'attachRecordFile',
  'addRecordLabel',
  'removeRecordLabel',
] as const;

/** The steps that read or change records, through the command side (`record-steps.ts`). */
export type RecordStep = Extract<ScenarioStep, { kind: (typeof RECORD_STEP_KINDS)[number] }>;

export type HttpRequestStep = Extract<ScenarioStep, { kind: 'httpRequest' }>;

/** The steps that only compute (no records, no I/O): each a function of its configuration and scope. */
export type ComputeStep = Exclude<ScenarioStep, RecordStep | HttpRequestStep>;

/** JSON text a `jsonParse` step takes: as large as a request's body may be. */
const MAX_JSON_TEXT = HOOK_MAX_BODY_BYTES;
/** Items one iterator may split an array into. */
export const MAX_ITERATOR_ITEMS = 10_000;

export function isRecordStep(step: ScenarioStep): step is RecordStep {
  return (RECORD_STEP_KINDS as readonly string[]).includes(step.kind);
}

export function isComputeStep(step: ScenarioStep): step is ComputeStep {
  return !isRecordStep(step) && step.kind !== 'httpRequest';
}

/**
 * What an expression reads besides the bundle: `$vars`, `$runId`, `$step(place)` (the output of an earlier
 * step on this path: `$step(2)`, `$step("4.1.0")`), and in an iteration `$item`, `$index`.
 */
export function contextOf(scope: Omit<StepScope, 'bundle' | 'expressions'>): ExpressionContext {
  return {
    vars: scope.vars,
    outputs: scope.outputs ?? {},
    runId: scope.runId,
    ...(scope.item && { item: scope.item.value, index: scope.item.index }),
  };
}

/** A step's mapped value: a literal as it is, an expression evaluated over the bundle and the scope. */
export function mapValue(scope: StepScope, value: MappedValue | undefined): Promise<unknown> {
  return evaluateMapped(value, scope.bundle, contextOf(scope), scope.expressions);
}

export async function computeStep(step: ComputeStep, scope: StepScope): Promise<StepResult> {
  const evaluate = (value: MappedValue | undefined) => mapValue(scope, value);
  switch (step.kind) {
    case 'setVariable': {
      const value = await evaluate(step.value);
      return { output: value, vars: { [step.name]: value } };
    }
    case 'setVariables': {
      const values: Record<string, unknown> = {};
      for (const variable of step.variables) values[variable.name] = await evaluate(variable.value);
      return { output: values, vars: values };
    }
    case 'filter': {
      const passed = truthy(await evaluate(step.condition));
      return { output: { passed }, stops: !passed };
    }
    case 'jsonParse': {
      const text = await evaluate(step.text);
      if (typeof text !== 'string')
        throw new StepFailure(`the JSON text must be a string, got ${describeType(text)}`);
      if (text.length > MAX_JSON_TEXT)
        throw new StepFailure(`the JSON text is ${text.length} characters, more than ${MAX_JSON_TEXT}`);
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        throw new StepFailure(
          `the text is not JSON: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      return { output: value, vars: { [step.name]: value } };
    }
    case 'jsonCreate': {
      const text = JSON.stringify(await evaluate(step.value)) ?? 'null';
      return { output: text, vars: { [step.name]: text } };
    }
    case 'webhookResponse': {
      const headers = await Promise.all(
        (step.headers ?? []).map(async (header) => ({
          name: header.name,
          value: await evaluate(header.value),
        })),
      );
      return { output: responseOf(await evaluate(step.status), await evaluate(step.body), headers) };
    }
    case 'router': {
      const taken: number[] = [];
      for (const [index, route] of step.routes.entries())
        if (route.filter === undefined || truthy(await evaluate(route.filter))) taken.push(index);
      return { output: { routes: taken } };
    }
    case 'iterator': {
      const items = await evaluate(step.array);
      if (items === null) return { output: [] };
      if (!Array.isArray(items))
        throw new StepFailure(`the iterator needs an array, got ${describeType(items)}`);
      if (items.length > MAX_ITERATOR_ITEMS)
        throw new StepFailure(`the array has ${items.length} items, more than ${MAX_ITERATOR_ITEMS}`);
      return { output: items };
    }
    case 'aggregator': {
      const values: unknown[] = [];
      for (const iteration of scope.iterations ?? [])
        values.push(
          await evaluateMapped(
            step.value,
            scope.bundle,
            contextOf({ ...iteration, runId: scope.runId }),
            scope.expressions,
          ),
        );
      return { output: values, vars: { [step.name]: values } };
    }
  }
}

/** What a step done before (its recorded output) left in the variables: a resumed run goes on with them. */
export function replayStep(step: ScenarioStep, output: unknown): StepResult {
  switch (step.kind) {
    case 'setVariable':
      return { output, vars: { [step.name]: output } };
    case 'setVariables':
      return { output, vars: (output ?? {}) as Record<string, unknown> };
    case 'filter':
      return { output, stops: (output as { passed?: unknown } | null)?.passed === false };
    case 'jsonParse':
    case 'jsonCreate':
    case 'aggregator':
      return { output, vars: { [step.name]: output } };
    case 'createRecord':
    case 'updateRecord':
    case 'getRecord':
    case 'deleteRecord':
    case 'searchRecords':
    case 'attachRecordFile':
    case 'addRecordLabel':
    case 'removeRecordLabel':
    case 'webhookResponse':
    case 'httpRequest':
    case 'router':
    case 'iterator':
      return { output };
  }
}

/** JSONata's boolean rule: false, null, 0, "", an empty array or object (and nothing) do not pass. */
function truthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.some(truthy);
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

function describeType(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/**
 * The headers a step's mapped values make: text as it is (without surrounding spaces), anything else as JSON,
 * none for a value that is nothing; one a hook may not answer fails the step, naming it.
 */
function answeredHeaders(headers: Array<{ name: string; value: unknown }>): HookResponse['headers'] {
  const texts: HookResponse['headers'] = [];
  for (const header of headers) {
    const computed = headerText(header.value);
    if (computed === undefined) continue;
    const text = withoutSurroundingSpace(computed);
    const problem = responseHeaderProblem(header.name, text);
    if (problem) throw new StepFailure(`response header ${header.name}: ${problem}`);
    texts.push({ name: header.name, value: text });
  }
  return texts;
}

/** The Webhook response a step's mapped status, body and headers make, or why they cannot make one. */
function responseOf(
  status: unknown,
  body: unknown,
  headers: Array<{ name: string; value: unknown }>,
): HookResponse {
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 499)
    throw new StepFailure(`the response status must be 2xx, 3xx or 4xx, got ${JSON.stringify(status)}`);
  const texts = answeredHeaders(headers);
  if (status >= 300 && status < 400 && !texts.some((header) => header.name.toLowerCase() === 'location'))
    throw new StepFailure(`a ${status} response needs a Location header`);
  const isText = typeof body === 'string';
  if (
    !isText &&
    body !== undefined &&
    body !== null &&
    !texts.some((h) => h.name.toLowerCase() === 'content-type')
  )
    texts.push({ name: 'Content-Type', value: 'application/json; charset=utf-8' });
  return {
    status,
    headers: texts,
    body: isText ? body : body === undefined || body === null ? '' : JSON.stringify(body),
  };
}
