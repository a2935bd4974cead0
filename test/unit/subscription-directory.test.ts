import { randomUUID } from 'node:crypto';
import { AggregateCache, bookkeepingContext, CommandHandler } from '../../command-api/kit/handler';
import {
  subscriptionDecider,
  type SubscriptionCommand,
} from '../../command-api/subscriptions/domain/subscription';
import { streamName } from '../../contracts/streams';
import { createSqliteEventStore } from '../../infra/event-store/sqlite';
import { createLogger } from '../../infra/logging';
import { activeAt, SubscriptionDirectory } from '../../integrator/deliveries/subscription-directory';
import { DeliveryIntake } from '../../integrator/deliveries/intake';
import { MAPPED_INTERNAL_EVENT_TYPES } from '../../contracts/public-event-mapping';

const settings = {
  name: 'Orders',
  url: 'https://receiver.example/hooks',
  events: ['record.created'],
  filter: null,
  headerNames: [],
  sealedHeaders: null,
};

describe('the subscription directory', () => {
  const events = createSqliteEventStore({ path: ':memory:', pollIntervalMs: 10 });
  const handler = new CommandHandler(events, new AggregateCache());
  const directory = new SubscriptionDirectory({ events, logger: createLogger('silent') });
  let commands = 0;

  const run = async (tenant: string, subscriptionId: number, command: SubscriptionCommand) => {
    const result = await handler.handle(
      streamName('subscription', tenant, subscriptionId),
      subscriptionDecider,
      command,
      bookkeepingContext(tenant, `command-${++commands}`),
    );
    return result.position!;
  };
  const create = (tenant: string, subscriptionId: number, active = true) =>
    run(tenant, subscriptionId, {
      kind: 'CreateSubscription',
      subscriptionId,
      settings,
      active,
      sealedSecret: 'v1.aXY.dGFn.Y2lwaGVy',
      now: new Date(),
    });
  /** An unrelated event, to have a position after the last one. */
  const elsewhere = async () =>
    (
      await events.append('note-acme.1', [
        {
          id: randomUUID(),
          type: 'Noted',
          schemaVersion: 1,
          data: {},
          metadata: { ...bookkeepingContext('acme', randomUUID()), occurredAt: new Date().toISOString() },
        },
      ])
    ).position;

  beforeAll(() => directory.start());
  afterAll(async () => {
    await directory.stop();
    await events.close();
  });

  test('the intake passes over a published event unread only when its system has no subscription active at its position', async () => {
    // Only the directory is needed to pass over a message: anything else the intake touched would throw.
    const unused = new Proxy(
      {},
      {
        get: () => {
          throw new Error('not used to pass over a message');
        },
      },
    );
    const intake = new DeliveryIntake({
      store: unused as never,
      events,
      directory,
      matcher: unused as never,
      deliverer: unused as never,
      replayer: unused as never,
    });
    const published = MAPPED_INTERNAL_EVENT_TYPES[0]!;
    const before = await elsewhere();
    const created = await create('beta', 7);
    const after = await elsewhere();
    const headers = (tenant: string, position: bigint | string, type = published) => ({
      type,
      tenant,
      position: String(position),
    });
    // A system without subscriptions, and one whose subscription came after the event or with it.
    expect(await intake.passesOver(headers('zeta', after))).toBe(true);
    expect(await intake.passesOver(headers('beta', before))).toBe(true);
    expect(await intake.passesOver(headers('beta', created))).toBe(true);
    // The subscription is active at the event: it is read and matched.
    expect(await intake.passesOver(headers('beta', after))).toBe(false);
    // Anything else is read as before: another type, no tenant, a position not in its canonical form.
    expect(await intake.passesOver(headers('zeta', after, 'SubscriptionEnabled'))).toBe(false);
    expect(await intake.passesOver({ type: published, position: String(after) })).toBe(false);
    for (const position of ['', '0', '01', '1e3', '-1', ' 1', '123456789012345678901'])
      expect(await intake.passesOver(headers('zeta', position))).toBe(false);
  });

  test('a subscription is told of events after its creation, while it is active, and before it was disabled', async () => {
    const created = await create('acme', 1);
    await directory.reach(created);
    const entry = () => directory.get('acme', 1)!;
    expect(activeAt(entry(), created)).toBe(false);
    const written = await elsewhere();
    expect(activeAt(entry(), written)).toBe(true);
    const disabled = await run('acme', 1, { kind: 'DisableSubscription', reason: 'failing' });
    await directory.reach(disabled);
    expect(entry().state.active).toBe(false);
    // Events written before the disabling were still its own; those after it are not.
    expect(activeAt(entry(), written)).toBe(true);
    expect(activeAt(entry(), disabled)).toBe(false);
    expect(activeAt(entry(), disabled + 10n)).toBe(false);
    // Disabled again for another reason: it stays disabled from the first time.
    const again = await run('acme', 1, { kind: 'DisableSubscription', reason: 'still failing' });
    await directory.reach(again);
    expect(entry().disabledAt).toBe(disabled);
    const enabled = await run('acme', 1, { kind: 'EnableSubscription' });
    await directory.reach(enabled);
    expect(entry().disabledAt).toBeNull();
    expect(activeAt(entry(), enabled + 1n)).toBe(true);
  });

  test('one created inactive is told of nothing until enabled; systems keep their own', async () => {
    const created = await create('acme', 2, false);
    const elsewhereCreated = await create('globex', 2);
    await directory.reach(elsewhereCreated);
    expect(activeAt(directory.get('acme', 2)!, created + 1n)).toBe(false);
    expect(activeAt(directory.get('globex', 2)!, elsewhereCreated + 1n)).toBe(true);
    expect([...directory.of('globex')].map((entry) => entry.state.subscriptionId)).toEqual([2]);
    expect([...directory.of('acme')].map((entry) => entry.state.subscriptionId).sort()).toEqual([1, 2]);
  });

  test('a deleted subscription leaves the directory', async () => {
    await create('acme', 3);
    const deleted = await run('acme', 3, { kind: 'DeleteSubscription' });
    await directory.reach(deleted);
    expect(directory.get('acme', 3)).toBeUndefined();
  });

  test('reach waits only for subscription events: a later position of another stream is reached at once', async () => {
    await create('acme', 4);
    const later = await elsewhere();
    const started = Date.now();
    await directory.reach(later + 1_000n);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(directory.get('acme', 4)).toBeDefined();
  });
});
