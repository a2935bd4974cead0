import { setImmediate as nextTurn } from 'node:timers/promises';
import { matchingAggregator, type ScenarioStep } from '../contracts/integrator';
import type { IterationItem, StepResult } from './steps';

/** Where a path of steps stands: its variables and, inside an iteration, its item. */
export interface WalkScope {
  readonly vars: Record<string, unknown>;
  /** The outputs of the steps done on this path, by the step's place (`2`, `4.1.0`): `$step("2")`. */
  readonly outputs: Record<string, unknown>;
  readonly item?: IterationItem;
}

/**
 * Does one operation: a step at `path` (`2`, a route's step `4.1.0`, a step for item 3 of an iteration
 * `5[3]`) in `scope`. `iterations` are given to an aggregator: where each item's steps ended.
 */
export type Perform = (
  step: ScenarioStep,
  path: string,
  scope: WalkScope,
  iterations?: readonly WalkScope[],
) => Promise<StepResult>;

/**
 * Walks a scenario's steps in their one order, one operation at a time, handing each to `perform`. A router
 * runs its routes that pass, one after the other, with the variables so far; an iterator runs the steps after
 * it once per item (each from a copy of the variables), up to its aggregator, which gathers what each item
 * left and hands the steps after it one path again; a filter that does not pass ends its path (the rest of its
 * list, for its item). The order depends only on the operations' results, so a run replaying recorded
 * results walks the same way: operation n of a resumed run is operation n of the first try.
 *
 * Between operations the walk lets the event loop run at least every `SLICE_MS`, so a long run (a large
 * iteration) never holds the thread that answers requests and runs other systems' runs.
 *
 * Returns whether the path reached the end of its list.
 */
export async function walkSteps(
  steps: readonly ScenarioStep[],
  scope: WalkScope,
  perform: Perform,
): Promise<boolean> {
  let sliceStarted = performance.now();
  const paced: Perform = async (...operation) => {
    if (performance.now() - sliceStarted >= SLICE_MS) {
      await nextTurn();
      sliceStarted = performance.now();
    }
    return perform(...operation);
  };
  return walkRange(steps, 0, steps.length, scope, { prefix: '', suffix: '' }, paced);
}

/** The longest a walk runs operations without letting other work in. */
const SLICE_MS = 5;

interface PathParts {
  /** Before the step's index: the routes it is in (`4.1.`). */
  readonly prefix: string;
  /** After it: the iterations it is in (`[3]`). */
  readonly suffix: string;
}

async function walkRange(
  steps: readonly ScenarioStep[],
  from: number,
  to: number,
  scope: WalkScope,
  at: PathParts,
  perform: Perform,
): Promise<boolean> {
  for (let index = from; index < to; index++) {
    const step = steps[index]!;
    const place = `${at.prefix}${index}`;
    const path = `${place}${at.suffix}`;
    if (step.kind === 'router') {
      const { output } = await perform(step, path, scope);
      scope.outputs[place] = output;
      for (const route of (output as { routes: number[] }).routes)
        await walkRange(
          step.routes[route]!.steps,
          0,
          step.routes[route]!.steps.length,
          scope,
          { prefix: `${at.prefix}${index}.${route}.`, suffix: at.suffix },
          perform,
        );
      continue;
    }
    if (step.kind === 'iterator') {
      const items = (await perform(step, path, scope)).output as unknown[];
      scope.outputs[place] = items;
      const aggregator = matchingAggregator(steps, index, to);
      const bodyEnd = aggregator ?? to;
      const ended: WalkScope[] = [];
      for (const [itemIndex, value] of items.entries()) {
        const itemScope: WalkScope = {
          vars: { ...scope.vars },
          outputs: { ...scope.outputs },
          item: { value, index: itemIndex },
        };
        const through = await walkRange(
          steps,
          index + 1,
          bodyEnd,
          itemScope,
          { prefix: at.prefix, suffix: `${at.suffix}[${itemIndex}]` },
          perform,
        );
        if (through) ended.push(itemScope);
      }
      if (aggregator === undefined) return true;
      const gathered = await perform(
        steps[aggregator]!,
        `${at.prefix}${aggregator}${at.suffix}`,
        scope,
        ended,
      );
      Object.assign(scope.vars, gathered.vars);
      scope.outputs[`${at.prefix}${aggregator}`] = gathered.output;
      index = aggregator;
      continue;
    }
    const result = await perform(step, path, scope);
    Object.assign(scope.vars, result.vars);
    scope.outputs[place] = result.output;
    if (result.stops) return false;
  }
  return true;
}
