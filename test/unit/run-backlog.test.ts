import fc from 'fast-check';
import { runBacklogStreams } from '../../command-api/scenarios/domain/run-backlog';
import { CommandHandler } from '../../command-api/kit/handler';
import type { RunBacklogHeldData, RunParkedData } from '../../contracts/events/integrator';
import { READ_MODELS } from '../../contracts/read-models';
import type { EventStore } from '../../infra/event-store/port';
import { createLogger } from '../../infra/logging';
import type { ReadModels } from '../../infra/read-store/read-models';
import { RunBacklog, type RunBacklogDeps } from '../../integrator/run-backlog';
import { runBacklogsProjection } from '../../projections/read-models/integrator';
import { InMemoryReadModels } from '../support/given-when-then';
import { receivedRequest } from '../support/hook-requests';
import { MemoryEventStore } from '../support/memory-event-store';

jest.setTimeout(60_000);

const TENANT = 'acme';
const logger = createLogger('silent');

/** The run backlogs read model as the projection makes it from everything in the store. */
function readModelsOf(store: EventStore): Pick<ReadModels, 'findInAllTenants'> {
  return {
    async findInAllTenants(base, query) {
      const models = new InMemoryReadModels();
      for await (const event of store.readAll())
        models.apply(runBacklogsProjection.project(event, (name) => name));
      const offset = query.offset ?? 0;
      return { items: models.documents(base).slice(offset, offset + (query.limit ?? 100)) };
    },
  };
}

const parkedAs = (runId: string, orderKey: string): RunParkedData => ({
  runId,
  orderKey,
  request: receivedRequest(runId, { webhookId: 1, scenarioId: 7 }),
});

function backlogOf(
  store: EventStore,
  run: RunBacklogDeps['run'],
  overrides: Partial<Omit<RunBacklogDeps, 'run'>> = {},
): RunBacklog {
  return new RunBacklog({
    events: store,
    handler: new CommandHandler(store),
    readModels: readModelsOf(store),
    logger,
    now: () => new Date(),
    holder: 'one',
    leaseMs: 30_000,
    window: 4,
    retry: { initialMs: 5, maxMs: 20 },
    run,
    ...overrides,
  });
}

async function eventually(done: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('not within the time given');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function lastHold(store: EventStore): Promise<RunBacklogHeldData | undefined> {
  for await (const event of store.readStream(runBacklogStreams(TENANT).drain, {
    direction: 'backwards',
    maxCount: 1,
  }))
    return event.data as RunBacklogHeldData;
  return undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('whatever is parked runs once, in order per key, a window at a time; then the backlog is let go, empty', async () => {
  const item = fc.record({ key: fc.constantFrom('a', 'b', 'c', 'own'), ms: fc.integer({ min: 0, max: 4 }) });
  await fc.assert(
    fc.asyncProperty(
      fc.array(item, { minLength: 1, maxLength: 30 }),
      fc.integer({ min: 1, max: 5 }),
      async (items, window) => {
        const store = new MemoryEventStore();
        const started: string[] = [];
        const ran: string[] = [];
        let running = 0;
        let mostRunning = 0;
        const runningKeys = new Set<string>();
        let sameKeyAtOnce = false;
        const delays = new Map(items.map((entry, index) => [`r${index}`, entry.ms]));
        const backlog = backlogOf(
          store,
          async (_tenant, parked) => {
            started.push(parked.runId);
            if (runningKeys.has(parked.orderKey)) sameKeyAtOnce = true;
            runningKeys.add(parked.orderKey);
            mostRunning = Math.max(mostRunning, ++running);
            await sleep(delays.get(parked.runId)!);
            running -= 1;
            runningKeys.delete(parked.orderKey);
            ran.push(parked.runId);
          },
          { window },
        );
        const keys = items.map((entry, index) => (entry.key === 'own' ? `own${index}` : entry.key));
        for (const [index, key] of keys.entries()) await backlog.park(TENANT, parkedAs(`r${index}`, key));
        expect(backlog.hasBacklog(TENANT)).toBe(true);
        await eventually(() => ran.length === items.length && backlog.draining === 0);

        expect([...ran].sort()).toEqual(items.map((_, index) => `r${index}`).sort());
        expect(started).toHaveLength(items.length);
        for (const key of new Set(keys)) {
          const ofKey = keys.flatMap((candidate, index) => (candidate === key ? [`r${index}`] : []));
          expect(started.filter((runId) => ofKey.includes(runId))).toEqual(ofKey);
        }
        expect(sameKeyAtOnce).toBe(false);
        expect(mostRunning).toBeLessThanOrEqual(window);
        expect(backlog.hasBacklog(TENANT)).toBe(false);
        const hold = await lastHold(store);
        expect(hold).toMatchObject({ holder: 'one', next: items.length });
        expect(Date.parse(hold!.until)).toBeLessThanOrEqual(Date.now());
        expect((await readModelsOf(store).findInAllTenants(READ_MODELS.runBacklogs, {})).items).toEqual([
          expect.objectContaining({ tenant: TENANT, parked: items.length, next: items.length }),
        ]);
      },
    ),
    { numRuns: 40 },
  );
});

test('a request parked again (a redelivery) is kept once and runs once', async () => {
  const store = new MemoryEventStore();
  const ran: string[] = [];
  const backlog = backlogOf(store, async (_tenant, parked) => void ran.push(parked.runId));
  await backlog.park(TENANT, parkedAs('r1', 'k'));
  await backlog.park(TENANT, parkedAs('r1', 'k'));
  await eventually(() => backlog.draining === 0 && !backlog.hasBacklog(TENANT));
  expect(ran).toEqual(['r1']);
  let kept = 0;
  for await (const _ of store.readStream(runBacklogStreams(TENANT).requests)) kept += 1;
  expect(kept).toBe(1);
});

test('a run that fails is tried again after a back-off, while the items of other keys go on', async () => {
  const store = new MemoryEventStore();
  const ran: string[] = [];
  let failures = 0;
  const backlog = backlogOf(store, async (_tenant, parked) => {
    if (parked.runId === 'flaky' && failures < 3) {
      failures += 1;
      throw new Error('the store is away');
    }
    ran.push(parked.runId);
  });
  await backlog.park(TENANT, parkedAs('flaky', 'k'));
  await backlog.park(TENANT, parkedAs('after-flaky', 'k'));
  await backlog.park(TENANT, parkedAs('other', 'other'));
  await eventually(() => ran.length === 3);
  expect(failures).toBe(3);
  expect(ran.indexOf('other')).toBeLessThan(ran.indexOf('flaky'));
  expect(ran.indexOf('flaky')).toBeLessThan(ran.indexOf('after-flaky'));
});

test('an integrator that dies mid-drain: another takes the backlog over once the hold runs out, and runs the rest', async () => {
  const store = new MemoryEventStore();
  let dead = false;
  // What the dead integrator does no longer reaches the store.
  const unlessDead = <T>(call: () => T): T => {
    if (dead) throw new Error('the process is gone');
    return call();
  };
  const deadStore = new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function'
        ? (...args: unknown[]) =>
            unlessDead(() => (value as (...a: unknown[]) => unknown).apply(target, args))
        : value;
    },
  });
  const hung: Array<() => void> = [];
  const firstRan: string[] = [];
  const first = backlogOf(
    deadStore,
    async (_tenant, parked) => {
      if (parked.runId === 'r0') return void firstRan.push('r0');
      await new Promise<void>((resolve) => hung.push(resolve));
    },
    { holder: 'first', leaseMs: 300, window: 3 },
  );
  try {
    for (let index = 0; index < 8; index++) await first.park(TENANT, parkedAs(`r${index}`, `k${index}`));
    // r0 ran; a window of three hangs.
    await eventually(() => firstRan.length === 1 && hung.length === 3);
    // Its progress (r0 ran) is recorded with the renewal of its hold, a third of the lease after it took it.
    await eventually(async () => (await lastHold(store))?.next === 1);
    dead = true;
    await runsTheRestAfterIt(store);
  } finally {
    dead = true;
    for (const resolve of hung) resolve();
    await first.stop();
  }
});

/** A second integrator's sweeps (the scheduler's, every few seconds) find the backlog; once the hold ran out, it drains it. */
async function runsTheRestAfterIt(store: EventStore): Promise<void> {
  const ranBySecond: string[] = [];
  const second = backlogOf(store, async (_tenant, parked) => void ranBySecond.push(parked.runId), {
    holder: 'second',
    leaseMs: 300,
  });
  expect(await second.sweep()).toBe(1);
  expect(second.hasBacklog(TENANT)).toBe(true);
  await eventually(async () => {
    await second.sweep();
    return ranBySecond.length === 7;
  });
  expect(ranBySecond.sort()).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7']);
  await eventually(() => second.draining === 0);
  expect(await lastHold(store)).toMatchObject({ holder: 'second', next: 8 });
  expect(await second.sweep()).toBe(0);
}

test('a system with a backlog drained by another integrator is found by the sweep and known to have none after', async () => {
  const store = new MemoryEventStore();
  const gate: Array<() => void> = [];
  const draining = backlogOf(store, () => new Promise<void>((resolve) => gate.push(resolve)), {
    holder: 'drainer',
  });
  await draining.park(TENANT, parkedAs('r1', 'k'));
  const other = backlogOf(store, () => Promise.reject(new Error('not this one')), { holder: 'other' });
  expect(await other.sweep()).toBe(1);
  expect(other.hasBacklog(TENANT)).toBe(true);
  await eventually(() => gate.length === 1);
  gate[0]!();
  await eventually(() => draining.draining === 0);
  await eventually(() => other.draining === 0);
  expect(await other.sweep()).toBe(0);
  expect(other.hasBacklog(TENANT)).toBe(false);
});
