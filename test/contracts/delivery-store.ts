import {
  assertPositions,
  MAX_POSITION,
  type AttemptStatus,
  type ClaimedDelivery,
  type DeliveryAttempt,
  type DeliveryStore,
  type NewDelivery,
  type SubscriptionRef,
} from '../../infra/deliveries/port';

/**
 * The delivery-store contract: every adapter must pass all of it, unchanged. Tests share one store and use
 * subscriptions of their own, so the suite can run against a shared server; what is global (prune, replays
 * claimed oldest first) uses times no other test uses, and each replay test forgets its replays at the end.
 */
export interface DeliveryStoreUnderTest {
  /** A new handle on the store: the suite opens two, as two processes would (and closes them). */
  readonly open: () => Promise<DeliveryStore>;
  /** After the handles are closed. */
  readonly cleanup: () => Promise<void>;
}

const T = Date.parse('2026-11-23T10:00:00Z');
const LEASE = 30_000;
let refSequence = 0;
let positionSequence = 1000n;

function uniqueRef(tenant?: string): SubscriptionRef {
  refSequence += 1;
  return { tenant: tenant ?? `tenant-${process.pid}-${refSequence}`, subscriptionId: 100 + refSequence };
}

function delivery(ref: SubscriptionRef, eventId: string, options: Partial<NewDelivery> = {}): NewDelivery {
  positionSequence += 1n;
  return {
    tenant: ref.tenant,
    subscriptionId: ref.subscriptionId,
    orderKey: 'record-1',
    eventId,
    eventType: 'record.created',
    position: positionSequence,
    origin: 'live',
    payload: JSON.stringify({ id: eventId }),
    dueAt: T,
    ...options,
  };
}

function attemptOf(
  claimed: NewDelivery & { readonly attempts?: number },
  at: number,
  status: AttemptStatus,
  extra: Partial<DeliveryAttempt> = {},
): DeliveryAttempt {
  return {
    eventId: claimed.eventId,
    eventType: claimed.eventType,
    position: claimed.position,
    origin: claimed.origin,
    attempt: (claimed.attempts ?? 0) + 1,
    at,
    status,
    latencyMs: 12,
    responseStatus: status === 'delivered' ? 200 : 503,
    responseBody: status === 'delivered' ? 'ok' : 'busy',
    error: status === 'delivered' ? null : 'the receiver answered 503',
    nextAttemptAt: status === 'retrying' ? at + 1000 : null,
    ...extra,
  };
}

function claimAt(
  store: DeliveryStore,
  ref: SubscriptionRef,
  now: number,
  options: { readonly max?: number; readonly holder?: string; readonly leaseUntil?: number } = {},
): Promise<ClaimedDelivery[]> {
  return store.claim(ref, {
    now,
    max: options.max ?? 10,
    holder: options.holder ?? 'holder-1',
    leaseUntil: options.leaseUntil ?? now + LEASE,
  });
}

function eventsOf(claimed: readonly NewDelivery[]): string[] {
  return claimed.map((one) => one.eventId);
}

/** Logs an attempt through a settle that holds nothing: the queue is left as it is. */
function logAttempt(store: DeliveryStore, ref: SubscriptionRef, attempt: DeliveryAttempt): Promise<void> {
  const claimed: ClaimedDelivery = {
    ...delivery(ref, attempt.eventId, { position: attempt.position, origin: attempt.origin }),
    attempts: attempt.attempt - 1,
    firstAttemptAt: null,
    leaseUntil: 0,
  };
  return store.settle(claimed, 'holds-nothing', attempt, { kind: 'delivered' });
}

export function deliveryStoreContract(store: () => Promise<DeliveryStoreUnderTest>): void {
  let under: DeliveryStoreUnderTest;
  let deliveries: DeliveryStore;
  let other: DeliveryStore;

  beforeAll(async () => {
    under = await store();
    deliveries = await under.open();
    other = await under.open();
  });

  afterAll(async () => {
    await deliveries.close();
    await other.close();
    await under.cleanup();
  });

  describe('queue', () => {
    test('a delivery is queued once per subscription, event and origin; another origin is another', async () => {
      const ref = uniqueRef();
      const first = delivery(ref, 'e1');
      expect(await deliveries.queuedCount(ref, 'record-1')).toBe(0);
      await deliveries.enqueue([first]);
      await other.enqueue([{ ...first, payload: '{"changed":true}', dueAt: T - 5000 }]);
      await deliveries.enqueue([first, { ...first, origin: 'replay-1' }]);
      expect(await deliveries.queuedCount(ref, 'record-1')).toBe(2);
      expect(await deliveries.queuedCount(ref, 'record-2')).toBe(0);
      expect(await deliveries.queuedCount(ref)).toBe(2);
      const elsewhere = uniqueRef();
      expect(await deliveries.queuedCount(elsewhere)).toBe(0);
      await other.enqueue([
        delivery(elsewhere, 'e1'),
        delivery(elsewhere, 'e2', { orderKey: 'record-2' }),
        delivery(elsewhere, 'e3', { orderKey: 'record-2' }),
      ]);
      expect(await deliveries.queuedCount(elsewhere)).toBe(3);
      expect(await deliveries.queuedCount(elsewhere, 'record-2')).toBe(2);
      await deliveries.forget(elsewhere);

      const [live, ...rest] = await claimAt(deliveries, ref, T);
      expect(rest).toEqual([]);
      expect(live).toEqual({ ...first, attempts: 0, firstAttemptAt: null, leaseUntil: T + LEASE });
      await deliveries.settle(live!, 'holder-1', attemptOf(live!, T + 1, 'delivered'), { kind: 'delivered' });
      const replayed = await claimAt(deliveries, ref, T + 1);
      expect(replayed.map(({ eventId, origin }) => ({ eventId, origin }))).toEqual([
        { eventId: 'e1', origin: 'replay-1' },
      ]);
      await deliveries.settle(replayed[0]!, 'holder-1', attemptOf(replayed[0]!, T + 2, 'delivered'), {
        kind: 'delivered',
      });
      expect(await claimAt(deliveries, ref, T + 2)).toEqual([]);
      expect(await deliveries.queuedCount(ref, 'record-1')).toBe(0);
    });

    test('claim answers the head of each key: the lowest position, then the earliest queued', async () => {
      const ref = uniqueRef();
      await deliveries.enqueue([
        delivery(ref, 'a20', { orderKey: 'a', position: 20n }),
        delivery(ref, 'a10', { orderKey: 'a', position: 10n }),
      ]);
      await other.enqueue([
        delivery(ref, 'a10', { orderKey: 'a', position: 10n, origin: 'replay-1' }),
        delivery(ref, 'b5', { orderKey: 'b', position: 5n }),
      ]);
      const order: string[] = [];
      for (let round = 0; round < 5; round++) {
        const claimed = await claimAt(deliveries, ref, T + round);
        expect(new Set(claimed.map((one) => one.orderKey)).size).toBe(claimed.length);
        for (const one of claimed) {
          order.push(`${one.eventId}/${one.origin}`);
          await deliveries.settle(one, 'holder-1', attemptOf(one, T + round, 'delivered'), {
            kind: 'delivered',
          });
        }
      }
      const ofKeyA = order.filter((entry) => entry.startsWith('a'));
      expect(ofKeyA).toEqual(['a10/live', 'a10/replay-1', 'a20/live']);
      expect(order).toContain('b5/live');
      expect(order).toHaveLength(4);
    });

    test('claim answers only due heads, earliest due first, at most max', async () => {
      const ref = uniqueRef();
      await deliveries.enqueue([
        delivery(ref, 'a', { orderKey: 'a', dueAt: T + 300 }),
        delivery(ref, 'b', { orderKey: 'b', dueAt: T + 100 }),
        delivery(ref, 'c', { orderKey: 'c', dueAt: T + 200 }),
        delivery(ref, 'd', { orderKey: 'd', dueAt: T + 5000 }),
        // Due before the head of its key, but not the head: it waits.
        delivery(ref, 'a-next', { orderKey: 'a', dueAt: T }),
      ]);
      expect(await claimAt(deliveries, ref, T + 99)).toEqual([]);
      expect(await deliveries.nextDue(ref, T)).toBe(T + 100);
      expect(eventsOf(await claimAt(deliveries, ref, T + 1000, { max: 2 }))).toEqual(['b', 'c']);
      expect(eventsOf(await claimAt(other, ref, T + 1000, { holder: 'holder-2' }))).toEqual(['a']);
      expect(await claimAt(other, ref, T + 1000, { holder: 'holder-2' })).toEqual([]);
      expect(
        await deliveries.claim(ref, { now: T + 9000, max: 0, holder: 'h', leaseUntil: T + 9001 }),
      ).toEqual([]);
      expect(eventsOf(await claimAt(deliveries, ref, T + 5000))).toEqual(['d']);
    });

    test('a key with a claimed delivery has nothing else claimable, even a lower position queued since', async () => {
      const ref = uniqueRef();
      await deliveries.enqueue([delivery(ref, 'e20', { position: 20n })]);
      const [claimed] = await claimAt(deliveries, ref, T);
      expect(claimed?.eventId).toBe('e20');
      await other.enqueue([delivery(ref, 'e10', { position: 10n })]);
      expect(await claimAt(other, ref, T + 1, { holder: 'holder-2' })).toEqual([]);
      // Settled for another try: the lower position is the head now.
      await deliveries.settle(claimed!, 'holder-1', attemptOf(claimed!, T + 2, 'retrying'), {
        kind: 'retry',
        dueAt: T + 10,
      });
      expect(eventsOf(await claimAt(other, ref, T + 2, { holder: 'holder-2' }))).toEqual(['e10']);
    });

    test('a running lease keeps a delivery from every claim; one that ran out is taken over', async () => {
      const ref = uniqueRef();
      await deliveries.enqueue([delivery(ref, 'e1'), delivery(ref, 'e2')]);
      const [first] = await claimAt(deliveries, ref, T, { leaseUntil: T + 100 });
      expect(first).toMatchObject({ eventId: 'e1', leaseUntil: T + 100 });
      expect(await claimAt(other, ref, T + 99, { holder: 'holder-2' })).toEqual([]);
      const [takenOver] = await claimAt(other, ref, T + 100, { holder: 'holder-2', leaseUntil: T + 500 });
      expect(takenOver).toMatchObject({ eventId: 'e1', attempts: 0, leaseUntil: T + 500 });
      expect(await claimAt(deliveries, ref, T + 200)).toEqual([]);
    });

    test('two handles claiming at once never get the same delivery, nor two of one key', async () => {
      const ref = uniqueRef();
      const keys = 24;
      const queued: NewDelivery[] = [];
      for (let key = 0; key < keys; key++)
        queued.push(
          delivery(ref, `k${key}-first`, { orderKey: `k${key}` }),
          delivery(ref, `k${key}-second`, { orderKey: `k${key}` }),
        );
      await Promise.all([deliveries.enqueue(queued.slice(0, keys)), other.enqueue(queued.slice(keys))]);

      const delivered: string[] = [];
      for (let round = 0; round < 12 && delivered.length < queued.length; round++) {
        const handles = [deliveries, other, deliveries, other, deliveries, other, deliveries, other];
        const claims = await Promise.all(
          handles.map((handle, index) =>
            claimAt(handle, ref, T + round, { max: 5, holder: `holder-${index}` }).then((claimed) =>
              claimed.map((one) => ({ one, handle, holder: `holder-${index}` })),
            ),
          ),
        );
        const all = claims.flat();
        expect(new Set(all.map(({ one }) => one.eventId)).size).toBe(all.length);
        expect(new Set(all.map(({ one }) => one.orderKey)).size).toBe(all.length);
        await Promise.all(
          all.map(({ one, handle, holder }) =>
            handle.settle(one, holder, attemptOf(one, T + round, 'delivered'), { kind: 'delivered' }),
          ),
        );
        delivered.push(...all.map(({ one }) => one.eventId));
      }
      expect(delivered.sort()).toEqual(queued.map((one) => one.eventId).sort());
      for (let key = 0; key < keys; key++)
        expect(delivered.indexOf(`k${key}-first`)).toBeLessThan(delivered.indexOf(`k${key}-second`));
    });

    test('enqueues, claims and settles at once through two handles lose nothing and keep each key in order', async () => {
      const ref = uniqueRef();
      const keys = 8;
      const waves = 4;
      const total = keys * waves;
      const delivered: NewDelivery[] = [];
      const produce = async () => {
        for (let wave = 0; wave < waves; wave++)
          await (wave % 2 === 0 ? deliveries : other).enqueue(
            Array.from({ length: keys }, (_, key) =>
              delivery(ref, `k${key}-w${wave}`, { orderKey: `k${key}` }),
            ),
          );
      };
      const consume = async (handle: DeliveryStore, holder: string) => {
        for (let round = 0; round < 200 && delivered.length < total; round++) {
          const claimed = await claimAt(handle, ref, T, { max: 3, holder });
          for (const one of claimed) {
            await handle.settle(one, holder, attemptOf(one, T, 'delivered'), { kind: 'delivered' });
            delivered.push(one);
          }
        }
      };
      await Promise.all([produce(), consume(deliveries, 'holder-1'), consume(other, 'holder-2')]);
      expect(delivered).toHaveLength(total);
      expect(new Set(eventsOf(delivered)).size).toBe(total);
      for (let key = 0; key < keys; key++) {
        const ofKey = delivered.filter((one) => one.orderKey === `k${key}`).map((one) => one.position);
        expect(ofKey).toEqual([...ofKey].sort((a, b) => (a < b ? -1 : 1)));
      }
    });

    test('settled as delivered: the attempt is logged and the next of the key is due at once', async () => {
      const ref = uniqueRef();
      await deliveries.enqueue([delivery(ref, 'e1'), delivery(ref, 'e2', { dueAt: T + 60_000 })]);
      const [claimed] = await claimAt(deliveries, ref, T);
      await deliveries.settle(claimed!, 'holder-1', attemptOf(claimed!, T + 5, 'delivered'), {
        kind: 'delivered',
      });
      expect(await deliveries.lastAttemptOf(ref, 'e1')).toMatchObject({ status: 'delivered', at: T + 5 });
      expect(await other.nextDue(ref, T + 5)).toBeLessThanOrEqual(T + 5);
      const [next] = await claimAt(other, ref, T + 5, { holder: 'holder-2' });
      expect(next?.eventId).toBe('e2');
      expect(next!.dueAt).toBeLessThanOrEqual(T + 5);
    });

    test('settled for a retry: the same delivery again at its due time, attempts counted, the first kept', async () => {
      const ref = uniqueRef();
      await deliveries.enqueue([delivery(ref, 'e1'), delivery(ref, 'e2')]);
      const [first] = await claimAt(deliveries, ref, T);
      expect(first).toMatchObject({ eventId: 'e1', attempts: 0, firstAttemptAt: null });
      await deliveries.settle(first!, 'holder-1', attemptOf(first!, T + 1, 'retrying'), {
        kind: 'retry',
        dueAt: T + 1000,
      });
      expect(await claimAt(other, ref, T + 999, { holder: 'holder-2' })).toEqual([]);
      expect(await other.nextDue(ref, T + 2)).toBe(T + 1000);
      const [second] = await claimAt(other, ref, T + 1000, { holder: 'holder-2' });
      expect(second).toMatchObject({ eventId: 'e1', attempts: 1, firstAttemptAt: T + 1, dueAt: T + 1000 });
      await other.settle(second!, 'holder-2', attemptOf(second!, T + 1001, 'retrying'), {
        kind: 'retry',
        dueAt: T + 3000,
      });
      const [third] = await claimAt(deliveries, ref, T + 3000);
      expect(third).toMatchObject({ eventId: 'e1', attempts: 2, firstAttemptAt: T + 1 });
      expect(await deliveries.lastAttemptOf(ref, 'e1')).toMatchObject({ attempt: 2, status: 'retrying' });
    });

    test('settled as failed: the delivery leaves the queue, logged as failed, the next of the key due', async () => {
      const ref = uniqueRef();
      await deliveries.enqueue([delivery(ref, 'e1'), delivery(ref, 'e2', { dueAt: T + 60_000 })]);
      const [claimed] = await claimAt(deliveries, ref, T);
      await deliveries.settle(claimed!, 'holder-1', attemptOf(claimed!, T + 7, 'failed'), { kind: 'failed' });
      expect(await deliveries.lastAttemptOf(ref, 'e1')).toMatchObject({ status: 'failed' });
      expect(eventsOf(await claimAt(deliveries, ref, T + 7))).toEqual(['e2']);
      const page = await deliveries.attempts({ ...ref, status: 'failed', limit: 10 });
      expect(page.attempts.map((attempt) => attempt.eventId)).toEqual(['e1']);
    });

    test('a holder whose lease was taken over logs its attempt but leaves the queue as it is', async () => {
      const ref = uniqueRef();
      await deliveries.enqueue([delivery(ref, 'e1'), delivery(ref, 'e2')]);
      const [stale] = await claimAt(deliveries, ref, T, { leaseUntil: T + 100 });
      const [current] = await claimAt(other, ref, T + 100, { holder: 'holder-2' });
      for (const settlement of [{ kind: 'delivered' }, { kind: 'failed' }] as const)
        await deliveries.settle(stale!, 'holder-1', attemptOf(stale!, T + 150, 'delivered'), settlement);
      await deliveries.settle(stale!, 'holder-1', attemptOf(stale!, T + 151, 'retrying'), {
        kind: 'retry',
        dueAt: T + 99_999,
      });
      expect(await claimAt(deliveries, ref, T + 200)).toEqual([]);
      expect((await deliveries.attempts({ ...ref, limit: 10 })).attempts).toHaveLength(3);
      await other.settle(current!, 'holder-2', attemptOf(current!, T + 300, 'delivered'), {
        kind: 'delivered',
      });
      expect(eventsOf(await claimAt(deliveries, ref, T + 300))).toEqual(['e2']);
    });

    test('nextDue: the earliest head, a leased one when its lease ends; null when nothing is queued', async () => {
      const ref = uniqueRef();
      expect(await deliveries.nextDue(ref, T)).toBeNull();
      await deliveries.enqueue([
        delivery(ref, 'a1', { orderKey: 'a' }),
        delivery(ref, 'a2', { orderKey: 'a' }),
      ]);
      expect(await deliveries.nextDue(ref, T)).toBe(T);
      await claimAt(deliveries, ref, T, { leaseUntil: T + 400 });
      expect(await other.nextDue(ref, T + 1)).toBe(T + 400);
      await other.enqueue([delivery(ref, 'b1', { orderKey: 'b', dueAt: T + 250 })]);
      expect(await other.nextDue(ref, T + 1)).toBe(T + 250);
      expect(await other.nextDue(uniqueRef(), T)).toBeNull();
    });

    test('hurry makes the heads not claimed due now, and answers how many', async () => {
      const ref = uniqueRef();
      await deliveries.enqueue([
        delivery(ref, 'waiting', { orderKey: 'a', dueAt: T + 50_000 }),
        delivery(ref, 'claimed', { orderKey: 'b' }),
        delivery(ref, 'due', { orderKey: 'c', dueAt: T - 10 }),
        delivery(ref, 'later-head', { orderKey: 'd', dueAt: T + 500 }),
        delivery(ref, 'later-behind', { orderKey: 'd', dueAt: T + 900 }),
      ]);
      expect(eventsOf(await claimAt(deliveries, ref, T, { max: 1 }))).toEqual(['due']);
      expect(eventsOf(await claimAt(deliveries, ref, T, { max: 1 }))).toEqual(['claimed']);
      expect(await other.hurry(ref, T + 10)).toBe(2);
      expect(await other.hurry(ref, T + 10)).toBe(0);
      expect(await other.nextDue(ref, T + 10)).toBe(T + 10);
      expect(eventsOf(await claimAt(other, ref, T + 10, { holder: 'holder-2' })).sort()).toEqual([
        'later-head',
        'waiting',
      ]);
    });

    test('subscriptionsWithQueue lists the subscriptions with something queued', async () => {
      const busy = uniqueRef();
      const idle = uniqueRef();
      await deliveries.enqueue([delivery(busy, 'e1')]);
      expect(await other.subscriptionsWithQueue()).toContainEqual(busy);
      expect(await other.subscriptionsWithQueue()).not.toContainEqual(idle);
      const [claimed] = await claimAt(deliveries, busy, T);
      await deliveries.settle(claimed!, 'holder-1', attemptOf(claimed!, T, 'delivered'), {
        kind: 'delivered',
      });
      expect(await other.subscriptionsWithQueue()).not.toContainEqual(busy);
    });

    test('a 1 MB payload goes round whole', async () => {
      const ref = uniqueRef();
      const payload = JSON.stringify({ text: 'ü€'.repeat(200_000) + 'x'.repeat(400_000) });
      expect(Buffer.byteLength(payload)).toBeGreaterThan(1_000_000);
      await deliveries.enqueue([delivery(ref, 'big', { payload })]);
      const [claimed] = await claimAt(other, ref, T, { holder: 'holder-2' });
      expect(claimed?.payload).toBe(payload);
      await other.settle(claimed!, 'holder-2', attemptOf(claimed!, T, 'delivered'), { kind: 'delivered' });
    });

    test('positions beyond 2^53 go round exactly and order exactly', async () => {
      const ref = uniqueRef();
      const base = 2n ** 53n;
      await deliveries.enqueue([
        delivery(ref, 'max', { position: MAX_POSITION }),
        delivery(ref, 'plus2', { position: base + 2n }),
        delivery(ref, 'plus1', { position: base + 1n }),
      ]);
      const order: bigint[] = [];
      for (let round = 0; round < 3; round++) {
        const [claimed] = await claimAt(deliveries, ref, T + round);
        order.push(claimed!.position);
        await deliveries.settle(claimed!, 'holder-1', attemptOf(claimed!, T + round, 'delivered'), {
          kind: 'delivered',
        });
      }
      expect(order).toEqual([base + 1n, base + 2n, MAX_POSITION]);
      expect((await other.lastAttemptOf(ref, 'max'))?.position).toBe(MAX_POSITION);
      await expect(
        deliveries.enqueue([delivery(ref, 'over', { position: MAX_POSITION + 1n })]),
      ).rejects.toThrow('out of range');
      expect(() => assertPositions(-1n)).toThrow('out of range');
    });
  });

  describe('subscriptions apart', () => {
    test('tenants and subscriptions never see each other’s deliveries, attempts or replays', async () => {
      const mine = uniqueRef();
      const sameIdElsewhere = { tenant: `${mine.tenant}-other`, subscriptionId: mine.subscriptionId };
      const sameTenantOtherId = { tenant: mine.tenant, subscriptionId: mine.subscriptionId + 100_000 };
      const refs = [mine, sameIdElsewhere, sameTenantOtherId];
      for (const ref of refs) {
        await deliveries.enqueue([delivery(ref, 'shared-event', { position: 7n })]);
        await deliveries.addReplay({
          ...ref,
          replayId: `replay-${ref.tenant}-${ref.subscriptionId}`,
          after: 0n,
          until: 9n,
          requestedAt: T,
          eventId: null,
        });
      }
      const [claimed, ...rest] = await claimAt(deliveries, mine, T);
      expect(rest).toEqual([]);
      expect(claimed).toMatchObject(mine);
      await deliveries.settle(claimed!, 'holder-1', attemptOf(claimed!, T + 1, 'delivered'), {
        kind: 'delivered',
      });
      expect(await deliveries.deliveredSince(mine, T)).toBe(true);
      for (const ref of [sameIdElsewhere, sameTenantOtherId]) {
        expect(await other.queuedCount(ref, 'record-1')).toBe(1);
        expect(await other.deliveredSince(ref, 0)).toBe(false);
        expect(await other.lastAttemptOf(ref, 'shared-event')).toBeNull();
        expect((await other.attempts({ ...ref, limit: 10 })).attempts).toEqual([]);
        expect((await other.replays(ref, 10)).map((replay) => replay.replayId)).toEqual([
          `replay-${ref.tenant}-${ref.subscriptionId}`,
        ]);
      }
      await other.forget(mine);
      expect(await other.replays(mine, 10)).toEqual([]);
      for (const ref of [sameIdElsewhere, sameTenantOtherId]) {
        expect(eventsOf(await claimAt(other, ref, T, { holder: 'holder-2' }))).toEqual(['shared-event']);
        expect(await other.replays(ref, 10)).toHaveLength(1);
        await other.forget(ref);
      }
    });

    test('forget drops the subscription’s queue, log and replays', async () => {
      const ref = uniqueRef();
      await deliveries.enqueue([delivery(ref, 'e1'), delivery(ref, 'e2', { orderKey: 'other' })]);
      const [claimed] = await claimAt(deliveries, ref, T, { max: 1 });
      await logAttempt(deliveries, ref, attemptOf(claimed!, T, 'retrying'));
      await deliveries.addReplay({
        ...ref,
        replayId: `forget-${ref.tenant}`,
        after: 0n,
        until: 5n,
        requestedAt: T,
        eventId: null,
      });
      await other.forget(ref);
      expect(await deliveries.queuedCount(ref, 'record-1')).toBe(0);
      expect(await deliveries.queuedCount(ref, 'other')).toBe(0);
      expect(await deliveries.nextDue(ref, T)).toBeNull();
      expect(await claimAt(deliveries, ref, T + LEASE)).toEqual([]);
      expect((await deliveries.attempts({ ...ref, limit: 10 })).attempts).toEqual([]);
      expect(await deliveries.replays(ref, 10)).toEqual([]);
      expect(await deliveries.subscriptionsWithQueue()).not.toContainEqual(ref);
      // The holder of a forgotten delivery settles it: logged (the log of a new subscription), nothing queued.
      await deliveries.settle(claimed!, 'holder-1', attemptOf(claimed!, T + 1, 'retrying'), {
        kind: 'retry',
        dueAt: T + 2,
      });
      expect(await deliveries.queuedCount(ref, 'record-1')).toBe(0);
    });
  });

  describe('attempt log', () => {
    test('deliveredSince: whether an attempt was delivered at or after a time', async () => {
      const ref = uniqueRef();
      const one = delivery(ref, 'e1');
      await logAttempt(deliveries, ref, attemptOf(one, T + 10, 'retrying'));
      expect(await other.deliveredSince(ref, 0)).toBe(false);
      await logAttempt(deliveries, ref, attemptOf(one, T + 20, 'delivered'));
      expect(await other.deliveredSince(ref, T + 20)).toBe(true);
      expect(await other.deliveredSince(ref, T + 21)).toBe(false);
    });

    test('attempts: newest first, a page at a time, by event and by status', async () => {
      const ref = uniqueRef();
      const first = delivery(ref, 'first');
      const second = delivery(ref, 'second');
      const logged: Array<[NewDelivery, number, AttemptStatus]> = [
        [first, T + 1, 'retrying'],
        [second, T + 2, 'retrying'],
        [first, T + 3, 'retrying'],
        // Two at one time, logged through one handle: the later logged is the newer.
        [second, T + 4, 'delivered'],
        [first, T + 4, 'failed'],
        [second, T + 5, 'delivered'],
        [first, T + 6, 'delivered'],
      ];
      for (const [one, at, status] of logged)
        await logAttempt(at % 2 === 0 ? deliveries : other, ref, attemptOf(one, at, status));
      const expected = [...logged].reverse().map(([one, at, status]) => `${one.eventId}@${at}:${status}`);
      const seen: string[] = [];
      let before: string | undefined;
      for (let page = 0; page < 5; page++) {
        const answer = await deliveries.attempts({ ...ref, limit: 3, ...(before ? { before } : {}) });
        seen.push(...answer.attempts.map((attempt) => `${attempt.eventId}@${attempt.at}:${attempt.status}`));
        expect(answer.attempts.length).toBeLessThanOrEqual(3);
        if (!answer.next) break;
        before = answer.next;
      }
      expect(seen).toEqual(expected);

      const ids = (await deliveries.attempts({ ...ref, limit: 10 })).attempts.map((attempt) => attempt.id);
      expect(new Set(ids).size).toBe(7);
      const ofFirst = await other.attempts({ ...ref, eventId: 'first', limit: 10 });
      expect(ofFirst.attempts.map((attempt) => attempt.at)).toEqual([T + 6, T + 4, T + 3, T + 1]);
      expect(ofFirst.next).toBeNull();
      const delivered = await other.attempts({ ...ref, status: 'delivered', limit: 2 });
      expect(delivered.attempts.map((attempt) => attempt.at)).toEqual([T + 6, T + 5]);
      const rest = await other.attempts({ ...ref, status: 'delivered', limit: 2, before: delivered.next! });
      expect(rest).toEqual({
        attempts: [expect.objectContaining({ eventId: 'second', at: T + 4 })],
        next: null,
      });
      const both = await other.attempts({ ...ref, eventId: 'first', status: 'retrying', limit: 10 });
      expect(both.attempts.map((attempt) => attempt.at)).toEqual([T + 3, T + 1]);
      expect(both.attempts[0]).toEqual({
        ...attemptOf(first, T + 3, 'retrying'),
        id: expect.any(String),
      });
      await expect(other.attempts({ ...ref, limit: 10, before: 'not-a-page' })).rejects.toMatchObject({
        kind: 'validation_failed',
      });
    });

    test('lastAttemptOf: the newest attempt of the event, or null', async () => {
      const ref = uniqueRef();
      const one = delivery(ref, 'e1');
      expect(await deliveries.lastAttemptOf(ref, 'e1')).toBeNull();
      await logAttempt(deliveries, ref, attemptOf(one, T + 1, 'retrying'));
      await logAttempt(other, ref, attemptOf(one, T + 2, 'failed', { attempt: 2, nextAttemptAt: null }));
      await logAttempt(deliveries, ref, attemptOf(delivery(ref, 'e2'), T + 3, 'delivered'));
      expect(await other.lastAttemptOf(ref, 'e1')).toEqual(
        attemptOf(one, T + 2, 'failed', { attempt: 2, nextAttemptAt: null }),
      );
    });

    test('the response body is kept as given', async () => {
      const ref = uniqueRef();
      const responseBody = `${'ä'.repeat(500)}{"end":true}\n`;
      const attempt = attemptOf(delivery(ref, 'e1'), T, 'retrying', {
        responseBody,
        responseStatus: null,
        error: 'connection refused',
      });
      await logAttempt(deliveries, ref, attempt);
      expect(await other.lastAttemptOf(ref, 'e1')).toEqual(attempt);
    });

    test('prune deletes attempts made before a time and replays finished before it', async () => {
      // Far in the past: no other test logs or finishes anything this early.
      const past = Date.parse('2001-01-01T00:00:00Z');
      const ref = uniqueRef();
      const one = delivery(ref, 'e1');
      await logAttempt(deliveries, ref, attemptOf(one, past, 'retrying'));
      await logAttempt(deliveries, ref, attemptOf(one, past + 5, 'retrying'));
      await logAttempt(deliveries, ref, attemptOf(one, past + 10, 'delivered'));
      const replays = ['old-finished', 'new-finished', 'unfinished'].map((name) => `${name}-${ref.tenant}`);
      for (const [index, replayId] of replays.entries())
        await deliveries.addReplay({
          ...ref,
          replayId,
          after: 0n,
          until: 1n,
          requestedAt: past + index,
          eventId: null,
        });
      for (const [replayId, finishedAt] of [
        [replays[0]!, past + 5],
        [replays[1]!, past + 10],
      ] as const) {
        const claimed = await other.claimReplay({ now: past, holder: 'pruner', leaseUntil: past + 100 });
        expect(claimed?.replayId).toBe(replayId);
        expect(
          await other.advanceReplay(replayId, 'pruner', {
            deliveries: [],
            cursor: 1n,
            leaseUntil: past + 100,
            finishedAt,
          }),
        ).toBe(true);
      }
      expect(await other.prune(past + 10)).toBe(2);
      expect(await other.prune(past + 10)).toBe(0);
      expect(
        (await deliveries.attempts({ ...ref, limit: 10 })).attempts.map((attempt) => attempt.at),
      ).toEqual([past + 10]);
      expect((await deliveries.replays(ref, 10)).map((replay) => replay.replayId).sort()).toEqual(
        [replays[1], replays[2]].sort(),
      );
      await deliveries.forget(ref);
    });
  });

  describe('replays', () => {
    test('a replay is recorded once; the subscription’s replays come newest first', async () => {
      const ref = uniqueRef();
      const replay = (replayId: string, requestedAt: number) => ({
        ...ref,
        replayId,
        after: 10n,
        until: 99n,
        requestedAt,
        // A redelivery names its event; a replay of a range, none.
        eventId: replayId === 'r-new' ? 'e-redelivered' : null,
      });
      await deliveries.addReplay(replay('r-old', T - 2000));
      await other.addReplay(replay('r-new', T - 1000));
      await deliveries.addReplay({ ...replay('r-old', T), until: 5n });
      expect(await other.replays(ref, 10)).toEqual([
        { ...replay('r-new', T - 1000), cursor: 10n, queued: 0, finishedAt: null },
        { ...replay('r-old', T - 2000), cursor: 10n, queued: 0, finishedAt: null },
      ]);
      expect((await other.replays(ref, 1)).map((one) => one.replayId)).toEqual(['r-new']);
      await deliveries.forget(ref);
    });

    test('claimReplay takes the oldest unfinished replay not leased; a leased one stays its holder’s', async () => {
      const ref = uniqueRef();
      const ids = ['first', 'second'].map((name) => `${name}-${ref.tenant}`);
      await deliveries.addReplay({
        ...ref,
        replayId: ids[1]!,
        after: 0n,
        until: 9n,
        requestedAt: T - 1000,
        eventId: null,
      });
      await deliveries.addReplay({
        ...ref,
        replayId: ids[0]!,
        after: 0n,
        until: 9n,
        requestedAt: T - 2000,
        eventId: null,
      });
      try {
        const first = await deliveries.claimReplay({ now: T, holder: 'holder-1', leaseUntil: T + 100 });
        expect(first).toMatchObject({ replayId: ids[0], cursor: 0n, finishedAt: null });
        const second = await other.claimReplay({ now: T, holder: 'holder-2', leaseUntil: T + 100 });
        expect(second?.replayId).toBe(ids[1]);
        expect(await other.claimReplay({ now: T + 99, holder: 'holder-3', leaseUntil: T + 200 })).toBeNull();
        const takenOver = await other.claimReplay({ now: T + 100, holder: 'holder-3', leaseUntil: T + 200 });
        expect(takenOver?.replayId).toBe(ids[0]);
        expect(
          await deliveries.advanceReplay(ids[0]!, 'holder-1', {
            deliveries: [delivery(ref, 'e1', { origin: ids[0]! })],
            cursor: 5n,
            leaseUntil: T + 300,
            finishedAt: null,
          }),
        ).toBe(false);
        expect(await deliveries.queuedCount(ref, 'record-1')).toBe(0);
      } finally {
        await deliveries.forget(ref);
      }
    });

    test('advanceReplay queues and moves the cursor for the holder only; a finished replay is done for good', async () => {
      const ref = uniqueRef();
      const replayId = `advance-${ref.tenant}`;
      const base = 2n ** 60n;
      await deliveries.addReplay({
        ...ref,
        replayId,
        after: base,
        until: base + 9n,
        requestedAt: T - 5000,
        eventId: null,
      });
      try {
        const claimed = await deliveries.claimReplay({ now: T, holder: 'holder-1', leaseUntil: T + 100 });
        expect(claimed).toMatchObject({ replayId, after: base, until: base + 9n, cursor: base });
        const step = (position: bigint) => delivery(ref, `e${position}`, { position, origin: replayId });
        expect(
          await other.advanceReplay(replayId, 'holder-2', {
            deliveries: [step(base + 1n)],
            cursor: base + 1n,
            leaseUntil: T + 1000,
            finishedAt: null,
          }),
        ).toBe(false);
        expect(await other.queuedCount(ref, 'record-1')).toBe(0);
        expect(
          await deliveries.advanceReplay(replayId, 'holder-1', {
            deliveries: [step(base + 1n), step(base + 3n)],
            cursor: base + 3n,
            leaseUntil: T + 1000,
            finishedAt: null,
          }),
        ).toBe(true);
        // The renewed lease holds past the first one's end.
        expect(await other.claimReplay({ now: T + 500, holder: 'holder-2', leaseUntil: T + 600 })).toBeNull();
        expect(await other.replays(ref, 1)).toEqual([
          expect.objectContaining({ replayId, cursor: base + 3n, queued: 2, finishedAt: null }),
        ]);
        const queued = await claimAt(other, ref, T, { holder: 'holder-2' });
        expect(queued.map(({ eventId, origin, position }) => ({ eventId, origin, position }))).toEqual([
          { eventId: `e${base + 1n}`, origin: replayId, position: base + 1n },
        ]);
        expect(
          await deliveries.advanceReplay(replayId, 'holder-1', {
            deliveries: [step(base + 9n)],
            cursor: base + 9n,
            leaseUntil: T + 1000,
            finishedAt: T + 20,
          }),
        ).toBe(true);
        expect(await other.replays(ref, 1)).toEqual([
          expect.objectContaining({ replayId, cursor: base + 9n, queued: 3, finishedAt: T + 20 }),
        ]);
        expect(
          await deliveries.advanceReplay(replayId, 'holder-1', {
            deliveries: [],
            cursor: base + 9n,
            leaseUntil: T + 2000,
            finishedAt: null,
          }),
        ).toBe(false);
        expect(
          await other.claimReplay({ now: T + 10 * LEASE, holder: 'holder-2', leaseUntil: T + 11 * LEASE }),
        ).toBeNull();
        expect((await other.replays(ref, 1))[0]?.finishedAt).toBe(T + 20);
      } finally {
        await deliveries.forget(ref);
      }
    });
  });
}
