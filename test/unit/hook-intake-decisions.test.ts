import {
  ACCEPTED_ANSWER,
  answerOf,
  filesByField,
  filesValue,
  keptInline,
  mismatchRefusal,
  NO_SUCH_HOOK,
  openingRefusal,
  rateRefusal,
  receivingDecision,
  type OpeningFacts,
} from '../../command-api/hooks/domain/intake';
import { webhookDecider, type WebhookState } from '../../command-api/hooks/domain/webhook';
import { scenarioDecider, type ScenarioState } from '../../command-api/scenarios/domain/scenario';
import { fold } from '../../command-api/kit/decider';
import type { ScenarioEvent, WebhookEvent } from '../../contracts/events/integrator';
import {
  DEFAULT_WEBHOOK_SETTINGS,
  HOOK_MAX_BODY_BYTES,
  HOOK_SCENARIO_FAILED,
  MAIL_MAX_BYTES,
  type HookKind,
  type ScenarioSettings,
} from '../../contracts/integrator';
import { parseIpAllowlist } from '../../contracts/ip-allowlist';
import type { DataStructure } from '../../languages/data-structure';

/** The receiver's decisions, given a hook (and its scenario) as their events left them and a request's facts. */

const CREATED_AT = '2026-11-01T00:00:00.000Z';
const hours = (n: number) => new Date(Date.parse(CREATED_AT) + n * 3_600_000);

function hookAfter(events: readonly WebhookEvent[]): WebhookState {
  return fold(webhookDecider, webhookDecider.initialState, events);
}

function created(
  kind: HookKind = 'web',
  settings: Partial<typeof DEFAULT_WEBHOOK_SETTINGS> = {},
): WebhookEvent {
  return {
    type: 'WebhookCreated',
    data: {
      webhookId: 4,
      key: 'A'.repeat(32),
      udid: '0b7c1f5e-1d2a-4c3b-9e8f-1234567890ab',
      kind,
      name: 'Orders',
      ...DEFAULT_WEBHOOK_SETTINGS,
      ...settings,
      createdAt: CREATED_AT,
    },
  };
}
const bound: WebhookEvent = { type: 'WebhookBound', data: { webhookId: 4, scenarioId: 9 } };

function scenarioAfter(events: readonly ScenarioEvent[]): ScenarioState {
  return fold(scenarioDecider, scenarioDecider.initialState, events);
}

const instant: ScenarioSettings = {
  name: 'Orders',
  webhookId: 4,
  schedule: { kind: 'instant' },
  sequential: false,
  autoCommit: false,
  steps: [{ kind: 'setVariable', name: 'total', value: { expr: 'amount * 2' } }],
};
function scenarioCreated(settings: Partial<ScenarioSettings> = {}, active = true): ScenarioEvent {
  return { type: 'ScenarioCreated', data: { scenarioId: 9, ownerId: 1, active, ...instant, ...settings } };
}
const answering: Partial<ScenarioSettings> = {
  steps: [{ kind: 'webhookResponse', status: 201, body: 'made' }],
};

describe('opening a hook: the checks before its body is read', () => {
  function opening(hook: WebhookState, facts: Partial<OpeningFacts> = {}): ReturnType<typeof openingRefusal> {
    return openingRefusal({
      hook,
      allowlist: parseIpAllowlist(hook.settings.ipRestrictions),
      kind: 'web',
      now: hours(1),
      caller: '203.0.113.7',
      declaredBytes: 100,
      ...facts,
    });
  }

  test('given an enabled hook bound to a scenario, when a request within its limits comes, then it goes on', () => {
    expect(opening(hookAfter([created(), bound]))).toBeNull();
  });

  test('given a hook of the other kind, or a deleted one, when a request comes, then no hook has this id', () => {
    expect(opening(hookAfter([created('mail'), bound]))).toEqual(NO_SUCH_HOOK);
    const deleted: WebhookEvent = { type: 'WebhookDeleted', data: { webhookId: 4 } };
    expect(opening(hookAfter([created(), deleted]))).toEqual(NO_SUCH_HOOK);
    expect(NO_SUCH_HOOK).toEqual({ status: 404, message: 'No hook has this id.', headers: {} });
  });

  test('given a hook unbound for more than 120 hours, when a request comes, then it is gone (410)', () => {
    expect(opening(hookAfter([created()]), { now: hours(121) })).toMatchObject({ status: 410 });
    expect(opening(hookAfter([created()]), { now: hours(119) })).toBeNull();
  });

  test('given a disabled hook, when a request comes, then it is forbidden', () => {
    const disabled: WebhookEvent = { type: 'WebhookDisabled', data: { webhookId: 4 } };
    expect(opening(hookAfter([created(), bound, disabled]))).toEqual({
      status: 403,
      message: 'This hook is disabled.',
      headers: {},
    });
  });

  test('given IP restrictions, when an address outside them calls, then it is refused; the platform never is', () => {
    const restricted = hookAfter([created('web', { ipRestrictions: '198.51.100.0/24' }), bound]);
    expect(opening(restricted, { caller: '203.0.113.7' })).toMatchObject({
      status: 403,
      message: 'This address may not call this hook.',
    });
    expect(opening(restricted, { caller: '198.51.100.20' })).toBeNull();
    expect(opening(restricted, { caller: null })).toBeNull();
  });

  test('given a declared size over the kind’s limit, when it comes, then it is too large (413)', () => {
    const web = hookAfter([created(), bound]);
    expect(opening(web, { declaredBytes: HOOK_MAX_BODY_BYTES })).toBeNull();
    expect(opening(web, { declaredBytes: HOOK_MAX_BODY_BYTES + 1 })).toEqual({
      status: 413,
      message: `The body is over the limit of ${HOOK_MAX_BODY_BYTES} bytes.`,
      headers: {},
    });
    const mail = hookAfter([created('mail'), bound]);
    expect(opening(mail, { kind: 'mail', declaredBytes: HOOK_MAX_BODY_BYTES + 1 })).toBeNull();
    expect(opening(mail, { kind: 'mail', declaredBytes: MAIL_MAX_BYTES + 1 })).toMatchObject({ status: 413 });
  });
});

describe('the rate: 30 requests a second per hook', () => {
  const now = 1_000_000;
  const times = (count: number) => Array.from({ length: count }, (_, index) => now - 900 + index * 10);

  test('given 30 counted requests in the last second, this one among them, then it goes on', () => {
    expect(rateRefusal(times(30), now)).toBeNull();
  });

  test('given a 31st, then it is refused with when to try again', () => {
    expect(rateRefusal(times(31), now)).toEqual({
      status: 429,
      message: 'Too many requests: a hook takes 30 requests per second.',
      headers: { 'Retry-After': '1' },
    });
  });
});

describe('files: where a request’s files go in its bundle', () => {
  const withFiles: DataStructure = {
    fields: [
      { name: 'invoice', type: 'collection', required: false },
      { name: 'note', type: 'text', required: false },
    ],
  };
  const file = (field: string, name: string) => ({ field, name });

  test('given a web hook whose structure has the field, then its files are grouped by field', () => {
    const placement = filesByField([file('invoice', 'a.pdf'), file('invoice', 'b.pdf')], [withFiles], 'web');
    expect(placement).toEqual({
      byField: new Map([['invoice', [file('invoice', 'a.pdf'), file('invoice', 'b.pdf')]]]),
    });
  });

  test('given a web hook, when a file part names no collection or array field, then the request is refused', () => {
    expect(filesByField([file('note', 'a.pdf')], [withFiles], 'web')).toEqual({
      refusal: {
        status: 400,
        message:
          'File part "note" is not in the hook\'s data structure: add a collection field "note" with name (text), mime (text) and data (buffer).',
        headers: {},
      },
    });
    expect(filesByField([file('invoice', 'a.pdf')], [], 'web')).toHaveProperty('refusal');
  });

  test('given a mailhook, then its attachments go in whatever its structure says', () => {
    expect(filesByField([file('attachments', 'a.pdf')], [], 'mail')).toEqual({
      byField: new Map([['attachments', [file('attachments', 'a.pdf')]]]),
    });
  });

  test('a web hook’s one file is a value, several an array; an email’s attachments are always an array', () => {
    expect(filesValue('web', ['a'])).toBe('a');
    expect(filesValue('web', ['a', 'b'])).toEqual(['a', 'b']);
    expect(filesValue('mail', ['a'])).toEqual(['a']);
  });

  test('data that does not match the structure is refused with every reason', () => {
    expect(
      mismatchRefusal([
        { path: 'amount', message: 'must be a number' },
        { path: 'note', message: 'is required' },
      ]),
    ).toEqual({
      status: 400,
      message:
        "The data does not match the hook's data structure: amount: must be a number; note: is required",
      headers: {},
    });
  });
});

describe('receiving an accepted request: run now or queue, wait or not', () => {
  test('given an active instant scenario, then the request runs now and nobody waits without a response step', () => {
    const decision = receivingDecision({
      hook: hookAfter([created(), bound]),
      scenario: scenarioAfter([scenarioCreated()]),
      hearsResponses: true,
    });
    expect(decision).toEqual({
      delivery: { kind: 'run', sequential: false, awaitsResponse: false },
      scenarioId: 9,
      determinesStructure: true,
    });
  });

  test('given a sequential scenario, then its requests run in order', () => {
    const decision = receivingDecision({
      hook: hookAfter([created(), bound]),
      scenario: scenarioAfter([scenarioCreated({ sequential: true })]),
      hearsResponses: true,
    });
    expect(decision.delivery).toEqual({ kind: 'run', sequential: true, awaitsResponse: false });
  });

  test('given a scenario that answers, then a web caller waits where this process hears responses', () => {
    const scenario = scenarioAfter([scenarioCreated(answering)]);
    const web = hookAfter([created(), bound]);
    expect(receivingDecision({ hook: web, scenario, hearsResponses: true }).delivery).toEqual({
      kind: 'run',
      sequential: false,
      awaitsResponse: true,
    });
    expect(receivingDecision({ hook: web, scenario, hearsResponses: false }).delivery).toEqual({
      kind: 'run',
      sequential: false,
      awaitsResponse: false,
    });
    const mail = hookAfter([created('mail'), bound]);
    expect(receivingDecision({ hook: mail, scenario, hearsResponses: true }).delivery).toEqual({
      kind: 'run',
      sequential: false,
      awaitsResponse: false,
    });
  });

  test('given an inactive or scheduled scenario, or none, then the request is queued up to the hook’s capacity', () => {
    const hook = hookAfter([created('web', { queueCapacity: 7 }), bound]);
    const queued = { kind: 'queue', capacity: 7 };
    const inactive = scenarioAfter([scenarioCreated(answering, false)]);
    const scheduled = scenarioAfter([scenarioCreated({ schedule: { kind: 'interval', minutes: 15 } })]);
    expect(receivingDecision({ hook, scenario: inactive, hearsResponses: true })).toMatchObject({
      delivery: queued,
      scenarioId: 9,
    });
    expect(receivingDecision({ hook, scenario: scheduled, hearsResponses: true }).delivery).toEqual(queued);
    const unbound = hookAfter([created('web', { queueCapacity: 7 })]);
    expect(receivingDecision({ hook: unbound, scenario: null, hearsResponses: true })).toMatchObject({
      delivery: queued,
      scenarioId: null,
    });
  });

  test('given the hook’s scenario was deleted, then the request is queued and names no scenario', () => {
    const deleted = scenarioAfter([scenarioCreated(), { type: 'ScenarioDeleted', data: { scenarioId: 9 } }]);
    expect(
      receivingDecision({ hook: hookAfter([created(), bound]), scenario: deleted, hearsResponses: true }),
    ).toMatchObject({ delivery: { kind: 'queue' }, scenarioId: null });
  });

  test('the request’s shape is kept while the hook has none, and after a Re-determine', () => {
    const scenario = scenarioAfter([scenarioCreated()]);
    const structure: DataStructure = { fields: [{ name: 'amount', type: 'number', required: false }] };
    const determined: WebhookEvent = {
      type: 'WebhookStructureDetermined',
      data: { webhookId: 4, structure, requestId: 'r1' },
    };
    const redetermining: WebhookEvent = { type: 'WebhookStructureRedetermining', data: { webhookId: 4 } };
    const decide = (hook: WebhookState) =>
      receivingDecision({ hook, scenario, hearsResponses: true }).determinesStructure;
    expect(decide(hookAfter([created(), bound]))).toBe(true);
    expect(decide(hookAfter([created(), bound, determined]))).toBe(false);
    expect(decide(hookAfter([created(), bound, determined, redetermining]))).toBe(true);
    expect(decide(hookAfter([created('web', { dataStructure: structure }), bound]))).toBe(false);
  });
});

describe('payloads and answers', () => {
  test('a payload of up to 256 KiB stays in its event; a bigger one goes to the blob store', () => {
    expect(keptInline(256 * 1024)).toBe(true);
    expect(keptInline(256 * 1024 + 1)).toBe(false);
  });

  test('a waited-for run answers with its response, a failure with 500, anything else Accepted', () => {
    const response = { status: 201, headers: [{ name: 'X-Made', value: '1' }], body: 'made' };
    expect(answerOf({ kind: 'response', response })).toBe(response);
    expect(answerOf({ kind: 'failed' })).toEqual({ status: 500, headers: [], body: HOOK_SCENARIO_FAILED });
    expect(answerOf({ kind: 'finished' })).toBe(ACCEPTED_ANSWER);
    expect(answerOf({ kind: 'timeout' })).toBe(ACCEPTED_ANSWER);
    expect(ACCEPTED_ANSWER).toEqual({ status: 200, headers: [], body: 'Accepted' });
  });
});
