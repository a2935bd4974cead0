import type { RecordedEvent } from '../../contracts/events/envelope';
import type { ScenarioRunEvent, WebhookRequestReceivedData } from '../../contracts/events/integrator';
import {
  ERASED_VALUE,
  RECEIVED_REQUEST_PATHS,
  REFUSED_REQUEST_PATHS,
  withValuesAt,
  type DataPath,
} from '../../contracts/personal-data';
import { requestPathsOf } from '../../command-api/scenarios/domain/scenario-run';
import { streamName } from '../../contracts/streams';
import {
  hookLogsProjection,
  hookQueueProjection,
  runBacklogsProjection,
  scenarioRunsProjection,
} from '../../projections/read-models/integrator';
import { runBacklogStreams } from '../../command-api/scenarios/domain/run-backlog';
import { documentsAfter, EventLog, projectionSpec, TEST_TENANT } from '../support/given-when-then';
import { receivedRequest } from '../support/hook-requests';

const RECEIVED_AT = '2026-11-24T10:00:00.000Z';

function request(requestId: string, queued: boolean): WebhookRequestReceivedData {
  return receivedRequest(requestId, {
    scenarioId: queued ? null : 9,
    receivedAt: RECEIVED_AT,
    bytes: 12,
    queued,
    bundle: { order: 'A-1' },
    payloadBytes: 30,
  });
}

describe('hook queue projection', () => {
  const log = new EventLog();
  const stream = streamName('hookQueue', TEST_TENANT, 4);
  const queued = log.record(stream, { type: 'WebhookRequestReceived', data: request('r1', true) });
  const failed = log.record(stream, {
    type: 'WebhookQueueItemFailed',
    data: { webhookId: 4, requestId: 'r1', runId: 'r1', attempt: 1, message: 'step 1: boom' },
  });
  const removed = log.record(stream, {
    type: 'WebhookQueueItemsRemoved',
    data: { webhookId: 4, requestIds: ['r1'], reason: 'processed' },
  });
  const queue = projectionSpec(hookQueueProjection);
  const item = {
    id: 'acme.r1',
    tenant: TEST_TENANT,
    requestId: 'r1',
    webhookId: 4,
    receivedAt: RECEIVED_AT,
    method: 'POST',
    bytes: 12,
    arrival: Number(queued.position),
    payload: request('r1', true),
  };

  test('a queued request is an item in arrival order, with what a later run needs', () => {
    queue
      .given([])
      .when(queued)
      .thenDocuments('hook_queue', [{ ...item, failedRuns: 0, lastError: null }]);
  });

  test('a failed run of it counts, with its reason; processing removes it', () => {
    queue
      .given([queued])
      .when(failed)
      .thenDocuments('hook_queue', [{ ...item, failedRuns: 1, lastError: 'step 1: boom' }]);
    queue.given([queued, failed]).when(removed).thenDocuments('hook_queue', []);
  });
});

describe('hook logs projection', () => {
  const log = new EventLog();
  const logs = projectionSpec(hookLogsProjection);
  const received = log.record(streamName('hookRequest', TEST_TENANT, 'r1'), {
    type: 'WebhookRequestReceived',
    data: request('r1', false),
  });
  const runStream = streamName('scenarioRun', TEST_TENANT, 'r1');
  const started = log.record(runStream, {
    type: 'ScenarioRunStarted',
    data: {
      runId: 'r1',
      scenarioId: 9,
      webhookId: 4,
      requestId: 'r1',
      trigger: 'instant',
      startedAt: RECEIVED_AT,
      attempt: 1,
    },
  });
  const runFailed = log.record(runStream, {
    type: 'ScenarioRunFailed',
    data: { runId: 'r1', requestId: 'r1', finishedAt: RECEIVED_AT, step: 0, message: 'step 1: boom' },
  });
  const requestRecord = {
    method: 'POST',
    url: '/hook/x',
    headers: [],
    query: {},
    body: '<a/>',
    contentType: 'application/xml',
    bytes: 4,
    ip: '127.0.0.1',
    files: [],
  };
  const refused = log.record(streamName('hookRequest', TEST_TENANT, 'r2'), {
    type: 'WebhookRequestRefused',
    data: {
      webhookId: 4,
      requestId: 'r2',
      receivedAt: RECEIVED_AT,
      method: 'POST',
      bytes: 4,
      status: 415,
      message: 'unsupported content type',
      request: requestRecord,
    },
  });
  const entry = {
    id: 'acme.r1',
    tenant: TEST_TENANT,
    requestId: 'r1',
    webhookId: 4,
    loggedAt: RECEIVED_AT,
    size: 12,
    method: 'POST',
    queued: false,
    awaitsResponse: false,
    runId: 'r1',
    responseStatus: 200,
    response: { status: 200, headers: [], body: 'Accepted' },
    bundle: { order: 'A-1' },
  };

  test('an accepted request is a success entry; its failed run makes it an error with the reason', () => {
    logs
      .given([])
      .when(received)
      .thenDocuments('hook_logs', [{ ...entry, status: 'success', error: null }]);
    logs
      .given([received, started])
      .when(runFailed)
      .thenDocuments('hook_logs', [{ ...entry, status: 'error', error: 'step 1: boom' }]);
  });

  test('a refused request is a warning entry with the answer it got', () => {
    logs
      .given([])
      .when(refused)
      .thenDocuments('hook_logs', [
        {
          id: 'acme.r2',
          tenant: TEST_TENANT,
          requestId: 'r2',
          webhookId: 4,
          status: 'warning',
          loggedAt: RECEIVED_AT,
          size: 4,
          method: 'POST',
          queued: false,
          awaitsResponse: false,
          runId: null,
          responseStatus: 415,
          response: { status: 415, headers: [], body: 'unsupported content type' },
          error: 'unsupported content type',
          request: requestRecord,
        },
      ]);
  });

  // Projections take any order of valid events (test/contracts/projections-hostile.ts): an erasure that says
  // the request was refused and answered, after a receipt still waiting for its answer, still applies.
  test('an erasure of an entry still waiting for its answer scrubs it without failing', () => {
    const waiting = log.record(streamName('hookRequest', TEST_TENANT, 'r3'), {
      type: 'WebhookRequestReceived',
      data: { ...request('r3', false), awaitsResponse: true },
    });
    const erased = log.record(streamName('hookRequestErasure', TEST_TENANT, 'r3'), {
      type: 'WebhookRequestErased',
      data: {
        webhookId: 4,
        requestId: 'r3',
        refused: true,
        runs: [{ runId: 'r3', operations: 0, failed: false, responded: true }],
        queueFailures: false,
      },
    });
    const [document] = documentsAfter(hookLogsProjection, [waiting, erased], 'hook_logs');
    expect(document).toMatchObject({
      requestId: 'r3',
      erased: true,
      bundle: ERASED_VALUE,
      error: ERASED_VALUE,
      responseStatus: null,
      response: { headers: [], body: ERASED_VALUE },
    });
  });
});

describe('scenario runs projection', () => {
  const log = new EventLog();
  const runs = projectionSpec(scenarioRunsProjection);
  const runStream = streamName('scenarioRun', TEST_TENANT, 'r1~2');
  const started = log.record(runStream, {
    type: 'ScenarioRunStarted',
    data: {
      runId: 'r1~2',
      scenarioId: 9,
      webhookId: 4,
      requestId: 'r1',
      trigger: 'scheduled',
      startedAt: RECEIVED_AT,
      attempt: 2,
    },
  });
  const step = log.record(runStream, {
    type: 'ScenarioStepCompleted',
    data: { runId: 'r1~2', index: 0, kind: 'setVariable', output: 2, durationMs: 1.5 },
  });
  const succeeded = log.record(runStream, {
    type: 'ScenarioRunSucceeded',
    data: { runId: 'r1~2', requestId: 'r1', finishedAt: RECEIVED_AT, operations: 1 },
  });

  test('a run again of a queued request shows its attempt, steps and outcome', () => {
    runs
      .given([started, step])
      .when(succeeded)
      .thenDocuments('scenario_runs', [
        {
          id: 'acme.r1~2',
          tenant: TEST_TENANT,
          runId: 'r1~2',
          scenarioId: 9,
          webhookId: 4,
          requestId: 'r1',
          trigger: 'scheduled',
          attempt: 2,
          status: 'succeeded',
          startedAt: RECEIVED_AT,
          finishedAt: RECEIVED_AT,
          operations: 1,
          error: null,
          failedStep: null,
          responseStatus: null,
          steps: { '0': { kind: 'setVariable', output: 2, durationMs: 1.5, path: '0' } },
        },
      ]);
  });

  test('steps written together are one change of the run', () => {
    const together = log.record(runStream, {
      type: 'ScenarioStepsCompleted',
      data: {
        runId: 'r1~2',
        steps: [
          { index: 1, kind: 'setVariable', output: 'a', durationMs: 0.5, path: '1[0]' },
          { index: 2, kind: 'setVariable', output: 'b', path: '1[1]' },
        ],
      },
    });
    runs
      .given([started, step])
      .when(together)
      .thenDocuments('scenario_runs', [
        expect.objectContaining({
          operations: 3,
          steps: {
            '0': { kind: 'setVariable', output: 2, durationMs: 1.5, path: '0' },
            '1': { kind: 'setVariable', output: 'a', durationMs: 0.5, path: '1[0]' },
            '2': { kind: 'setVariable', output: 'b', durationMs: null, path: '1[1]' },
          },
        }),
      ]);
  });
});

describe('run backlogs projection', () => {
  const log = new EventLog();
  const { requests, drain } = runBacklogStreams(TEST_TENANT);
  const parked = (runId: string) =>
    log.record(requests, {
      type: 'ScenarioRunParked',
      data: { runId, orderKey: `hookRequest-${TEST_TENANT}.${runId}`, request: request(runId, false) },
    });
  const first = parked('r1');
  const second = parked('r2');
  const held = (next: number, until: string) =>
    log.record(drain, { type: 'RunBacklogHeld', data: { holder: 'integrator-1', until, next } });
  const drained = held(2, RECEIVED_AT);
  const backlogs = projectionSpec(runBacklogsProjection);

  test("a system's backlog counts what was parked in it and how far its drain got", () => {
    backlogs
      .given([])
      .when(first)
      .thenDocuments('run_backlogs', [{ id: 'acme.runs', tenant: TEST_TENANT, parked: 1, next: 0 }]);
    backlogs
      .given([first])
      .when(second)
      .thenDocuments('run_backlogs', [{ id: 'acme.runs', tenant: TEST_TENANT, parked: 2, next: 0 }]);
    backlogs
      .given([first, second])
      .when(drained)
      .thenDocuments('run_backlogs', [{ id: 'acme.runs', tenant: TEST_TENANT, parked: 2, next: 2 }]);
  });
});

/**
 * An erased request, two ways: live, its events projected as they were and then its erasure; replayed, its
 * events read with their sealed values as the placeholder (the key is gone), then its erasure. Both end in the
 * same documents, and neither holds what was sent.
 */
describe('an erased request reads the same live and replayed', () => {
  const SENT = 'sent-by-ada@example.org';
  const log = new EventLog();
  const runStream = (runId: string) => streamName('scenarioRun', TEST_TENANT, runId);
  const sent = (requestId: string, queued: boolean): WebhookRequestReceivedData => ({
    ...request(requestId, queued),
    request: {
      method: 'POST',
      url: `/hook/x?email=${SENT}`,
      headers: [],
      query: { email: SENT },
      body: null,
      contentType: null,
      bytes: 0,
      ip: '127.0.0.1',
      files: [],
    },
    bundle: { email: SENT },
  });
  const started = (runId: string, requestId: string, trigger: 'instant' | 'scheduled', attempt: number) =>
    log.record(runStream(runId), {
      type: 'ScenarioRunStarted',
      data: { runId, scenarioId: 9, webhookId: 4, requestId, trigger, startedAt: RECEIVED_AT, attempt },
    });
  const ranAtOnce = [
    log.record(streamName('hookRequest', TEST_TENANT, 'q1'), {
      type: 'WebhookRequestReceived',
      data: sent('q1', false),
    }),
    started('q1', 'q1', 'instant', 1),
    log.record(runStream('q1'), {
      type: 'ScenarioStepsCompleted',
      data: {
        runId: 'q1',
        steps: [
          { index: 0, kind: 'createRecord', output: { recordId: 7, name: SENT } },
          { index: 1, kind: 'webhookResponse', output: { status: 200, headers: [], body: SENT } },
        ],
      },
    }),
    log.record(runStream('q1'), {
      type: 'WebhookResponseReady',
      data: {
        runId: 'q1',
        requestId: 'q1',
        response: { status: 200, headers: [{ name: 'x-who', value: SENT }], body: SENT },
      },
    }),
    log.record(runStream('q1'), {
      type: 'ScenarioRunSucceeded',
      data: { runId: 'q1', requestId: 'q1', finishedAt: RECEIVED_AT, operations: 2 },
    }),
  ];
  const queueStream = streamName('hookQueue', TEST_TENANT, 4);
  const queued = [
    log.record(queueStream, { type: 'WebhookRequestReceived', data: sent('q2', true) }),
    started('q2', 'q2', 'scheduled', 1),
    log.record(runStream('q2'), {
      type: 'ScenarioStepCompleted',
      data: { runId: 'q2', index: 0, kind: 'createRecord', output: { name: SENT } },
    }),
    log.record(runStream('q2'), {
      type: 'ScenarioRunFailed',
      data: { runId: 'q2', requestId: 'q2', finishedAt: RECEIVED_AT, step: 1, message: `no ${SENT}` },
    }),
    log.record(queueStream, {
      type: 'WebhookQueueItemFailed',
      data: { webhookId: 4, requestId: 'q2', runId: 'q2', attempt: 1, message: `no ${SENT}` },
    }),
  ];
  // Refused, with a text that quotes what was sent (a parser's error does).
  const refused = [
    log.record(streamName('hookRequest', TEST_TENANT, 'q3'), {
      type: 'WebhookRequestRefused',
      data: {
        webhookId: 4,
        requestId: 'q3',
        receivedAt: RECEIVED_AT,
        method: 'POST',
        bytes: 30,
        status: 400,
        message: `Unexpected token, "${SENT}" is not valid JSON`,
        request: { ...sent('q3', false).request!, body: `${SENT}` },
      },
    }),
  ];
  /** The erasure of a queued request whose one run (under the request's id) did what is given. */
  const erasureOf = (requestId: string, run: { operations: number; failed: boolean; responded: boolean }) =>
    log.record(streamName('hookRequestErasure', TEST_TENANT, requestId), {
      type: 'WebhookRequestErased',
      data: { webhookId: 4, requestId, runs: [{ runId: requestId, ...run }], queueFailures: run.failed },
    });
  const erasures = [
    erasureOf('q1', { operations: 2, failed: false, responded: true }),
    erasureOf('q2', { operations: 1, failed: true, responded: false }),
    log.record(streamName('hookRequestErasure', TEST_TENANT, 'q3'), {
      type: 'WebhookRequestErased',
      data: {
        webhookId: 4,
        requestId: 'q3',
        reason: 'Art. 17',
        refused: true,
        runs: [],
        queueFailures: false,
      },
    }),
  ];
  /** The paths the deciders seal an event's values at (what a replay after the erasure reads as erased). */
  const sealedPaths = (event: RecordedEvent): readonly DataPath[] => {
    if (event.type === 'WebhookRequestReceived') return RECEIVED_REQUEST_PATHS;
    if (event.type === 'WebhookRequestRefused') return REFUSED_REQUEST_PATHS;
    if (event.type === 'WebhookQueueItemFailed') return [['message']];
    return requestPathsOf(event as unknown as ScenarioRunEvent);
  };
  const asReplayed = (event: RecordedEvent): RecordedEvent => ({
    ...event,
    data: withValuesAt(event.data, sealedPaths(event), () => ERASED_VALUE),
  });
  const live = [...ranAtOnce, ...queued, ...refused, ...erasures];
  const replayed = [...ranAtOnce, ...queued, ...refused].map(asReplayed).concat(erasures);

  test.each([
    ['hook logs', hookLogsProjection, 'hook_logs'],
    ['hook queue', hookQueueProjection, 'hook_queue'],
    ['scenario runs', scenarioRunsProjection, 'scenario_runs'],
  ] as const)('%s', (_name, projection, collection) => {
    const before = documentsAfter(projection, [...ranAtOnce, ...queued, ...refused], collection);
    expect(JSON.stringify(before)).toContain(SENT);
    const after = documentsAfter(projection, live, collection);
    expect(after).toEqual(documentsAfter(projection, replayed, collection));
    expect(after).toHaveLength(before.length);
    expect(JSON.stringify(after)).not.toContain(SENT);
    expect(JSON.stringify(after)).toContain(ERASED_VALUE);
  });
});
