import {
  remapSteps,
  scenarioStepSchema,
  stepReferences,
  type ScenarioStep,
} from '../../contracts/integrator';
import { MappingError } from '../../languages/mapping/mapping';
import { computeStep, isComputeStep, replayStep, StepFailure, type StepResult } from '../../integrator/steps';
import { evaluateHere } from '../support/expressions';

/** The computing steps, given a bundle and variables, when the step runs, then its output, variables and flow. */
function given(bundle: unknown, vars: Record<string, unknown> = {}) {
  return {
    when: (config: unknown) => {
      const step = scenarioStepSchema.parse(config);
      if (!isComputeStep(step)) throw new Error(`${step.kind} is not a computing step`);
      const result = computeStep(step, { bundle, vars, runId: 'run-1', expressions: evaluateHere });
      return {
        then: async (expected: StepResult) => {
          const actual = await result;
          expect(actual).toEqual(expected);
          // A resumed run gets the same variables and flow back from the recorded output alone.
          expect(replayStep(step, actual.output)).toEqual(expected);
        },
        thenFails: async (failure: typeof StepFailure | typeof MappingError, message: RegExp) => {
          await expect(result).rejects.toThrow(failure);
          await expect(result).rejects.toThrow(message);
        },
      };
    },
  };
}

describe('setVariable and setVariables', () => {
  test('a variable takes the mapped value', () =>
    given({ amount: 21 })
      .when({ kind: 'setVariable', name: 'total', value: { expr: 'amount * 2' } })
      .then({ output: 42, vars: { total: 42 } }));

  test('several variables are each mapped from what was there before the step', () =>
    given({ first: 'Ada', last: 'Lovelace' }, { greeting: 'Hello' })
      .when({
        kind: 'setVariables',
        variables: [
          { name: 'full', value: { expr: 'first & " " & last' } },
          { name: 'line', value: { expr: '$vars.greeting & ", " & first' } },
          { name: 'fixed', value: [1, 2] },
        ],
      })
      .then({
        output: { full: 'Ada Lovelace', line: 'Hello, Ada', fixed: [1, 2] },
        vars: { full: 'Ada Lovelace', line: 'Hello, Ada', fixed: [1, 2] },
      }));

  test('a configuration without variables or with a bad name is refused', () => {
    expect(scenarioStepSchema.safeParse({ kind: 'setVariables', variables: [] }).success).toBe(false);
    expect(
      scenarioStepSchema.safeParse({ kind: 'setVariables', variables: [{ name: '1x', value: 1 }] }).success,
    ).toBe(false);
  });
});

describe('filter', () => {
  test.each([
    [true, true],
    ['yes', true],
    [[0, 1], true],
    [{ a: 1 }, true],
    [false, false],
    [null, false],
    [0, false],
    ['', false],
    [[], false],
    [{}, false],
  ])('a condition of %j passes: %s', (condition, passed) =>
    given({ condition })
      .when({ kind: 'filter', condition: { expr: 'condition' } })
      .then({ output: { passed }, stops: !passed }),
  );

  test('a condition over the bundle and the variables', () =>
    given({ status: 'paid' }, { minimum: 10 })
      .when({
        kind: 'filter',
        label: 'Paid and large',
        condition: { expr: 'status = "paid" and 12 > $vars.minimum' },
      })
      .then({ output: { passed: true }, stops: false }));

  test('a condition that fails to evaluate fails the run, naming the expression', () =>
    given({ text: 'a' })
      .when({ kind: 'filter', condition: { expr: 'text + 1' } })
      .thenFails(MappingError, /"text \+ 1" failed/));
});

describe('jsonParse and jsonCreate', () => {
  test('JSON text becomes a value', () =>
    given({ payload: '{"order":{"id":7,"lines":[1,2]}}' })
      .when({ kind: 'jsonParse', name: 'order', text: { expr: 'payload' } })
      .then({
        output: { order: { id: 7, lines: [1, 2] } },
        vars: { order: { order: { id: 7, lines: [1, 2] } } },
      }));

  test('a value becomes JSON text', () =>
    given({ id: 7, tags: ['a'] })
      .when({ kind: 'jsonCreate', name: 'text', value: { expr: '{"id": id, "tags": tags}' } })
      .then({ output: '{"id":7,"tags":["a"]}', vars: { text: '{"id":7,"tags":["a"]}' } }));

  test('nothing becomes the JSON text null', () =>
    given({})
      .when({ kind: 'jsonCreate', name: 'text', value: { expr: 'missing' } })
      .then({ output: 'null', vars: { text: 'null' } }));

  test.each([
    ['{"cut": ', /not JSON/],
    ['{"a":1}}', /not JSON/],
  ])('text that is not JSON (%j) fails the run', (text, message) =>
    given({ text })
      .when({ kind: 'jsonParse', name: 'x', text: { expr: 'text' } })
      .thenFails(StepFailure, message),
  );

  test.each([[42], [null], [{ a: 1 }]])('a %j instead of text fails the run', (text) =>
    given({ text })
      .when({ kind: 'jsonParse', name: 'x', text: { expr: 'text' } })
      .thenFails(StepFailure, /must be a string/),
  );

  test('deeply nested JSON text is parsed or refused, never a crash', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const result = computeStep(
      { kind: 'jsonParse', name: 'x', text: deep },
      { bundle: {}, vars: {}, runId: 'r', expressions: evaluateHere },
    );
    await result.then(
      (done) => expect(Array.isArray(done.output)).toBe(true),
      (error: unknown) => expect(error).toBeInstanceOf(StepFailure),
    );
  });

  test('text over 5 MB fails the run', () =>
    given({})
      .when({ kind: 'jsonParse', name: 'x', text: `"${'a'.repeat(5_242_880)}"` })
      .thenFails(StepFailure, /more than 5242880/));
});

describe('webhookResponse', () => {
  test('a mapped status, body and headers', () =>
    given({ id: 7 })
      .when({
        kind: 'webhookResponse',
        status: 201,
        body: { expr: '{"id": id}' },
        headers: [{ name: 'X-Order', value: { expr: '$string(id)' } }],
      })
      .then({
        output: {
          status: 201,
          body: '{"id":7}',
          headers: [
            { name: 'X-Order', value: '7' },
            { name: 'Content-Type', value: 'application/json; charset=utf-8' },
          ],
        },
      }));

  test.each([
    [{ kind: 'webhookResponse', status: 500 }, /2xx, 3xx or 4xx/],
    [{ kind: 'webhookResponse', status: 302 }, /needs a Location header/],
    [
      { kind: 'webhookResponse', status: 200, headers: [{ name: 'X-A', value: 'a\r\nSet-Cookie: b' }] },
      /line breaks/,
    ],
  ])('%j fails the run', (config, message) => given({}).when(config).thenFails(StepFailure, message));
});

test('every step kind is computed here, or is a record step or the HTTP request step (which do I/O)', () => {
  const kinds = (
    scenarioStepSchema.def.options as Array<{ shape: { kind: { value?: string; options?: string[] } } }>
  ).flatMap(({ shape }) => shape.kind.options ?? [shape.kind.value!]);
  expect(kinds.filter((kind) => !isComputeStep({ kind } as ScenarioStep))).toEqual([
    'createRecord',
    'updateRecord',
    'getRecord',
    'deleteRecord',
    'searchRecords',
    'attachRecordFile',
    'addRecordLabel',
    'removeRecordLabel',
    'httpRequest',
  ]);
});

describe('moving a scenario: the ids its steps name', () => {
  const steps = [
    { kind: 'createRecord', moduleId: 3, name: 'x' },
    {
      kind: 'router',
      routes: [
        {
          steps: [
            { kind: 'searchRecords', moduleId: 4 },
            { kind: 'addRecordLabel', recordId: 1, labelId: 7 },
            { kind: 'removeRecordLabel', recordId: 1, labelId: { expr: 'label' } },
          ],
        },
      ],
    },
    { kind: 'searchRecords' },
  ].map((step) => scenarioStepSchema.parse(step));

  test('the modules and labels named by literal id, in routes too', () => {
    expect(stepReferences(steps)).toEqual({ moduleIds: [3, 4], labelIds: [7] });
  });

  test('remapped as given, the others kept; a mapped label id is left to its expression', () => {
    const remapped = remapSteps(steps, { '3': 30 }, { '7': 70 });
    expect(stepReferences(remapped)).toEqual({ moduleIds: [4, 30], labelIds: [70] });
    expect(remapped[1]).toMatchObject({
      routes: [{ steps: [{ moduleId: 4 }, { labelId: 70 }, { labelId: { expr: 'label' } }] }],
    });
    expect(stepReferences(steps)).toEqual({ moduleIds: [3, 4], labelIds: [7] });
  });
});
