import { uuidV5 } from '../../contracts/ids';
import { CommandHandler } from '../../command-api/kit/handler';
import type { WebhookRequestReceivedData } from '../../contracts/events/integrator';
import { schemaVersionOf, upcast } from '../../contracts/events/registry';
import { createLogger } from '../../infra/logging';
import type { ConsumedMessage, ConsumeOptions, Stream } from '../../infra/stream/port';
import { Integrator } from '../../integrator/consumer';
import type { ReceivedRequest, ScenarioRunner } from '../../integrator/runner';
import { receivedRequest } from '../support/hook-requests';
import { personalDataStore } from '../support/personal-data';

/** The integrator reads relayed events as every stream reader does: lifted to their schema's current version. */
const TENANT = 'acme';

/** A request as version 1 of its event held it: no `sequential`. */
const { sequential: _absentInV1, ...requestV1 } = receivedRequest('r1');

function relayed(id: string, schemaVersion: number, data: unknown, key = id): ConsumedMessage {
  return {
    topic: 'events',
    partition: 0,
    offset: '0',
    key,
    value: JSON.stringify({
      id,
      streamId: `hookRequest-${TENANT}.${id}`,
      revision: '0',
      position: '1',
      recordedAt: '2026-11-27T10:00:00.000Z',
      type: 'WebhookRequestReceived',
      schemaVersion,
      data,
      metadata: { tenant: TENANT },
    }),
    headers: { type: 'WebhookRequestReceived', tenant: TENANT, position: '1' },
  };
}

/** An integrator on a stream whose messages the test hands it; the runs and queue drains it asks for. */
async function integratorWith(runner: Pick<ScenarioRunner, 'run'>, tenantInHand = 8) {
  let handle: ConsumeOptions['handle'] | undefined;
  const stream: Stream = {
    publish: () => Promise.resolve(),
    consume: (options) => {
      handle = options.handle;
      return Promise.resolve({ stop: () => Promise.resolve() });
    },
    close: () => Promise.resolve(),
  };
  const drained: number[] = [];
  const events = personalDataStore();
  const integrator = new Integrator({
    stream,
    runner: runner as ScenarioRunner,
    queues: {
      drain: (_tenant, scenarioId) => {
        drained.push(scenarioId);
        return Promise.resolve(0);
      },
    },
    logger: createLogger('silent'),
    topic: 'events',
    group: 'integrator',
    concurrency: 16,
    tenantInHand,
    events,
    backlog: {
      handler: new CommandHandler(events),
      readModels: { findInAllTenants: () => Promise.resolve({ items: [] }) },
      logger: createLogger('silent'),
      now: () => new Date(),
      holder: 'test',
      leaseMs: 30_000,
      window: 2,
    },
  });
  await integrator.start();
  return { integrator, handle: handle!, drained, events };
}

test('WebhookRequestReceived is at version 2; a v1 request without `sequential` was not sequential', () => {
  expect(schemaVersionOf('WebhookRequestReceived')).toBe(2);
  expect(upcast({ type: 'WebhookRequestReceived', schemaVersion: 1, data: requestV1 })).toEqual({
    type: 'WebhookRequestReceived',
    data: { ...requestV1, sequential: false },
  });
});

test('a relayed v1 request runs as its current version says; a sequential one drains its queue first', async () => {
  const runs: ReceivedRequest[] = [];
  const { integrator, handle, drained } = await integratorWith({
    run: (request) => {
      runs.push(request);
      return Promise.resolve({ status: 'succeeded' });
    },
  });
  await handle(relayed('r1', 1, requestV1));
  expect(runs.map((run) => run.data)).toEqual([{ ...requestV1, sequential: false }]);
  expect(drained).toEqual([]);

  const sequential: WebhookRequestReceivedData = { ...requestV1, requestId: 'r2', sequential: true };
  await handle(relayed('r2', 2, sequential));
  expect(runs.at(-1)).toMatchObject({ tenant: TENANT, runId: 'r2', data: sequential });
  expect(drained).toEqual([9]);
  await integrator.stop();
});

test("a system's request beyond its runs in hand is parked in its backlog, and runs from there", async () => {
  const releases: Array<() => void> = [];
  const ran: string[] = [];
  const { integrator, handle, events } = await integratorWith(
    {
      run: (request) =>
        new Promise((resolve) =>
          releases.push(() => {
            ran.push(request.runId);
            resolve({ status: 'succeeded' });
          }),
        ),
    },
    2,
  );
  // Request ids are UUIDs: a parked request is sealed under its own key, named by it.
  const handled = ['r1', 'r2', 'r3'].map((runId) =>
    handle(relayed(runId, 2, { ...requestV1, requestId: uuidV5(runId), sequential: false })),
  );
  // r1 and r2 are in hand (running); r3 is parked, and its message is done with at once.
  await handled[2];
  expect(integrator.backlog.parked).toBe(1);
  expect(integrator.backlog.hasBacklog(TENANT)).toBe(true);
  let parked = 0;
  for await (const event of events.readStream('runBacklog-acme.requests')) {
    expect(event.data).toMatchObject({ runId: 'r3', orderKey: 'r3' });
    parked += 1;
  }
  expect(parked).toBe(1);
  while (releases.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
  for (const release of releases) release();
  await Promise.all(handled);
  while (integrator.backlog.draining > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(ran.sort()).toEqual(['r1', 'r2', 'r3']);
  expect(integrator.backlog.hasBacklog(TENANT)).toBe(false);
  await integrator.stop();
});

test('a request relayed without its data (larger than the stream takes) is read from the store and runs', async () => {
  const runs: ReceivedRequest[] = [];
  const { integrator, handle, events } = await integratorWith({
    run: (request) => {
      runs.push(request);
      return Promise.resolve({ status: 'succeeded' });
    },
  });
  const data: WebhookRequestReceivedData = {
    ...requestV1,
    requestId: 'big',
    sequential: false,
    bundle: { text: 'x'.repeat(2_000_000) },
  };
  await events.append(`hookRequest-${TENANT}.big`, [
    {
      id: 'big',
      type: 'WebhookRequestReceived',
      schemaVersion: 2,
      data,
      metadata: {
        tenant: TENANT,
        actor: { userId: null },
        correlationId: 'big',
        causationId: 'big',
        commandId: 'big',
        occurredAt: '2026-11-27T10:00:00.000Z',
      },
    },
  ]);
  const omitted = relayed('big', 2, null);
  const value = { ...(JSON.parse(omitted.value) as object), dataOmitted: true };
  await handle({ ...omitted, value: JSON.stringify(value) });
  expect(runs).toHaveLength(1);
  expect(runs[0]!.data).toEqual(data);
  await integrator.stop();
});
