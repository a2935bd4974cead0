import { MongoClient, type Document } from 'mongodb';
import { createMongoDeliveryStore } from '../../infra/deliveries/mongodb';
import type { DeliveryStore, NewDelivery, SubscriptionRef } from '../../infra/deliveries/port';
import { describeContract, mongoAvailability } from '../support/adapter-report';
import { dropMongoDatabase } from '../support/mongo';
import { deliveryStoreContract } from './delivery-store';

const url = process.env.MONGO_URL;

describeContract('delivery-store', 'mongodb', mongoAvailability(url), () => {
  deliveryStoreContract(async () => {
    if (!url) throw new Error('MONGO_URL not set');
    const database = `delivery_store_contract_${process.pid}_${Date.now()}`;
    return {
      open: () => createMongoDeliveryStore({ url, database, queryBudgetMs: 2000 }),
      cleanup: () => dropMongoDatabase(url, database),
    };
  });

  // The states a process leaves when it dies between two writes, made by hand: the next claim repairs them.
  describe('after a process died half-way', () => {
    const T = Date.parse('2026-11-23T10:00:00Z');
    const database = `delivery_store_repair_${process.pid}_${Date.now()}`;
    let store: DeliveryStore;
    let client: MongoClient;
    let subscriptionId = 0;

    beforeAll(async () => {
      store = await createMongoDeliveryStore({ url: url!, database, queryBudgetMs: 2000 });
      client = await MongoClient.connect(url!);
    });

    afterAll(async () => {
      await store.close();
      await client.close();
      await dropMongoDatabase(url!, database);
    });

    // Every document of the store is named by a string, but for leases.
    const collection = (name: string) =>
      client.db(database).collection<Document & { _id: string }>(`_delivery_${name}`);
    const newRef = (): SubscriptionRef => ({ tenant: 'repairs', subscriptionId: (subscriptionId += 1) });
    const delivery = (ref: SubscriptionRef, eventId: string, position: bigint): NewDelivery => ({
      ...ref,
      orderKey: 'record-1',
      eventId,
      eventType: 'record.created',
      position,
      origin: 'live',
      payload: '{}',
      dueAt: T,
    });
    const claimedAt = async (ref: SubscriptionRef, now: number, holder = 'alive') =>
      (await store.claim(ref, { now, max: 10, holder, leaseUntil: now + 100 })).map((one) => one.eventId);

    test('a delivery whose enqueue died before its lane is claimed all the same', async () => {
      const ref = newRef();
      await store.enqueue([delivery(ref, 'e1', 1n)]);
      await collection('lanes').deleteMany(ref);
      await collection('queue').updateMany(ref, { $set: { laned: false } });
      expect(await store.nextDue(ref, T)).toBe(T);
      expect(await claimedAt(ref, T)).toEqual(['e1']);
    });

    test('a key whose holder died before bringing its lane in line is repaired once the lease runs out', async () => {
      const ref = newRef();
      await store.enqueue([delivery(ref, 'e1', 1n), delivery(ref, 'e2', 2n)]);
      expect(await claimedAt(ref, T, 'dead')).toEqual(['e1']);
      // It settled e1, dropped the lane before e2 was queued (as it then saw it), and died holding the lease.
      await collection('queue').deleteOne({ ...ref, eventId: 'e1' });
      await collection('lanes').deleteMany(ref);
      expect(await claimedAt(ref, T + 50)).toEqual([]);
      expect(await store.nextDue(ref, T + 50)).toBe(T + 100);
      expect(await claimedAt(ref, T + 100)).toEqual(['e2']);
    });

    test('a lane with nothing queued goes at the next claim', async () => {
      const ref = newRef();
      const lane = { ...ref, orderKey: 'gone', dueAt: T - 1, queued: 0n };
      await collection('lanes').insertOne({
        _id: JSON.stringify(['key', ref.tenant, ref.subscriptionId, 'gone']),
        ...lane,
      });
      expect(await store.nextDue(ref, T)).toBe(T - 1);
      expect(await claimedAt(ref, T)).toEqual([]);
      expect(await store.nextDue(ref, T)).toBeNull();
      expect(await collection('lanes').countDocuments(ref)).toBe(0);
    });
  });
});
