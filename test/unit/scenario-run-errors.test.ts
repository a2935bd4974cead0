import {
  RUN_ERROR_WINDOW_MS,
  RUN_ERRORS_BEFORE_FAILING,
  scenarioRunDecider,
} from '../../command-api/scenarios/domain/scenario-run';
import { scenarioDecider } from '../../command-api/scenarios/domain/scenario';
import { bookkeepingContext, CommandHandler } from '../../command-api/kit/handler';
import type { ScenarioRunEvent } from '../../contracts/events/integrator';
import type { ScenarioSettings } from '../../contracts/integrator';
import { ERASED_VALUE } from '../../contracts/personal-data';
import { streamName } from '../../contracts/streams';
import { FairSlots } from '../../infra/fair-slots';
import { createLogger } from '../../infra/logging';
import type { OutboundHttp } from '../../infra/outbound/port';
import { ScenarioRunner, type RunnerDeps } from '../../integrator/runner';
import { evaluateHere } from '../support/expressions';
import { deciderSpec } from '../support/given-when-then';
import { receivedRequest } from '../support/hook-requests';
import { MemoryEventStore } from '../support/memory-event-store';

const AT = '2026-11-27T08:00:00.000Z';

describe('a run that keeps meeting an unexpected error', () => {
  const spec = deciderSpec(scenarioRunDecider);
  const started: ScenarioRunEvent = {
    type: 'ScenarioRunStarted',
    data: {
      runId: 'r1',
      scenarioId: 9,
      webhookId: 4,
      requestId: 'r1',
      trigger: 'instant',
      startedAt: AT,
      attempt: 1,
    },
  };
  const errored = (at: string, message = 'boom'): ScenarioRunEvent => ({
    type: 'ScenarioRunErrored',
    data: { runId: 'r1', at, message },
  });
  const note = (now: Date) => ({
    kind: 'NoteError' as const,
    runId: 'r1',
    requestId: 'r1',
    message: 'boom',
    now,
  });
  const after = (ms: number) => new Date(Date.parse(AT) + ms);
  const earlier = Array.from({ length: RUN_ERRORS_BEFORE_FAILING - 1 }, (_, n) =>
    errored(after(n * 1000).toISOString()),
  );

  test('is noted and tried again while it has met fewer errors than the bound or for less than the window', () => {
    spec
      .given([started])
      .when(note(new Date(AT)))
      .then([errored(AT)]);
    // The bound's count reached, but within the window: tried again.
    spec
      .given([started, ...earlier])
      .when(note(after(RUN_ERROR_WINDOW_MS - 1)))
      .then([errored(after(RUN_ERROR_WINDOW_MS - 1).toISOString())]);
  });

  test('fails once, saying why, when it has met the bound over the window; a finished run notes nothing', () => {
    const now = after(RUN_ERROR_WINDOW_MS);
    const state = spec
      .given([started, ...earlier])
      .when(note(now))
      .then([
        errored(now.toISOString()),
        {
          type: 'ScenarioRunFailed',
          data: {
            runId: 'r1',
            requestId: 'r1',
            finishedAt: now.toISOString(),
            step: null,
            message: `the run met an unexpected error ${RUN_ERRORS_BEFORE_FAILING} times in 60 s and is not tried again: boom`,
          },
        },
      ]);
    expect(state).toMatchObject({ status: 'failed', errors: RUN_ERRORS_BEFORE_FAILING, firstErrorAt: AT });
    const before = [started, ...earlier].reduce(scenarioRunDecider.evolve, scenarioRunDecider.initialState);
    const failed = scenarioRunDecider.decide(note(now), before);
    expect(failed.map((event) => event.type)).toEqual(['ScenarioRunErrored', 'ScenarioRunFailed']);
    spec
      .given([started, ...earlier, ...failed])
      .when(note(after(2 * RUN_ERROR_WINDOW_MS)))
      .thenNothingHappens();
  });
});

describe('the runner and an error that is not a step failure', () => {
  const settings: ScenarioSettings = {
    name: 'Calls out',
    webhookId: 4,
    schedule: { kind: 'instant' },
    sequential: false,
    autoCommit: false,
    steps: [
      { kind: 'setVariable', name: 'n', value: 1 },
      {
        kind: 'httpRequest',
        method: 'GET',
        url: 'https://example.com/x',
        timeoutMs: 1000,
        maxResponseBytes: 1000,
        parse: 'auto',
      },
    ] as ScenarioSettings['steps'],
  };
  const request = {
    tenant: 'acme',
    runId: 'run-1',
    attempt: 1,
    data: receivedRequest('run-1', { receivedAt: AT }),
  };

  async function setUp(store: MemoryEventStore, blobs: Partial<RunnerDeps['blobs']> = {}) {
    let now = Date.parse(AT);
    let calls = 0;
    const outbound: OutboundHttp = {
      request: () => {
        calls++;
        // A bug that user data hits: not an OutboundError, not a StepFailure.
        throw new TypeError('cannot read properties of undefined');
      },
      postJson: () => Promise.reject(new Error('unused')),
    };
    const handler = new CommandHandler(store);
    await handler.handle(
      streamName('scenario', 'acme', 9),
      scenarioDecider,
      { kind: 'CreateScenario', scenarioId: 9, ownerId: 1, active: true, settings },
      bookkeepingContext('acme', 'create-scenario-9'),
    );
    const deps = {
      handler,
      logger: createLogger('silent'),
      now: () => new Date(now),
      outbound,
      expressions: {
        evaluate: (_tenant, expression, input, context) => evaluateHere(expression, input, context),
      },
      slots: new FairSlots(4, 4),
      blobs,
    } satisfies Partial<Omit<RunnerDeps, 'blobs'>> & { blobs: Partial<RunnerDeps['blobs']> };
    const runner = new ScenarioRunner(deps as unknown as RunnerDeps);
    return {
      runner,
      handler,
      advance: (ms: number) => (now += ms),
      calls: () => calls,
    };
  }

  test('is thrown (the request is delivered again) until the run has met it often enough for long enough, then the run fails once', async () => {
    const store = new MemoryEventStore();
    const { runner, handler, advance, calls } = await setUp(store);
    for (let attempt = 1; attempt < RUN_ERRORS_BEFORE_FAILING; attempt++) {
      await expect(runner.run(request, 'instant')).rejects.toThrow('cannot read properties');
      advance(RUN_ERROR_WINDOW_MS / RUN_ERRORS_BEFORE_FAILING);
    }
    advance(RUN_ERROR_WINDOW_MS);
    const result = await runner.run(request, 'instant');
    expect(result).toEqual({
      status: 'failed',
      error: expect.stringContaining(`met an unexpected error ${RUN_ERRORS_BEFORE_FAILING} times`) as unknown,
    });
    expect(calls()).toBe(RUN_ERRORS_BEFORE_FAILING);
    // Delivered again after failing: nothing more is tried.
    expect(await runner.run(request, 'instant')).toMatchObject({ status: 'failed' });
    expect(calls()).toBe(RUN_ERRORS_BEFORE_FAILING);
    const { state } = await handler.load(streamName('scenarioRun', 'acme', 'run-1'), scenarioRunDecider);
    // The step before the failing one was kept by the first try and replayed by the others.
    expect(state).toMatchObject({ status: 'failed', errors: RUN_ERRORS_BEFORE_FAILING, outputs: [1] });
  });

  test('an error met while the store takes no write is not counted: an outage never fails a run', async () => {
    const store = new MemoryEventStore();
    const { runner, handler, advance } = await setUp(store);
    const append = store.append.bind(store);
    store.append = () => Promise.reject(new Error('the event store is down'));
    for (let attempt = 0; attempt < RUN_ERRORS_BEFORE_FAILING * 2; attempt++) {
      await expect(runner.run(request, 'instant')).rejects.toThrow();
      advance(RUN_ERROR_WINDOW_MS);
    }
    store.append = append;
    const { state } = await handler.load(streamName('scenarioRun', 'acme', 'run-1'), scenarioRunDecider);
    expect(state).toMatchObject({ status: 'none', errors: 0 });
  });

  test('a payload no longer stored (erased) fails the run once, as a step failure does, instead of being delivered again', async () => {
    const store = new MemoryEventStore();
    const { runner, handler, calls } = await setUp(store, { get: () => Promise.resolve(null) });
    const { bundle: _inline, ...stored } = receivedRequest('run-1', { receivedAt: AT });
    const gone = { ...request, data: { ...stored, payloadBlobKey: 'acme/gone' } };
    expect(await runner.run(gone, 'instant')).toEqual({
      status: 'failed',
      error: 'the request payload is no longer stored',
    });
    expect(calls()).toBe(0);
    const { state } = await handler.load(streamName('scenarioRun', 'acme', 'run-1'), scenarioRunDecider);
    expect(state).toMatchObject({ status: 'failed', outputs: [] });
  });

  test('a request erased before its run (its values read as the placeholder) fails the run without a step', async () => {
    const store = new MemoryEventStore();
    const { runner, handler, calls } = await setUp(store);
    // As the erased request's event reads: its sealed values the placeholder, whatever their type.
    const erased = {
      ...request,
      data: { ...request.data, request: ERASED_VALUE as never, bundle: ERASED_VALUE },
    };
    expect(await runner.run(erased, 'instant')).toEqual({
      status: 'failed',
      error: 'the request was erased before its run',
    });
    expect(calls()).toBe(0);
    const { state } = await handler.load(streamName('scenarioRun', 'acme', 'run-1'), scenarioRunDecider);
    expect(state).toMatchObject({ status: 'failed', outputs: [] });
  });
});
