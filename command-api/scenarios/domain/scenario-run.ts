import { PlatformError } from '../../../contracts/errors';
import type { ScenarioRunEvent } from '../../../contracts/events/integrator';
import type { HookResponse } from '../../../contracts/integrator';
import type { z } from 'zod';
import { hookRequestValues, type DataPath } from '../../../contracts/personal-data';
import { withPersonalValues, type Decider } from '../../kit/decider';

/**
 * One run of a scenario for one request, keyed by the request's event id: whatever delivers the request
 * again (a redelivery, a second integrator), the run's stream says what is done already.
 */
export interface ScenarioRunState {
  readonly status: 'none' | 'running' | 'succeeded' | 'failed';
  /** The request it runs for (null until it started): its outputs and messages are sealed under its key. */
  readonly requestId: string | null;
  /** Outputs of the operations done, in order: a resumed run replays them and continues after them. */
  readonly outputs: readonly unknown[];
  readonly responded: boolean;
  /** Why it failed (null: it has not). */
  readonly error: string | null;
  /** Unexpected errors met by its tries so far, and when the first was (null: none). */
  readonly errors: number;
  readonly firstErrorAt: string | null;
}

/**
 * A run that keeps meeting an unexpected error (neither a step's failure nor a limit: a bug user data hits, a
 * write refused for good) fails once it has met one this often over at least this long, so that no request is
 * delivered again for ever; a store that is down records no error, so an outage never fails a run.
 */
export const RUN_ERRORS_BEFORE_FAILING = 5;
export const RUN_ERROR_WINDOW_MS = 60_000;

/** One thing a run records. */
export type RunRecordCommand =
  | {
      readonly kind: 'StartRun';
      readonly runId: string;
      readonly scenarioId: number;
      readonly webhookId: number;
      readonly requestId: string;
      readonly trigger: 'instant' | 'scheduled';
      readonly attempt: number;
      /** The blobs the request's data is kept in. */
      readonly blobKeys: readonly string[];
      readonly now: Date;
    }
  | {
      readonly kind: 'CompleteStep';
      readonly runId: string;
      readonly index: number;
      readonly stepKind: string;
      readonly output: unknown;
      /** How long the step took. */
      readonly durationMs?: number;
      /** Where the step is: its index, in routes (`4.1.0`) and iterations (`5[3]`). */
      readonly path?: string;
    }
  | {
      readonly kind: 'Respond';
      readonly runId: string;
      readonly requestId: string;
      readonly response: HookResponse;
    }
  | { readonly kind: 'Succeed'; readonly runId: string; readonly requestId: string; readonly now: Date }
  | {
      readonly kind: 'NoteError';
      readonly runId: string;
      readonly requestId: string;
      readonly message: string;
      readonly now: Date;
    }
  | {
      readonly kind: 'Fail';
      readonly runId: string;
      readonly requestId: string;
      readonly step: number | null;
      readonly message: string;
      readonly now: Date;
    };

export type ScenarioRunCommand =
  | RunRecordCommand
  /** Several of them in order, appended at once (a run records what it did in one write). */
  | { readonly kind: 'Batch'; readonly commands: readonly RunRecordCommand[] };

type Json = z.core.util.JSONType;

export const scenarioRunDecider: Decider<ScenarioRunState, ScenarioRunCommand, ScenarioRunEvent> = {
  initialState: {
    status: 'none',
    requestId: null,
    outputs: [],
    responded: false,
    error: null,
    errors: 0,
    firstErrorAt: null,
  },

  decide(command, state) {
    if (command.kind !== 'Batch') return sealedForRequest(decideOne(command, state), state);
    const events: ScenarioRunEvent[] = [];
    let current = state;
    for (const part of command.commands) {
      const decided = decideOne(part, current);
      current = decided.reduce(scenarioRunDecider.evolve, current);
      events.push(...decided);
    }
    return sealedForRequest(joinSteps(events), state);
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ScenarioRunStarted':
        return { ...state, status: 'running', requestId: event.data.requestId };
      case 'ScenarioStepCompleted':
        return { ...state, outputs: [...state.outputs, event.data.output] };
      case 'ScenarioStepsCompleted':
        return { ...state, outputs: [...state.outputs, ...event.data.steps.map((step) => step.output)] };
      case 'WebhookResponseReady':
        return { ...state, responded: true };
      case 'ScenarioRunSucceeded':
        return { ...state, status: 'succeeded' };
      case 'ScenarioRunErrored':
        return { ...state, errors: state.errors + 1, firstErrorAt: state.firstErrorAt ?? event.data.at };
      case 'ScenarioRunFailed':
        return { ...state, status: 'failed', error: event.data.message };
    }
  },
};

function decideOne(command: RunRecordCommand, state: ScenarioRunState): ScenarioRunEvent[] {
  if (command.kind === 'StartRun') {
    if (state.status !== 'none') return [];
    return [
      {
        type: 'ScenarioRunStarted',
        data: {
          runId: command.runId,
          scenarioId: command.scenarioId,
          webhookId: command.webhookId,
          requestId: command.requestId,
          trigger: command.trigger,
          startedAt: command.now.toISOString(),
          attempt: command.attempt,
          blobKeys: [...command.blobKeys],
        },
      },
    ];
  }
  if (state.status === 'none') throw new PlatformError('conflict', `run ${command.runId} has not started`);
  // A finished run takes nothing more: a late redelivery changes nothing.
  if (state.status !== 'running') return [];
  switch (command.kind) {
    case 'CompleteStep':
      if (command.index < state.outputs.length) return [];
      if (command.index !== state.outputs.length)
        throw new PlatformError('conflict', `run ${command.runId}: step ${command.index} out of order`);
      return [
        {
          type: 'ScenarioStepCompleted',
          data: {
            runId: command.runId,
            index: command.index,
            kind: command.stepKind,
            output: (command.output ?? null) as Json,
            ...(command.durationMs !== undefined && { durationMs: command.durationMs }),
            ...(command.path !== undefined && { path: command.path }),
          },
        },
      ];
    case 'Respond':
      return state.responded
        ? []
        : [
            {
              type: 'WebhookResponseReady',
              data: { runId: command.runId, requestId: command.requestId, response: command.response },
            },
          ];
    case 'Succeed':
      return [
        {
          type: 'ScenarioRunSucceeded',
          data: {
            runId: command.runId,
            requestId: command.requestId,
            finishedAt: command.now.toISOString(),
            operations: state.outputs.length,
          },
        },
      ];
    case 'NoteError': {
      const message = command.message.slice(0, 2000);
      const errored: ScenarioRunEvent = {
        type: 'ScenarioRunErrored',
        data: { runId: command.runId, at: command.now.toISOString(), message },
      };
      const errors = state.errors + 1;
      const since = Date.parse(state.firstErrorAt ?? errored.data.at);
      if (errors < RUN_ERRORS_BEFORE_FAILING || command.now.getTime() - since < RUN_ERROR_WINDOW_MS)
        return [errored];
      return [
        errored,
        {
          type: 'ScenarioRunFailed',
          data: {
            runId: command.runId,
            requestId: command.requestId,
            finishedAt: command.now.toISOString(),
            step: null,
            message: `the run met an unexpected error ${errors} times in ${Math.round((command.now.getTime() - since) / 1000)} s and is not tried again: ${message}`,
          },
        },
      ];
    }
    case 'Fail':
      return [
        {
          type: 'ScenarioRunFailed',
          data: {
            runId: command.runId,
            requestId: command.requestId,
            finishedAt: command.now.toISOString(),
            step: command.step,
            message: command.message,
          },
        },
      ];
  }
}

/**
 * The events with what they carry of the request's data (step outputs, a response, error messages, which may
 * quote it) marked to be sealed under the request's key.
 */
function sealedForRequest(events: ScenarioRunEvent[], before: ScenarioRunState): ScenarioRunEvent[] {
  const started = events.find((event) => event.type === 'ScenarioRunStarted');
  const requestId = before.requestId ?? started?.data.requestId;
  if (requestId === undefined) return events;
  return events.map((event) => {
    const paths = requestPathsOf(event);
    return paths.length === 0 ? event : withPersonalValues(event, hookRequestValues(requestId, paths));
  });
}

/** Where a run's event carries what its request sent (or what was made of it). */
export function requestPathsOf(event: ScenarioRunEvent): DataPath[] {
  switch (event.type) {
    case 'ScenarioStepCompleted':
      return [['output']];
    case 'ScenarioStepsCompleted':
      return event.data.steps.map((_, index) => ['steps', index, 'output']);
    case 'WebhookResponseReady':
      return [
        ['response', 'headers'],
        ['response', 'body'],
      ];
    case 'ScenarioRunErrored':
    case 'ScenarioRunFailed':
      return [['message']];
    default:
      return [];
  }
}

/** Steps completed one after another in a write become one event. */
function joinSteps(events: ScenarioRunEvent[]): ScenarioRunEvent[] {
  const joined: ScenarioRunEvent[] = [];
  for (const event of events) {
    const last = joined.at(-1);
    if (event.type !== 'ScenarioStepCompleted') joined.push(event);
    else if (last?.type === 'ScenarioStepsCompleted') last.data.steps.push(stepOf(event.data));
    else if (last?.type === 'ScenarioStepCompleted')
      joined[joined.length - 1] = {
        type: 'ScenarioStepsCompleted',
        data: { runId: last.data.runId, steps: [stepOf(last.data), stepOf(event.data)] },
      };
    else joined.push(event);
  }
  return joined;
}

function stepOf({
  runId: _runId,
  ...step
}: Extract<ScenarioRunEvent, { type: 'ScenarioStepCompleted' }>['data']) {
  return step;
}
