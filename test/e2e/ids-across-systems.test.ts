import { request } from 'node:http';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';
import { callHost } from '../support/host-call';
import { json, startPlatform, type TestPlatform } from '../support/platform';
import { polling } from '../support/eventually';

/**
 * Event ids are unique store-wide, but the ids commands derive theirs from are often local to a system: an AI
 * job's number, a record id, a scenario id and slot, an Idempotency-Key. Two systems that go through the same
 * local ids, family by family, both get their work done: their events never share an id.
 */
jest.setTimeout(60_000);

let platform: TestPlatform;
let fake: FakeOpenAi;
let acmeToken: string;

type Answer = { status: number; body: Record<string, unknown> };

/** One API call as a system: `test` through the platform's own helper, `acme` through its Host. */
async function as(
  system: 'test' | 'acme',
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  if (system === 'test') {
    const response = await platform.call(method, path, { ...(body !== undefined && { body }), headers });
    return { status: response.status, body: await json<Record<string, unknown>>(response) };
  }
  if (Object.keys(headers).length > 0) return withHeaders(method, path, body, headers);
  const answer = await callHost(platform.url, 'acme.localhost', acmeToken, method, path, body);
  return { status: answer.status, body: JSON.parse(answer.text) as Record<string, unknown> };
}

/** A call as `acme` with headers of its own (fetch drops the Host header, so node:http). */
function withHeaders(
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: new URL(platform.url).port,
        method,
        path: `/api${path}`,
        headers: {
          Host: 'acme.localhost',
          Authorization: `Bearer ${acmeToken}`,
          ...(payload !== undefined && { 'Content-Type': 'application/json' }),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: JSON.parse(text) as Record<string, unknown> }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const SYSTEMS = ['test', 'acme'] as const;

/** The same call in both systems: their answers, which must carry the same local id. */
async function inBoth(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const system of SYSTEMS) answers.push(await as(system, method, path, body, headers));
  for (const answer of answers) expect(answer.status).toBeLessThan(300);
  return answers;
}

const eventually = polling(15_000);

let moduleId: number;
let fieldKey: string;
let fieldId: number;
const recordIds: number[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAi();
  fake.chatReply = () => JSON.stringify({ value: 'summarised' });
  platform = await startPlatform({ AI_URL: fake.baseUrl, AI_API_KEY: 'k', AI_EXECUTE_WAIT_MS: '10000' });
  const provisioned = await platform.call('POST', '/system', {
    body: { system: 'acme', adminEmail: 'owner@acme.example' },
  });
  expect(provisioned.status).toBe(201);
  acmeToken = String((await json<{ token: string }>(provisioned)).token);

  // The same local ids in both systems: the test proves nothing otherwise.
  const spaces = await inBoth('POST', '/space', { name: 'Sales' });
  const modules = await inBoth('POST', '/module', { spaceId: spaces[0]!.body.id, name: 'Leads' });
  const fields = await inBoth('POST', '/field', {
    moduleId: modules[0]!.body.id,
    name: 'Summary',
    type: 'text',
  });
  for (const answers of [spaces, modules, fields]) expect(answers[0]!.body.id).toBe(answers[1]!.body.id);
  moduleId = Number(modules[0]!.body.id);
  fieldId = Number(fields[0]!.body.id);
  fieldKey = String(fields[0]!.body.key);
  for (let n = 0; n < 3; n++) {
    const records = await inBoth('POST', '/record', { moduleId, name: `Lead ${n}` });
    expect(records[0]!.body.id).toBe(records[1]!.body.id);
    recordIds.push(Number(records[0]!.body.id));
  }
  await inBoth('POST', '/ai/balance/top-up', { tokens: 100_000 });
});

afterAll(async () => {
  await platform.stop();
  await fake.close();
});

test('AI jobs and kept answers: job 1 of each system finishes, each record written once in its own system', async () => {
  const transforms = await inBoth('POST', '/ai/column-data-transform', {
    name: 'Summarise',
    moduleId,
    fieldId,
    prompt: 'summarise {{name}}',
  });
  expect(transforms[0]!.body.id).toBe(transforms[1]!.body.id);
  // The same Idempotency-Key in both: each system's own job, the same job number.
  const executed = await inBoth(
    'POST',
    `/column-data-transform/${transforms[0]!.body.id}/execute`,
    { ids: recordIds },
    { 'Idempotency-Key': 'execute-1' },
  );
  expect(executed[0]!.body.jobId).toBe(executed[1]!.body.jobId);
  for (const system of SYSTEMS) {
    const job = await eventually(
      async () => (await as(system, 'GET', `/ai/job/${executed[0]!.body.jobId}`)).body,
      (body) => body.status === 'finished',
    );
    expect([system, job]).toEqual([system, expect.objectContaining({ status: 'finished', failed: 0 })]);
    for (const id of recordIds)
      expect((await as(system, 'GET', `/record/${id}`)).body.fields).toMatchObject({
        [fieldKey]: 'summarised',
      });
  }
  // Repeats in each system are recognised as that system's own job.
  const repeated = await inBoth(
    'POST',
    `/column-data-transform/${transforms[0]!.body.id}/execute`,
    { ids: recordIds },
    { 'Idempotency-Key': 'execute-1' },
  );
  expect(repeated.map((answer) => answer.body.jobId)).toEqual(executed.map((answer) => answer.body.jobId));
});

test('Idempotency-Keys and id blocks: the same key in two systems makes one entity in each, repeats none', async () => {
  const first = await inBoth('POST', '/space', { name: 'Keyed' }, { 'Idempotency-Key': 'same-key' });
  expect(first[0]!.body.id).toBe(first[1]!.body.id);
  const again = await inBoth('POST', '/space', { name: 'Keyed' }, { 'Idempotency-Key': 'same-key' });
  expect(again.map((answer) => answer.body.id)).toEqual(first.map((answer) => answer.body.id));
  for (const system of SYSTEMS) {
    const spaces = (await as(system, 'GET', `/space?filter=${encodeURIComponent('name=Keyed')}`)).body;
    expect([system, (spaces.items as unknown[]).length]).toEqual([system, 1]);
  }
});

test('hook requests, instant and scheduled scenario runs: each system runs its own', async () => {
  const hooks = await inBoth('POST', '/webhook', { name: 'Orders' });
  const scheduledHooks = await inBoth('POST', '/webhook', { name: 'Queued' });
  expect(hooks[0]!.body.id).toBe(hooks[1]!.body.id);
  const instant = await inBoth('POST', '/scenario', {
    name: 'Answer',
    webhookId: hooks[0]!.body.id,
    steps: [
      { kind: 'createRecord', moduleId, name: { expr: '"hooked " & n' } },
      { kind: 'webhookResponse', status: 201, body: { expr: '{"n": n}' } },
    ],
  });
  const scheduled = await inBoth('POST', '/scenario', {
    name: 'Hourly',
    webhookId: scheduledHooks[0]!.body.id,
    schedule: { kind: 'interval', minutes: 60 },
    steps: [{ kind: 'createRecord', moduleId, name: { expr: '"scheduled " & n' } }],
  });
  const failingHooks = await inBoth('POST', '/webhook', { name: 'Failing' });
  const failingScenarios = await inBoth('POST', '/scenario', {
    name: 'Fails',
    webhookId: failingHooks[0]!.body.id,
    schedule: { kind: 'interval', minutes: 60 },
    steps: [{ kind: 'createRecord', moduleId, name: { expr: '$error("boom")' } }],
  });
  expect(instant[0]!.body.id).toBe(instant[1]!.body.id);
  expect(scheduled[0]!.body.id).toBe(scheduled[1]!.body.id);

  for (const [index, system] of SYSTEMS.entries()) {
    const answer = await fetch(`${platform.url}/hook/${String(hooks[index]!.body.key)}?n=${system}`);
    expect([system, answer.status]).toEqual([system, 201]);
    for (const queue of [scheduledHooks, failingHooks]) {
      const queued = await fetch(`${platform.url}/hook/${String(queue[index]!.body.key)}?n=${system}`);
      expect([system, queued.status]).toEqual([system, 200]);
    }
  }
  const at = new Date();
  const scheduler = platform.running.services.integratorScheduler!;
  for (const [index, system] of SYSTEMS.entries()) {
    const runs = await eventually(
      async () => {
        await scheduler.runDue(at);
        return (await as(system, 'GET', `/scenario/${scheduled[index]!.body.id}/run`)).body;
      },
      (page) => (page.items as Array<{ status: string }>).some((run) => run.status === 'succeeded'),
    );
    expect([system, (runs.items as Array<{ status: string }>).map((run) => run.status)]).toEqual([
      system,
      ['succeeded'],
    ]);
    // The slot's end (`scheduled:<scenario>:<slot>:end`, the same in both systems) is each system's own: it
    // counts the failing scenario's error in each.
    const failing = await eventually(
      async () => {
        await scheduler.runDue(at);
        return (await as(system, 'GET', `/scenario/${failingScenarios[index]!.body.id}`)).body;
      },
      (scenario) => scenario.consecutiveErrors === 1,
    );
    expect([system, failing.consecutiveErrors]).toEqual([system, 1]);
    for (const name of [`hooked ${system}`, `scheduled ${system}`]) {
      const records = await eventually(
        async () => (await as(system, 'GET', `/record?filter=${encodeURIComponent(`name=${name}`)}`)).body,
        (page) => (page.items as unknown[]).length > 0,
      );
      expect([system, name, (records.items as unknown[]).length]).toEqual([system, name, 1]);
    }
  }
});
