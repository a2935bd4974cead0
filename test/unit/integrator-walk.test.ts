import { scenarioSettingsSchema, scenarioStepSchema, type ScenarioStep } from '../../contracts/integrator';
import { computeStep, isComputeStep, replayStep, type StepResult } from '../../integrator/steps';
import { walkSteps, type Perform, type WalkScope } from '../../integrator/walk';
import { evaluateHere } from '../support/expressions';

/**
 * The walk over routers, iterators and aggregators: given a bundle and steps, when the scenario is walked
 * (each operation computed, a createRecord recorded as made), then the operations in order and what they left.
 */
interface Operation {
  readonly path: string;
  readonly kind: string;
  readonly output: unknown;
}

async function walk(
  bundle: unknown,
  config: unknown[],
  recorded: readonly unknown[] = [],
): Promise<{ operations: Operation[]; vars: Record<string, unknown>; through: boolean }> {
  const steps = config.map((step) => scenarioStepSchema.parse(step));
  const operations: Operation[] = [];
  const perform: Perform = async (step, path, scope, iterations) => {
    const index = operations.length;
    const result: StepResult =
      index < recorded.length
        ? replayStep(step, recorded[index])
        : isComputeStep(step)
          ? await computeStep(step, {
              bundle,
              runId: 'run',
              expressions: evaluateHere,
              ...scope,
              ...(iterations && { iterations }),
            })
          : { output: { made: scope.item?.value ?? null } };
    operations.push({ path, kind: step.kind, output: result.output });
    return result;
  };
  const scope: WalkScope = { vars: {}, outputs: {} };
  const through = await walkSteps(steps, scope, perform);
  return { operations, vars: scope.vars, through };
}

const paths = (operations: Operation[]) => operations.map((operation) => operation.path);

describe('router', () => {
  const router = {
    kind: 'router',
    routes: [
      {
        label: 'Large',
        filter: { expr: 'total >= 100' },
        steps: [{ kind: 'setVariable', name: 'size', value: 'large' }],
      },
      {
        label: 'Paid',
        filter: { expr: 'paid' },
        steps: [
          { kind: 'setVariable', name: 'paid', value: true },
          { kind: 'filter', condition: false },
          { kind: 'setVariable', name: 'never', value: true },
        ],
      },
      { steps: [{ kind: 'setVariable', name: 'always', value: { expr: '$vars.size' } }] },
    ],
  };

  test('runs each route that passes, in order, with the variables so far; a filter ends only its route', async () => {
    const done = await walk({ total: 150, paid: true }, [
      router,
      { kind: 'setVariable', name: 'after', value: 1 },
    ]);
    expect(paths(done.operations)).toEqual(['0', '0.0.0', '0.1.0', '0.1.1', '0.2.0', '1']);
    expect(done.operations[0]!.output).toEqual({ routes: [0, 1, 2] });
    expect(done.vars).toEqual({ size: 'large', paid: true, always: 'large', after: 1 });
    expect(done.through).toBe(true);
  });

  test('a route whose filter does not hold is not taken', async () => {
    const done = await walk({ total: 5, paid: false }, [router]);
    expect(paths(done.operations)).toEqual(['0', '0.2.0']);
    expect(done.vars).toEqual({ always: null });
  });
});

describe('iterator and aggregator', () => {
  const lines = {
    lines: [
      { sku: 'a', qty: 2 },
      { sku: 'b', qty: 0 },
      { sku: 'c', qty: 5 },
    ],
  };
  const iterate = [
    { kind: 'setVariable', name: 'order', value: 'A-1' },
    { kind: 'iterator', array: { expr: 'lines' } },
    { kind: 'filter', condition: { expr: '$item.qty > 0' } },
    {
      kind: 'setVariable',
      name: 'line',
      value: { expr: '$vars.order & "/" & $item.sku & "#" & $string($index)' },
    },
    { kind: 'createRecord', moduleId: 1, name: { expr: '$vars.line' } },
    { kind: 'aggregator', name: 'lines', value: { expr: '$vars.line' } },
    { kind: 'setVariable', name: 'count', value: { expr: '$count($vars.lines)' } },
  ];

  test('the steps between run once per item; the aggregator gathers the items that got through', async () => {
    const done = await walk(lines, iterate);
    expect(paths(done.operations)).toEqual([
      '0',
      '1',
      '2[0]',
      '3[0]',
      '4[0]',
      '2[1]',
      '2[2]',
      '3[2]',
      '4[2]',
      '5',
      '6',
    ]);
    expect(done.vars).toEqual({ order: 'A-1', lines: ['A-1/a#0', 'A-1/c#2'], count: 2 });
    // A variable set for an item stays with the item.
    expect(done.vars).not.toHaveProperty('line');
  });

  test('without an aggregator the rest of the list runs per item', async () => {
    const done = await walk(lines, iterate.slice(0, 4));
    expect(paths(done.operations)).toEqual(['0', '1', '2[0]', '3[0]', '2[1]', '2[2]', '3[2]']);
    expect(done.vars).toEqual({ order: 'A-1' });
  });

  test('iterators nest, each closed by its own aggregator', async () => {
    const done = await walk({ groups: [{ items: [1, 2] }, { items: [3] }] }, [
      { kind: 'iterator', array: { expr: 'groups' } },
      { kind: 'setVariable', name: 'group', value: { expr: '$item' } },
      { kind: 'iterator', array: { expr: '$vars.group.items' } },
      { kind: 'aggregator', name: 'doubled', value: { expr: '$item * 2' } },
      { kind: 'aggregator', name: 'all', value: { expr: '$vars.doubled' } },
    ]);
    expect(done.vars).toEqual({ all: [[2, 4], [6]] });
    expect(paths(done.operations)).toEqual(['0', '1[0]', '2[0]', '3[0]', '1[1]', '2[1]', '3[1]', '4']);
  });

  test('an empty or missing array runs no item; the aggregator gives []', async () => {
    for (const bundle of [{ lines: [] }, {}]) {
      const done = await walk(bundle, iterate);
      expect(paths(done.operations)).toEqual(['0', '1', '5', '6']);
      expect(done.vars).toEqual({ order: 'A-1', lines: [], count: 0 });
    }
  });

  test('a resumed walk replays what was recorded and does the same operations after it', async () => {
    const first = await walk(lines, iterate);
    for (const cut of [0, 3, 5, 9, first.operations.length]) {
      const resumed = await walk(
        lines,
        iterate,
        first.operations.slice(0, cut).map((operation) => operation.output),
      );
      expect(resumed).toEqual(first);
    }
  });

  test('an iterator over something that is not an array, or too large, fails', async () => {
    await expect(walk({ lines: 'abc' }, iterate)).rejects.toThrow(/needs an array, got a string/);
    await expect(walk({ lines: Array.from({ length: 10_001 }, () => 1) }, iterate)).rejects.toThrow(
      /more than 10000/,
    );
  });
});

describe('outputs of earlier steps', () => {
  test('$step(place) reads what an earlier step on the path gave; an item sees its own', async () => {
    const done = await walk({ payload: '{"lines":[{"sku":"a"},{"sku":"b"}]}' }, [
      { kind: 'jsonParse', name: 'order', text: { expr: 'payload' } },
      { kind: 'iterator', array: { expr: '$step(0).lines' } },
      { kind: 'jsonCreate', name: 'line', value: { expr: '$item' } },
      { kind: 'aggregator', name: 'texts', value: { expr: '$step(2)' } },
      {
        kind: 'router',
        routes: [{ steps: [{ kind: 'setVariable', name: 'first', value: { expr: '$step(3)[0]' } }] }],
      },
      { kind: 'setVariable', name: 'fromRoute', value: { expr: '$step("4.0.0")' } },
      { kind: 'setVariable', name: 'unknown', value: { expr: '$step(99)' } },
    ]);
    expect(done.vars).toMatchObject({
      texts: ['{"sku":"a"}', '{"sku":"b"}'],
      first: '{"sku":"a"}',
      fromRoute: '{"sku":"a"}',
      unknown: null,
    });
  });
});

describe('the shape of a scenario', () => {
  const settings = (steps: unknown[]) =>
    scenarioSettingsSchema.safeParse({
      name: 'S',
      webhookId: null,
      schedule: { kind: 'instant' },
      sequential: false,
      autoCommit: false,
      steps,
    });
  const messages = (steps: unknown[]) => {
    const parsed = settings(steps);
    return parsed.success
      ? []
      : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  };

  test('an aggregator without an iterator before it in its list is refused', () => {
    expect(messages([{ kind: 'aggregator', name: 'x', value: 1 }])).toEqual([
      'steps.0: an aggregator needs an iterator before it in its list',
    ]);
    expect(
      messages([
        { kind: 'iterator', array: [] },
        { kind: 'router', routes: [{ steps: [{ kind: 'aggregator', name: 'x', value: 1 }] }] },
      ]),
    ).toEqual(['steps.1.routes.0.steps.0: an aggregator needs an iterator before it in its list']);
  });

  test('routers nest at most 5 deep', () => {
    const nested = (depth: number): ScenarioStep =>
      ({ kind: 'router', routes: [{ steps: depth > 1 ? [nested(depth - 1)] : [] }] }) as ScenarioStep;
    expect(messages([nested(5)])).toEqual([]);
    expect(messages([nested(6)])).toHaveLength(1);
    expect(messages([nested(6)])[0]).toContain('routers nest at most 5 deep');
  });

  test('at most 500 steps in all, routes included', () => {
    const route = {
      steps: Array.from({ length: 100 }, () => ({ kind: 'setVariable', name: 'x', value: 1 })),
    };
    const router = { kind: 'router', routes: Array.from({ length: 10 }, () => route) };
    expect(messages([router])).toEqual(
      [': at most 500 steps in all, routes included'].map((m) => `steps${m}`),
    );
  });
});

describe('pacing', () => {
  test('a long walk lets other work in between its operations (timers, requests, other runs)', async () => {
    const steps = [
      { kind: 'iterator', array: Array.from({ length: 200 }, (_, index) => index) },
      { kind: 'setVariable', name: 'x', value: 1 },
    ].map((step) => scenarioStepSchema.parse(step));
    let done = 0;
    // Each operation holds the thread 1 ms and answers at once (no I/O): only the walk can let others in.
    const perform: Perform = async (step, _path, scope) => {
      const until = performance.now() + 1;
      while (performance.now() < until);
      done += 1;
      return step.kind === 'iterator'
        ? { output: (step.array as number[]).slice() }
        : { output: scope.item?.value ?? null };
    };
    let doneWhenOthersRan: number | undefined;
    setImmediate(() => (doneWhenOthersRan = done));
    await walkSteps(steps, { vars: {}, outputs: {} }, perform);
    expect(done).toBe(201);
    expect(doneWhenOthersRan).toBeLessThan(50);
  });
});
