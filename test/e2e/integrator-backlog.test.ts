import { startHeldServer, type HeldServer } from '../support/held-server';
import { callHost } from '../support/host-call';
import { json, startPlatform, type Entity, type Page, type TestPlatform } from '../support/platform';
import { polling } from '../support/eventually';

jest.setTimeout(120_000);

/**
 * One system's many slow runs do not hold another system's requests: beyond twice its share of the runner, a
 * system's requests wait in its run backlog (in the event store), not in the stream's window in front of the
 * others. Here the integrator takes 16 messages at once and a system may run 2 of them (so it holds 4).
 */
const SLOW_REQUESTS = 40;
let platform: TestPlatform;
let acmeToken: string;
let slow: HeldServer;

beforeAll(async () => {
  slow = await startHeldServer();
  platform = await startPlatform({
    OUTBOUND_ALLOW_PRIVATE: 'true',
    OUTBOUND_TIMEOUT_MS: '60000',
    INTEGRATOR_CONCURRENCY: '4',
    INTEGRATOR_TENANT_CONCURRENCY: '2',
  });
  const provisioned = await platform.call('POST', '/system', {
    body: { system: 'acme', adminEmail: 'owner@acme.example' },
  });
  expect(provisioned.status).toBe(201);
  acmeToken = String((await json(provisioned)).token);
});
afterAll(async () => {
  await slow.close();
  await platform.stop();
});

const acme = (method: string, path: string, body?: unknown) =>
  callHost(platform.url, 'acme.localhost', acmeToken, method, path, body);

const eventually = polling(60_000, 200);

async function runsOf(scenarioId: number): Promise<Array<Record<string, unknown>>> {
  const page = await json<Page<Record<string, unknown>>>(
    await platform.call('GET', `/scenario/${scenarioId}/run?limit=100`),
  );
  return page.items;
}

test("another system's request runs and answers while one system has a large backlog of slow runs; then every slow run runs once", async () => {
  const hook = await json<Entity & { key: string }>(
    await platform.call('POST', '/webhook', { body: { name: 'Slow' } }),
  );
  const scenario = await platform.call('POST', '/scenario', {
    body: { name: 'Slow', webhookId: hook.id, steps: [{ kind: 'httpRequest', url: slow.url }] },
  });
  expect(scenario.status).toBe(201);
  const slowScenarioId = (await json<Entity>(scenario)).id;

  const acmeHook = JSON.parse((await acme('POST', '/webhook', { name: 'Quick' })).text) as Entity & {
    key: string;
  };
  const quick = await acme('POST', '/scenario', {
    name: 'Quick',
    webhookId: acmeHook.id,
    steps: [{ kind: 'webhookResponse', status: 200, body: { expr: '$number(n) * 2' } }],
  });
  expect(quick.status).toBe(201);

  // 40 requests at about 25 a second (the hook's limit is 30): each run waits on the slow server.
  for (let n = 0; n < SLOW_REQUESTS; n++) {
    const accepted = await fetch(`${platform.url}/hook/${hook.key}?n=${n}`, { method: 'POST' });
    expect(accepted.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
  await eventually(
    async () => slow.held,
    (count) => count === 2,
  );

  // The other system's request is run, and answered with its run's response, while all 40 wait.
  const asked = Date.now();
  const answer = await fetch(`${platform.url}/hook/${acmeHook.key}?n=21`);
  expect({ status: answer.status, body: await answer.text() }).toEqual({ status: 200, body: '42' });
  expect(Date.now() - asked).toBeLessThan(20_000);
  expect(slow.held).toBe(2);
  expect((await runsOf(slowScenarioId)).filter((run) => run.status !== 'running')).toEqual([]);

  slow.release({ body: '{"slow":true}' });
  const runs = await eventually(
    () => runsOf(slowScenarioId),
    (items) => items.length === SLOW_REQUESTS && items.every((run) => run.status === 'succeeded'),
    90_000,
  );
  expect(runs.map((run) => run.status)).toEqual(Array(SLOW_REQUESTS).fill('succeeded'));
  expect(new Set(runs.map((run) => run.requestId)).size).toBe(SLOW_REQUESTS);
  expect(slow.calls).toBe(SLOW_REQUESTS);
});
