import { randomUUID } from 'node:crypto';
import { AggregateCache, bookkeepingContext, CommandHandler } from '../../command-api/kit/handler';
import { subscriptionDecider } from '../../command-api/subscriptions/domain/subscription';
import { streamName } from '../../contracts/streams';
import type { DeliveryStore, SubscriptionRef } from '../../infra/deliveries/port';
import { createSqliteDeliveryStore } from '../../infra/deliveries/sqlite';
import type { PersonalDataEventStore } from '../../infra/event-store/personal-data';
import { personalDataStore } from '../support/personal-data';
import { createSqliteEventStore } from '../../infra/event-store/sqlite';
import { createLogger } from '../../infra/logging';
import { DeliveryMatcher } from '../../integrator/deliveries/matcher';
import { RecordStates } from '../../integrator/deliveries/record-states';
import { Replayer } from '../../integrator/deliveries/replayer';
import { SubscriptionDirectory } from '../../integrator/deliveries/subscription-directory';
import { polling } from '../support/eventually';

const eventually = polling(5_000, 10);
const logger = createLogger('silent');

describe('the replayer', () => {
  let events: PersonalDataEventStore;
  let store: DeliveryStore;
  let directory: SubscriptionDirectory;
  let replayer: Replayer | undefined;
  let commands = 0;

  beforeEach(() => {
    events = personalDataStore(createSqliteEventStore({ path: ':memory:', pollIntervalMs: 10 }));
    store = createSqliteDeliveryStore({ path: ':memory:' });
    directory = new SubscriptionDirectory({ events, logger });
    directory.start();
  });
  afterEach(async () => {
    await replayer?.stop();
    await directory.stop();
    await store.close();
    await events.close();
  });

  async function subscribe(tenant: string, filter: string | null = null): Promise<SubscriptionRef> {
    const handler = new CommandHandler(events, new AggregateCache());
    const result = await handler.handle(
      streamName('subscription', tenant, 1),
      subscriptionDecider,
      {
        kind: 'CreateSubscription',
        subscriptionId: 1,
        settings: {
          name: 'Replayed',
          url: 'https://receiver.example/',
          events: ['record.created'],
          filter,
          headerNames: [],
          sealedHeaders: null,
        },
        active: true,
        sealedSecret: 'v1.aXY.dGFn.Y2lwaGVy',
        now: new Date(),
      },
      bookkeepingContext(tenant, `subscribe-${++commands}`),
    );
    await directory.reach(result.position!);
    return { tenant, subscriptionId: 1 };
  }

  async function createRecords(tenant: string, count: number, moduleId = 1): Promise<bigint> {
    let position = 0n;
    for (let index = 0; index < count; index++) {
      const recordId = ++commands;
      position = (
        await events.append(streamName('record', tenant, recordId), [
          {
            id: randomUUID(),
            type: 'RecordCreated',
            schemaVersion: 1,
            data: { recordId, moduleId, spaceId: 1, name: `Record ${index}`, fields: {} },
            metadata: { ...bookkeepingContext(tenant, randomUUID()), occurredAt: new Date().toISOString() },
          },
        ])
      ).position;
    }
    return position;
  }

  function start(maxQueued: number) {
    replayer = new Replayer({
      store,
      // As the platform wires it: the log as stored, so queued payloads keep personal values sealed.
      events: events.sealed,
      directory,
      matcher: new DeliveryMatcher({
        directory,
        records: new RecordStates(events),
        reveal: (event) => events.reveal(event),
        logger,
        filters: async (_tenant, text) => ({
          kind: 'compare',
          path: 'moduleId',
          op: 'eq',
          value: Number(text.split('=')[1]),
          numeric: true,
        }),
      }),
      logger,
      holder: 'test',
      batch: 7,
      maxQueued,
      leaseMs: 10_000,
      maxHeld: 4,
      pollMs: 20,
      queued: () => undefined,
    });
    replayer.start();
  }

  const replayOf = async (ref: SubscriptionRef, until: bigint) => {
    const replayId = randomUUID();
    await store.addReplay({ ...ref, replayId, after: 0n, until, eventId: null, requestedAt: Date.now() });
    replayer?.notify();
    return replayId;
  };
  const finished = async (ref: SubscriptionRef, replayId: string) =>
    (await store.replays(ref, 10)).find((replay) => replay.replayId === replayId)?.finishedAt !== null;

  test('a replay queues the matching events of its system, up to its end, in steps', async () => {
    const acme = await subscribe('acme', 'moduleId=1');
    await createRecords('acme', 10);
    await createRecords('acme', 5, 2);
    await createRecords('globex', 5);
    const until = await createRecords('acme', 3);
    await createRecords('acme', 4);
    start(1_000);
    const replayId = await replayOf(acme, until);
    await eventually(() => finished(acme, replayId), Boolean);
    const [replay] = await store.replays(acme, 1);
    // 13 records of module 1 up to the end; module 2, the other system and what came after are not.
    expect(replay).toMatchObject({ queued: 13, cursor: until });
    expect(await store.queuedCount(acme)).toBe(13);
  });

  test('a replay waiting for its receiver does not hold back another system’s', async () => {
    const acme = await subscribe('acme');
    const globex = await subscribe('globex');
    await createRecords('acme', 30);
    const until = await createRecords('globex', 3);
    start(10);
    const blocked = await replayOf(acme, until);
    const other = await replayOf(globex, until);
    await eventually(() => finished(globex, other), Boolean);
    expect(await finished(acme, blocked)).toBe(false);
    // The blocked one queued what its receiver may have waiting, and goes on once that went.
    const queued = await store.queuedCount(acme);
    expect(queued).toBeGreaterThanOrEqual(10);
    expect(queued).toBeLessThan(30);
    const delivered = new Set<string>();
    /** A receiver taking what is queued, as the deliverer would. */
    const receive = async () => {
      const now = Date.now();
      for (const claimed of await store.claim(acme, {
        now,
        max: 100,
        holder: 'receiver',
        leaseUntil: now + 1000,
      })) {
        delivered.add(claimed.eventId);
        const attempt = { ...claimed, attempt: 1, at: now, status: 'delivered' as const, latencyMs: 1 };
        await store.settle(
          claimed,
          'receiver',
          { ...attempt, responseStatus: 204, responseBody: '', error: null, nextAttemptAt: null },
          { kind: 'delivered' },
        );
      }
    };
    await eventually(async () => {
      await receive();
      return (await finished(acme, blocked)) && (await store.queuedCount(acme)) === 0;
    }, Boolean);
    expect(delivered.size).toBe(30);
  });
});
