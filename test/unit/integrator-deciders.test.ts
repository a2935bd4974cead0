import { hookQueueDecider, queuedRunId } from '../../command-api/hooks/domain/hook-queue';
import { hookRequestDecider, hookRequestStream } from '../../command-api/hooks/domain/hook-request';
import { requestErasureDecider, requestErasureStream } from '../../command-api/hooks/domain/request-erasure';
import { scenarioDecider, slotOf } from '../../command-api/scenarios/domain/scenario';
import { scenarioRunDecider } from '../../command-api/scenarios/domain/scenario-run';
import { effectiveStatus, webhookDecider, webhookKeyDecider } from '../../command-api/hooks/domain/webhook';
import type {
  HookQueueEvent,
  RequestErasureEvent,
  ScenarioEvent,
  ScenarioRunEvent,
  WebhookEvent,
  WebhookRequestReceivedData,
} from '../../contracts/events/integrator';
import { DEFAULT_WEBHOOK_SETTINGS, HOOK_QUEUE_FULL, type ScenarioSettings } from '../../contracts/integrator';
import { partitionKeyOf } from '../../contracts/streams';
import { hookRequestValues, type DataPath, type PersonalValues } from '../../contracts/personal-data';
import { deciderSpec } from '../support/given-when-then';
import { receivedRequest } from '../support/hook-requests';

const KEY = 'A'.repeat(16) + 'b'.repeat(16);
const UDID = '0b7c1f5e-1d2a-4c3b-9e8f-1234567890ab';
const CREATED_AT = '2026-11-01T00:00:00.000Z';
const settings = { ...DEFAULT_WEBHOOK_SETTINGS, name: 'Orders' };
const hours = (n: number) => new Date(Date.parse(CREATED_AT) + n * 3_600_000);

describe('webhook decider', () => {
  const spec = deciderSpec(webhookDecider);
  const created: WebhookEvent = {
    type: 'WebhookCreated',
    data: { webhookId: 4, key: KEY, udid: UDID, kind: 'web', ...settings, createdAt: CREATED_AT },
  };
  const bound: WebhookEvent = { type: 'WebhookBound', data: { webhookId: 4, scenarioId: 9 } };

  test('a new hook is enabled and counts its unbound time from its creation', () => {
    const state = spec
      .given([])
      .when({
        kind: 'CreateWebhook',
        webhookId: 4,
        key: KEY,
        udid: UDID,
        hookKind: 'web',
        settings,
        now: new Date(CREATED_AT),
      })
      .then([created]);
    expect(state).toMatchObject({ status: 'enabled', scenarioId: null, unboundSince: CREATED_AT });
  });

  test('a mailhook keeps its kind; a hook created before kinds existed is a web hook', () => {
    const mailCreated: WebhookEvent = { ...created, data: { ...created.data, kind: 'mail' } };
    const state = spec
      .given([])
      .when({
        kind: 'CreateWebhook',
        webhookId: 4,
        key: KEY,
        udid: UDID,
        hookKind: 'mail',
        settings,
        now: new Date(CREATED_AT),
      })
      .then([mailCreated]);
    expect(state.kind).toBe('mail');
    const { kind: _kind, ...before } = created.data;
    const old: WebhookEvent = { type: 'WebhookCreated', data: before };
    expect(webhookDecider.evolve(webhookDecider.initialState, old).kind).toBe('web');
  });

  test('a hook serves one scenario: binding another is refused, binding the same again changes nothing', () => {
    spec.given([created, bound]).when({ kind: 'BindScenario', scenarioId: 10 }).thenThrows('conflict');
    spec.given([created, bound]).when({ kind: 'BindScenario', scenarioId: 9 }).thenNothingHappens();
    const state = spec.given([created]).when({ kind: 'BindScenario', scenarioId: 9 }).then([bound]);
    expect(state.unboundSince).toBeNull();
  });

  test('unbinding starts the 120 hours again; unbinding another scenario changes nothing', () => {
    const at = hours(10).toISOString();
    spec
      .given([created, bound])
      .when({ kind: 'UnbindScenario', scenarioId: 9, now: hours(10) })
      .then([{ type: 'WebhookUnbound', data: { webhookId: 4, scenarioId: 9, at } }]);
    spec
      .given([created, bound])
      .when({ kind: 'UnbindScenario', scenarioId: 3, now: hours(10) })
      .thenNothingHappens();
  });

  test('deactivated after more than 120 hours without a scenario, not a moment before', () => {
    spec
      .given([created])
      .when({ kind: 'DeactivateIfUnbound', now: hours(120) })
      .thenNothingHappens();
    const state = spec
      .given([created])
      .when({ kind: 'DeactivateIfUnbound', now: new Date(hours(120).getTime() + 1) })
      .then([
        {
          type: 'WebhookDeactivated',
          data: { webhookId: 4, reason: 'no scenario for more than 120 hours', unboundSince: CREATED_AT },
        },
      ]);
    expect(state.status).toBe('deactivated');
    spec
      .given([created, bound])
      .when({ kind: 'DeactivateIfUnbound', now: hours(500) })
      .thenNothingHappens();
  });

  test('the clock deactivates a hook for the receiver even before the command ran', () => {
    const state = webhookDecider.evolve(webhookDecider.initialState, created);
    expect(effectiveStatus(state, hours(119))).toBe('enabled');
    expect(effectiveStatus(state, hours(121))).toBe('deactivated');
    const withScenario = webhookDecider.evolve(state, bound);
    expect(effectiveStatus(withScenario, hours(1000))).toBe('enabled');
  });

  test('enabling a deactivated hook gives it another 120 hours', () => {
    const deactivated: WebhookEvent = {
      type: 'WebhookDeactivated',
      data: { webhookId: 4, reason: 'no scenario for more than 120 hours', unboundSince: CREATED_AT },
    };
    const at = hours(200).toISOString();
    const state = spec
      .given([created, deactivated])
      .when({ kind: 'EnableWebhook', now: hours(200) })
      .then([{ type: 'WebhookEnabled', data: { webhookId: 4, at, unboundSince: at } }]);
    expect(effectiveStatus(state, hours(300))).toBe('enabled');
    spec.given([created, deactivated]).when({ kind: 'DisableWebhook' }).thenThrows('conflict');
  });

  test('updates only what changed; a deleted or unknown hook is a 404; a bound hook cannot be deleted', () => {
    spec
      .given([created])
      .when({ kind: 'UpdateWebhook', settings: { name: 'Orders', maxResults: 5 } })
      .then([{ type: 'WebhookUpdated', data: { webhookId: 4, maxResults: 5 } }]);
    spec
      .given([created])
      .when({ kind: 'UpdateWebhook', settings: { name: 'Orders' } })
      .thenNothingHappens();
    spec.given([]).when({ kind: 'DisableWebhook' }).thenThrows('not_found');
    spec.given([created, bound]).when({ kind: 'DeleteWebhook' }).thenThrows('conflict');
    spec
      .given([created, { type: 'WebhookDeleted', data: { webhookId: 4 } }])
      .when({ kind: 'Redetermine' })
      .thenThrows('not_found');
  });

  test('re-determine waits for the next request, whose shape is then stored', () => {
    const structure = { fields: [{ name: 'order', type: 'text' as const }] };
    const state = spec
      .given([created, { type: 'WebhookStructureRedetermining', data: { webhookId: 4 } }])
      .when({ kind: 'RecordStructure', structure, requestId: 'r1' })
      .then([{ type: 'WebhookStructureDetermined', data: { webhookId: 4, structure, requestId: 'r1' } }]);
    expect(state).toMatchObject({ redetermining: false, determinedStructure: structure });
  });
});

describe('webhook key decider', () => {
  const spec = deciderSpec(webhookKeyDecider);
  const assigned = { type: 'WebhookKeyAssigned' as const, data: { key: KEY, tenant: 'acme', webhookId: 4 } };
  test('an address names one hook of one tenant, for good', () => {
    spec.given([]).when({ kind: 'AssignKey', key: KEY, tenant: 'acme', webhookId: 4 }).then([assigned]);
    spec
      .given([assigned])
      .when({ kind: 'AssignKey', key: KEY, tenant: 'acme', webhookId: 4 })
      .thenNothingHappens();
    spec
      .given([assigned])
      .when({ kind: 'AssignKey', key: KEY, tenant: 'other', webhookId: 4 })
      .thenThrows('conflict');
  });
});

function request(requestId: string): WebhookRequestReceivedData {
  return receivedRequest(requestId, { receivedAt: CREATED_AT, queued: true, payloadBytes: 12 });
}

describe('hook queue decider', () => {
  const spec = deciderSpec(hookQueueDecider);
  const queued = (requestId: string): HookQueueEvent => ({
    type: 'WebhookRequestReceived',
    data: request(requestId),
  });

  test('a request is queued while there is room, what it carries sealed under its key; a full queue refuses it and stays as it is', () => {
    const state = spec
      .given([queued('a')])
      .when({ kind: 'Enqueue', request: request('b'), capacity: 2 })
      .then([{ ...queued('b'), personal: hookRequestValues('b', [['request'], ['bundle']]) }]);
    expect(state.requestIds).toEqual(['a', 'b']);
    const refusal = spec
      .given([queued('a'), queued('b')])
      .when({ kind: 'Enqueue', request: request('c'), capacity: 2 })
      .thenThrows('bad_request');
    expect(refusal.message).toBe(HOOK_QUEUE_FULL);
  });

  test('removes the items that are there, in one event; none there changes nothing', () => {
    const state = spec
      .given([queued('a'), queued('b'), queued('c')])
      .when({ kind: 'RemoveItems', webhookId: 4, requestIds: ['b', 'x'], reason: 'deleted' })
      .then([
        { type: 'WebhookQueueItemsRemoved', data: { webhookId: 4, requestIds: ['b'], reason: 'deleted' } },
      ]);
    expect(state.requestIds).toEqual(['a', 'c']);
    spec
      .given([queued('a')])
      .when({ kind: 'RemoveItems', webhookId: 4, requestIds: ['x'], reason: 'processed' })
      .thenNothingHappens();
  });

  test('a failed run of a queued item counts its attempts and names the next run; removal forgets them', () => {
    const failed = (runId: string, attempt: number): HookQueueEvent => ({
      type: 'WebhookQueueItemFailed',
      data: { webhookId: 4, requestId: 'a', runId, attempt, message: 'boom' },
    });
    const fail = (runId: string) =>
      ({ kind: 'RecordFailure', webhookId: 4, requestId: 'a', runId, message: 'boom' }) as const;
    expect(
      queuedRunId([queued('a')].reduce(hookQueueDecider.evolve, hookQueueDecider.initialState), 'a'),
    ).toEqual({ runId: 'a', attempt: 1 });
    // Why it failed may quote what the request carried: sealed under its key.
    const after = spec
      .given([queued('a')])
      .when(fail('a'))
      .then([{ ...failed('a', 1), personal: hookRequestValues('a', [['message']]) }]);
    expect(queuedRunId(after, 'a')).toEqual({ runId: 'a~2', attempt: 2 });
    spec
      .given([queued('a'), failed('a', 1)])
      .when(fail('a~2'))
      .then([failed('a~2', 2)]);
    // The same failure reported again (a second integrator, a redelivery) is counted once.
    spec
      .given([queued('a'), failed('a', 1)])
      .when(fail('a'))
      .thenNothingHappens();
    spec.given([]).when(fail('a')).thenNothingHappens();
    const removed = spec
      .given([queued('a'), failed('a', 1)])
      .when({ kind: 'RemoveItems', webhookId: 4, requestIds: ['a'], reason: 'processed' })
      .then([
        { type: 'WebhookQueueItemsRemoved', data: { webhookId: 4, requestIds: ['a'], reason: 'processed' } },
      ]);
    expect(removed.failures).toEqual({});
  });
});

describe('hook request decider and streams', () => {
  test('a request that runs at once is appended once', () => {
    const spec = deciderSpec(hookRequestDecider);
    const data = { ...request('a'), queued: false };
    spec
      .given([])
      .when({ kind: 'ReceiveRequest', request: data })
      .then([
        { type: 'WebhookRequestReceived', data, personal: hookRequestValues('a', [['request'], ['bundle']]) },
      ]);
    spec
      .given([{ type: 'WebhookRequestReceived', data }])
      .when({ kind: 'ReceiveRequest', request: data })
      .thenNothingHappens();
  });

  test("a request's erasure is recorded once, in a stream of its own, naming only its subject", () => {
    const spec = deciderSpec(requestErasureDecider);
    const erasure = {
      webhookId: 4,
      requestId: 'a',
      runs: [{ runId: 'a', operations: 2, failed: false, responded: true }],
      queueFailures: false,
    };
    const erased: RequestErasureEvent & { personal: PersonalValues } = {
      type: 'WebhookRequestErased',
      data: erasure,
      personal: hookRequestValues('a', []),
    };
    expect(spec.given([]).when({ kind: 'EraseRequest', erasure }).then([erased])).toEqual({ erased: true });
    spec.given([erased]).when({ kind: 'EraseRequest', erasure }).thenNothingHappens();
    expect(requestErasureStream('acme', 'a')).toBe('hookRequestErasure-acme.a');
  });

  test('a refused request is appended once, as a refusal', () => {
    const spec = deciderSpec(hookRequestDecider);
    const refusal = {
      webhookId: 4,
      requestId: 'a',
      receivedAt: CREATED_AT,
      method: 'GET',
      bytes: 0,
      status: 400,
      message: 'Queue is full.',
      request: {
        method: 'GET',
        url: '/hook/x',
        headers: [],
        query: {},
        body: null,
        contentType: null,
        bytes: 0,
        ip: '127.0.0.1',
        files: [],
      },
    };
    // What was sent, and the refusal's text (which may quote it), are sealed under the request's key.
    spec
      .given([])
      .when({ kind: 'RefuseRequest', refusal })
      .then([
        {
          type: 'WebhookRequestRefused',
          data: refusal,
          personal: hookRequestValues(refusal.requestId, [['request'], ['message']]),
        },
      ]);
    spec
      .given([{ type: 'WebhookRequestRefused', data: refusal }])
      .when({ kind: 'RefuseRequest', refusal })
      .thenNothingHappens();
  });

  test("a sequential scenario's requests share one relay key; the others each have their own", () => {
    const first = hookRequestStream('acme', 4, 'r1', true);
    const second = hookRequestStream('acme', 4, 'r2', true);
    expect(first).not.toBe(second);
    expect(partitionKeyOf(first)).toBe(partitionKeyOf(second));
    const parallel = [hookRequestStream('acme', 4, 'r1', false), hookRequestStream('acme', 4, 'r2', false)];
    expect(partitionKeyOf(parallel[0]!)).not.toBe(partitionKeyOf(parallel[1]!));
    expect(partitionKeyOf(parallel[0]!)).toBe(parallel[0]);
  });
});

describe('scenario decider', () => {
  const spec = deciderSpec(scenarioDecider);
  const scenarioSettings: ScenarioSettings = {
    name: 'Orders',
    webhookId: 4,
    schedule: { kind: 'instant' },
    sequential: false,
    autoCommit: false,
    steps: [{ kind: 'setVariable', name: 'total', value: { expr: 'amount * 2' } }],
  };
  const created: ScenarioEvent = {
    type: 'ScenarioCreated',
    data: { scenarioId: 9, ownerId: 1, active: true, ...scenarioSettings },
  };

  test('created active or inactive; deactivation keeps its reason until activated', () => {
    expect(
      spec
        .given([])
        .when({ kind: 'CreateScenario', scenarioId: 9, ownerId: 1, active: true, settings: scenarioSettings })
        .then([created]),
    ).toMatchObject({ status: 'active' });
    const state = spec
      .given([created])
      .when({ kind: 'DeactivateScenario', reason: 'failed 3 times' })
      .then([{ type: 'ScenarioDeactivated', data: { scenarioId: 9, reason: 'failed 3 times' } }]);
    expect(state.deactivatedBecause).toBe('failed 3 times');
    spec.given([created]).when({ kind: 'ActivateScenario' }).thenNothingHappens();
    spec.given([]).when({ kind: 'ActivateScenario' }).thenThrows('not_found');
  });

  describe('scheduled runs', () => {
    const scheduled: ScenarioEvent = {
      type: 'ScenarioCreated',
      data: { scenarioId: 9, active: true, ...scenarioSettings, schedule: { kind: 'interval', minutes: 15 } },
    };
    const now = new Date(CREATED_AT);
    const slot = slotOf(now, 15);
    const startedIn = (at: number): ScenarioEvent => ({
      type: 'ScenarioScheduledRunStarted',
      data: { scenarioId: 9, slot: at, startedAt: CREATED_AT },
    });
    const endedWith = (at: number, consecutiveErrors: number): ScenarioEvent => ({
      type: 'ScenarioScheduledRunEnded',
      data: {
        scenarioId: 9,
        slot: at,
        processed: 0,
        failedRunId: consecutiveErrors === 0 ? null : `r${at}`,
        message: consecutiveErrors === 0 ? null : 'boom',
        consecutiveErrors,
      },
    });
    const failure = (at: number) => ({ runId: `r${at}`, requestId: `q${at}`, message: 'boom' });

    test('one run per slot: a second start in the same or an earlier slot is a conflict', () => {
      expect(slotOf(new Date(15 * 60_000 * 7 + 1), 15)).toBe(7);
      spec
        .given([scheduled])
        .when({ kind: 'StartScheduledRun', slot, now })
        .then([startedIn(slot)]);
      spec
        .given([scheduled, startedIn(slot)])
        .when({ kind: 'StartScheduledRun', slot, now })
        .thenThrows('conflict');
      spec.given([created]).when({ kind: 'StartScheduledRun', slot, now }).thenThrows('conflict');
      spec
        .given([scheduled, { type: 'ScenarioDeactivated', data: { scenarioId: 9, reason: 'by its owner' } }])
        .when({ kind: 'StartScheduledRun', slot, now })
        .thenThrows('conflict');
    });

    test('the third failed run in a row deactivates it, with the reason; a success in between resets the count', () => {
      const history = [scheduled, startedIn(1), endedWith(1, 1), startedIn(2), endedWith(2, 2), startedIn(3)];
      const state = spec
        .given(history)
        .when({ kind: 'EndScheduledRun', slot: 3, processed: 0, failure: failure(3) })
        .then([
          // The failure's message may quote what its request sent: sealed under the request's key, and not
          // copied into the reason.
          { ...endedWith(3, 3), personal: hookRequestValues('q3', [['message']]) },
          {
            type: 'ScenarioDeactivated',
            data: { scenarioId: 9, reason: '3 scheduled runs failed in a row; the last: run r3' },
          },
        ]);
      expect(state).toMatchObject({ status: 'inactive', consecutiveErrors: 3 });
      spec
        .given([scheduled, startedIn(1), endedWith(1, 1), startedIn(2), endedWith(2, 0), startedIn(3)])
        .when({ kind: 'EndScheduledRun', slot: 3, processed: 0, failure: failure(3) })
        .then([endedWith(3, 1)]);
      // Activating again starts the count afresh.
      const reactivated = [
        ...history,
        endedWith(3, 3),
        { type: 'ScenarioActivated', data: { scenarioId: 9 } } as ScenarioEvent,
      ].reduce(scenarioDecider.evolve, scenarioDecider.initialState);
      expect(reactivated.consecutiveErrors).toBe(0);
    });
  });
});

describe('scenario run decider', () => {
  const spec = deciderSpec(scenarioRunDecider);
  const now = new Date(CREATED_AT);
  const started: ScenarioRunEvent = {
    type: 'ScenarioRunStarted',
    data: {
      runId: 'r1',
      scenarioId: 9,
      webhookId: 4,
      requestId: 'r1',
      trigger: 'instant',
      startedAt: CREATED_AT,
      attempt: 1,
      blobKeys: ['acme/payload'],
    },
  };
  const step0: ScenarioRunEvent = {
    type: 'ScenarioStepCompleted',
    data: { runId: 'r1', index: 0, kind: 'setVariable', output: 2 },
  };
  const succeeded: ScenarioRunEvent = {
    type: 'ScenarioRunSucceeded',
    data: { runId: 'r1', requestId: 'r1', finishedAt: CREATED_AT, operations: 1 },
  };
  const start = {
    kind: 'StartRun' as const,
    runId: 'r1',
    scenarioId: 9,
    webhookId: 4,
    requestId: 'r1',
    trigger: 'instant' as const,
    attempt: 1,
    blobKeys: ['acme/payload'],
    now,
  };

  test('a run starts once, whatever delivers its request again', () => {
    spec.given([]).when(start).then([started]);
    spec.given([started]).when(start).thenNothingHappens();
  });

  test('steps complete in order, a repeated step changes nothing, a skipped one is refused', () => {
    spec
      .given([started])
      .when({ kind: 'CompleteStep', runId: 'r1', index: 0, stepKind: 'setVariable', output: 2 })
      .then([step0]);
    spec
      .given([started, step0])
      .when({ kind: 'CompleteStep', runId: 'r1', index: 0, stepKind: 'setVariable', output: 2 })
      .thenNothingHappens();
    spec
      .given([started])
      .when({ kind: 'CompleteStep', runId: 'r1', index: 1, stepKind: 'setVariable', output: 2 })
      .thenThrows('conflict');
  });

  test('steps written together are one event; a resumed run reads their outputs from it', () => {
    const complete = (index: number, output: number) => ({
      kind: 'CompleteStep' as const,
      runId: 'r1',
      index,
      stepKind: 'setVariable',
      output,
      path: `1[${index}]`,
    });
    const together: ScenarioRunEvent = {
      type: 'ScenarioStepsCompleted',
      data: {
        runId: 'r1',
        steps: [
          { index: 0, kind: 'setVariable', output: 10, path: '1[0]' },
          { index: 1, kind: 'setVariable', output: 11, path: '1[1]' },
          { index: 2, kind: 'setVariable', output: 12, path: '1[2]' },
        ],
      },
    };
    spec
      .given([started])
      .when({ kind: 'Batch', commands: [complete(0, 10), complete(1, 11), complete(2, 12)] })
      .then([together]);
    const state = [started, together].reduce(scenarioRunDecider.evolve, scenarioRunDecider.initialState);
    expect(state.outputs).toEqual([10, 11, 12]);
    spec
      .given([started, together])
      .when({ kind: 'Batch', commands: [complete(2, 12), complete(3, 13)] })
      .then([
        {
          type: 'ScenarioStepCompleted',
          data: { runId: 'r1', index: 3, kind: 'setVariable', output: 13, path: '1[3]' },
        },
      ]);
  });

  test('a step keeps how long it took', () => {
    spec
      .given([started])
      .when({
        kind: 'CompleteStep',
        runId: 'r1',
        index: 0,
        stepKind: 'filter',
        output: { passed: false },
        durationMs: 0.25,
      })
      .then([
        {
          type: 'ScenarioStepCompleted',
          data: { runId: 'r1', index: 0, kind: 'filter', output: { passed: false }, durationMs: 0.25 },
        },
      ]);
  });

  test("what a run records of its request's data is sealed under the request's key, in a batch that starts it too", () => {
    const sealed = (paths: DataPath[]) => hookRequestValues('r1', paths);
    spec
      .given([])
      .when({
        kind: 'Batch',
        commands: [
          start,
          { kind: 'CompleteStep', runId: 'r1', index: 0, stepKind: 'setVariable', output: 'x' },
          { kind: 'CompleteStep', runId: 'r1', index: 1, stepKind: 'setVariable', output: 'y' },
          {
            kind: 'Respond',
            runId: 'r1',
            requestId: 'r1',
            response: { status: 200, headers: [], body: 'x' },
          },
          { kind: 'NoteError', runId: 'r1', requestId: 'r1', message: 'x failed', now },
        ],
      })
      .then([
        started,
        {
          type: 'ScenarioStepsCompleted',
          data: {
            runId: 'r1',
            steps: [
              { index: 0, kind: 'setVariable', output: 'x' },
              { index: 1, kind: 'setVariable', output: 'y' },
            ],
          },
          personal: sealed([
            ['steps', 0, 'output'],
            ['steps', 1, 'output'],
          ]),
        },
        {
          type: 'WebhookResponseReady',
          data: { runId: 'r1', requestId: 'r1', response: { status: 200, headers: [], body: 'x' } },
          personal: sealed([
            ['response', 'headers'],
            ['response', 'body'],
          ]),
        },
        {
          type: 'ScenarioRunErrored',
          data: { runId: 'r1', at: CREATED_AT, message: 'x failed' },
          personal: sealed([['message']]),
        },
      ]);
    spec
      .given([started])
      .when({ kind: 'Fail', runId: 'r1', requestId: 'r1', step: 0, message: 'no x', now })
      .then([
        {
          type: 'ScenarioRunFailed',
          data: { runId: 'r1', requestId: 'r1', finishedAt: CREATED_AT, step: 0, message: 'no x' },
          personal: sealed([['message']]),
        },
      ]);
  });

  test('one response per run; a finished run takes nothing more', () => {
    const response = { status: 201, headers: [], body: 'made' };
    const ready: ScenarioRunEvent = {
      type: 'WebhookResponseReady',
      data: { runId: 'r1', requestId: 'r1', response },
    };
    spec.given([started]).when({ kind: 'Respond', runId: 'r1', requestId: 'r1', response }).then([ready]);
    spec
      .given([started, ready])
      .when({ kind: 'Respond', runId: 'r1', requestId: 'r1', response })
      .thenNothingHappens();
    spec
      .given([started, step0, succeeded])
      .when({ kind: 'Fail', runId: 'r1', requestId: 'r1', step: 0, message: 'x', now })
      .thenNothingHappens();
    spec
      .given([started, step0])
      .when({ kind: 'Succeed', runId: 'r1', requestId: 'r1', now })
      .then([succeeded]);
  });
});
