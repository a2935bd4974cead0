import {
  MongoBulkWriteError,
  MongoClient,
  MongoServerError,
  ObjectId,
  type Collection,
  type Filter,
} from 'mongodb';
import { PlatformError } from '../../contracts/errors';
import { withinTimeLimit } from '../mongodb-time-limit';
import {
  assertPositions,
  type ClaimedDelivery,
  type DeliveryAttempt,
  type DeliveryStore,
  type NewDelivery,
  type Replay,
  type SubscriptionRef,
} from './port';

export interface MongoDeliveryStoreOptions {
  readonly url: string;
  readonly database: string;
  /** The longest one read may run (QUERY_BUDGET_MS), sent as its `maxTimeMS`. */
  readonly queryBudgetMs: number;
  /** Starts the collections' names; default `_delivery_`, never a read model's (those start with a letter). */
  readonly collectionPrefix?: string;
}

const DUPLICATE_KEY = 11000;
/** Keys of one batch brought in line at a time: each costs a few round trips. */
const PARALLEL_KEYS = 8;
/** Rounds of bringing a lane in line; a round that does not settle it met another writer of the lane. */
const SYNC_ROUNDS = 10;
/** Rounds of a claim that lost lanes to other claimers before it answers with what it has. */
const CLAIM_ROUNDS = 4;
/** Deliveries no lane may account for yet, brought in line per claim. */
const REPAIR_BATCH = 100;
/** Replays tried per claim. */
const REPLAY_CANDIDATES = 10;
/** How long `hurry` holds a lane; a lane it left held (it died) is taken over and repaired after this. */
const HURRY_LEASE_MS = 60_000;
const ATTEMPT_CURSOR = /^(\d{1,16}):([0-9a-f]{24})$/;

interface LaneKey {
  readonly tenant: string;
  readonly subscriptionId: number;
  readonly orderKey: string;
}

interface StoredDelivery extends LaneKey {
  /** The delivery's identity: subscription, event and origin. */
  readonly _id: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly position: bigint;
  readonly origin: string;
  readonly payload: string;
  readonly dueAt: number;
  /** Queue order among equal positions (milliseconds, then a counter, shifted into one int64). */
  readonly queued: bigint;
  readonly attempts: number;
  readonly firstAttemptAt: number | null;
  /** False until a lane is known to account for it: what a claim repairs after an enqueue that died half-way. */
  readonly laned: boolean;
}

/** A key with something queued: its head's due time and queue order, what claims sort and filter by. */
interface StoredLane extends LaneKey {
  readonly _id: string;
  readonly dueAt: number;
  readonly queued: bigint;
}

/**
 * A lane's or a replay's lease: one document per leased `lane` (a unique index), so taking one is an insert
 * only one claimer can make. A new lease is a new document (`_id`): deleting a lease that ran out deletes
 * that one, never a lease taken since.
 */
interface StoredLease {
  readonly _id: ObjectId;
  readonly lane: string;
  readonly kind: 'key' | 'replay';
  readonly tenant: string;
  readonly subscriptionId: number;
  /** The key's order key, or the replay's id. */
  readonly target: string;
  readonly holder: string;
  readonly leaseUntil: number;
}

type LeaseTarget = Omit<StoredLease, '_id' | 'holder' | 'leaseUntil'>;

interface StoredAttempt extends DeliveryAttempt {
  readonly _id?: ObjectId;
  readonly tenant: string;
  readonly subscriptionId: number;
}

interface StoredReplay extends Omit<Replay, 'replayId'> {
  readonly _id: string;
}

let lastQueued = 0n;

/** Increasing within the process (two enqueues in one millisecond keep their order); across processes, by time. */
function nextQueued(): bigint {
  const now = BigInt(Date.now()) << 20n;
  lastQueued = now > lastQueued ? now : lastQueued + 1n;
  return lastQueued;
}

function laneIdOf(key: LaneKey): string {
  return JSON.stringify(['key', key.tenant, key.subscriptionId, key.orderKey]);
}

function replayLaneOf(replayId: string): string {
  return JSON.stringify(['replay', replayId]);
}

function deliveryIdOf(delivery: NewDelivery): string {
  return JSON.stringify([delivery.tenant, delivery.subscriptionId, delivery.eventId, delivery.origin]);
}

function keyLease(key: LaneKey): LeaseTarget {
  const { tenant, subscriptionId, orderKey } = key;
  return { lane: laneIdOf(key), kind: 'key', tenant, subscriptionId, target: orderKey };
}

/**
 * Whether a write failed on a unique index (a bulk insert: every one that failed did); FerretDB reports some
 * as an internal error with SQLite's text.
 */
function isDuplicate(error: unknown): boolean {
  if (error instanceof MongoBulkWriteError) {
    const failed = [error.writeErrors].flat();
    return failed.length > 0 && failed.every((one) => one.code === DUPLICATE_KEY);
  }
  return (
    error instanceof MongoServerError &&
    (error.code === DUPLICATE_KEY || error.message.includes('UNIQUE constraint failed'))
  );
}

/** For an insert whose document may be there already (queued before, or another writer was first). */
function ignoreDuplicate(error: unknown): void {
  if (!isDuplicate(error)) throw error;
}

function distinctKeys(deliveries: readonly LaneKey[]): LaneKey[] {
  const keys = new Map<string, LaneKey>();
  for (const { tenant, subscriptionId, orderKey } of deliveries)
    keys.set(laneIdOf({ tenant, subscriptionId, orderKey }), { tenant, subscriptionId, orderKey });
  return [...keys.values()];
}

async function eachOf<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  for (let start = 0; start < items.length; start += PARALLEL_KEYS)
    await Promise.all(items.slice(start, start + PARALLEL_KEYS).map(work));
}

function toClaimed(stored: StoredDelivery, leaseUntil: number): ClaimedDelivery {
  return {
    tenant: stored.tenant,
    subscriptionId: stored.subscriptionId,
    orderKey: stored.orderKey,
    eventId: stored.eventId,
    eventType: stored.eventType,
    position: stored.position,
    origin: stored.origin,
    payload: stored.payload,
    dueAt: stored.dueAt,
    attempts: stored.attempts,
    firstAttemptAt: stored.firstAttemptAt,
    leaseUntil,
  };
}

function toAttempt(stored: StoredAttempt): DeliveryAttempt {
  return {
    eventId: stored.eventId,
    eventType: stored.eventType,
    position: stored.position,
    origin: stored.origin,
    attempt: stored.attempt,
    at: stored.at,
    status: stored.status,
    latencyMs: stored.latencyMs,
    responseStatus: stored.responseStatus,
    responseBody: stored.responseBody,
    error: stored.error,
    nextAttemptAt: stored.nextAttemptAt,
  };
}

function toReplay({ _id, ...replay }: StoredReplay): Replay {
  return {
    tenant: replay.tenant,
    subscriptionId: replay.subscriptionId,
    replayId: _id,
    after: replay.after,
    until: replay.until,
    eventId: replay.eventId ?? null,
    cursor: replay.cursor,
    queued: replay.queued,
    requestedAt: replay.requestedAt,
    finishedAt: replay.finishedAt,
  };
}

/**
 * The delivery store in MongoDB, shared by every integrator replica, using only what FerretDB also makes
 * atomic: an insert against a unique index and a delete (its updates read, then rewrite the whole document,
 * so no update is a compare-and-set there, and concurrent updates of one document can undo each other).
 *
 * - Deliveries are documents named by subscription, event and origin, so queuing one again is a duplicate
 *   insert. A key's lane holds its head's due time; claims find due heads through the lanes.
 * - A lease is a document of its own (`StoredLease`); whoever holds a key's lease is the only one to change
 *   its deliveries. Settling checks the lease is still the holder's, then acts, then releases it last: one
 *   that ran out mid-way is taken over (the delivery goes again: at least once), and a holder that died
 *   leaves its lease behind, which the next claim takes over and so repairs the lane.
 * - A lane's due time is written by its lease holder (exactly) and by enqueues (only earlier). Writes may be
 *   undone by a concurrent one (FerretDB), so every writer reads the head again after writing and goes round
 *   until it reads nothing to do: the last writer has seen every delivery queued before its last read.
 * - An enqueue inserts its deliveries as not `laned`, brings their lanes in line, then marks them: if it dies
 *   in between, the next claim of the subscription finds the unmarked ones and brings their lanes in line.
 *   A lane left without deliveries (a claim's lease taken, its holder gone) is deleted by the claim that finds
 *   it so.
 */
export async function createMongoDeliveryStore(options: MongoDeliveryStoreOptions): Promise<DeliveryStore> {
  const client = new MongoClient(options.url, { ignoreUndefined: true, useBigInt64: true });
  await client.connect();
  const db = client.db(options.database);
  const prefix = options.collectionPrefix ?? '_delivery_';
  const deliveries: Collection<StoredDelivery> = db.collection<StoredDelivery>(`${prefix}queue`);
  const lanes: Collection<StoredLane> = db.collection<StoredLane>(`${prefix}lanes`);
  const leases: Collection<StoredLease> = db.collection<StoredLease>(`${prefix}leases`);
  const attempts: Collection<StoredAttempt> = db.collection<StoredAttempt>(`${prefix}attempts`);
  const replays: Collection<StoredReplay> = db.collection<StoredReplay>(`${prefix}replays`);
  try {
    await deliveries.createIndex(
      { tenant: 1, subscriptionId: 1, orderKey: 1, position: 1, queued: 1 },
      { name: 'key_order' },
    );
    await deliveries.createIndex({ tenant: 1, subscriptionId: 1, laned: 1 }, { name: 'unlaned' });
    await lanes.createIndex({ tenant: 1, subscriptionId: 1, dueAt: 1, queued: 1 }, { name: 'due' });
    await leases.createIndex({ lane: 1 }, { name: 'lane', unique: true });
    await leases.createIndex({ tenant: 1, subscriptionId: 1, kind: 1 }, { name: 'subscription' });
    await leases.createIndex({ kind: 1, leaseUntil: 1 }, { name: 'running' });
    await attempts.createIndex({ tenant: 1, subscriptionId: 1, at: 1 }, { name: 'time' });
    await attempts.createIndex({ tenant: 1, subscriptionId: 1, eventId: 1, at: 1 }, { name: 'event' });
    await attempts.createIndex({ tenant: 1, subscriptionId: 1, status: 1, at: 1 }, { name: 'status' });
    await attempts.createIndex({ at: 1 }, { name: 'prune' });
    await replays.createIndex({ tenant: 1, subscriptionId: 1, requestedAt: 1 }, { name: 'subscription' });
    await replays.createIndex({ finishedAt: 1, requestedAt: 1 }, { name: 'unfinished' });
  } catch (error) {
    await client.close();
    throw error;
  }

  const maxTimeMS = options.queryBudgetMs;
  const read = <T>(query: Promise<T>): Promise<T> =>
    withinTimeLimit(
      query,
      () => new PlatformError('unavailable', `the delivery store did not answer within ${maxTimeMS} ms`),
    );

  const headOf = async (key: LaneKey, withPayload: boolean): Promise<StoredDelivery | null> => {
    const { tenant, subscriptionId, orderKey } = key;
    const [head] = await read(
      deliveries
        .find(
          { tenant, subscriptionId, orderKey },
          { maxTimeMS, ...(withPayload ? {} : { projection: { payload: 0 } }) },
        )
        .sort({ position: 1, queued: 1 })
        .limit(1)
        .toArray(),
    );
    return head ?? null;
  };

  /**
   * Brings the key's lane in line with its head, and answers the head. `held` (under the key's lease): the
   * lane names the head exactly, and goes when nothing is queued; otherwise the lane is only ever made due
   * earlier (one due too early costs a claim a look; one due too late would hold the head back).
   */
  const syncLane = async (
    key: LaneKey,
    held: boolean,
    withPayload = false,
  ): Promise<StoredDelivery | null> => {
    const _id = laneIdOf(key);
    for (let round = 0; round < SYNC_ROUNDS; round++) {
      const [head, lane] = await Promise.all([
        headOf(key, withPayload),
        read(lanes.findOne({ _id }, { maxTimeMS })),
      ]);
      if (!head) {
        if (!lane || !held) return null;
        await lanes.deleteOne({ _id });
        continue;
      }
      const inLine = held
        ? lane?.dueAt === head.dueAt && lane.queued === head.queued
        : lane !== null && lane.dueAt <= head.dueAt;
      if (inLine) return head;
      const placed = { dueAt: head.dueAt, queued: head.queued };
      if (lane) await lanes.updateOne({ _id }, { $set: placed });
      else await lanes.insertOne({ _id, ...key, ...placed }).catch(ignoreDuplicate);
    }
    throw new Error(`the lane ${_id} changed under every one of ${SYNC_ROUNDS} rounds`);
  };

  /**
   * Brings the lanes of the deliveries in line, then marks the deliveries as accounted for. On FerretDB the
   * mark rewrites each unmarked document as read: a settlement of one of them written in between (it was
   * claimed, tried and settled within this call) is undone, so it is tried once more than it would be.
   */
  const accountFor = async (queued: readonly StoredDelivery[]): Promise<void> => {
    await eachOf(distinctKeys(queued), async (key) => {
      await syncLane(key, false);
    });
    const ids = queued.map((delivery) => delivery._id);
    await deliveries.updateMany({ _id: { $in: ids }, laned: false }, { $set: { laned: true } });
  };

  const enqueue = async (batch: readonly NewDelivery[]): Promise<void> => {
    assertPositions(...batch.map((delivery) => delivery.position));
    if (batch.length === 0) return;
    const documents = batch.map((delivery): StoredDelivery => ({
      _id: deliveryIdOf(delivery),
      tenant: delivery.tenant,
      subscriptionId: delivery.subscriptionId,
      orderKey: delivery.orderKey,
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      position: delivery.position,
      origin: delivery.origin,
      payload: delivery.payload,
      dueAt: delivery.dueAt,
      queued: nextQueued(),
      attempts: 0,
      firstAttemptAt: null,
      laned: false,
    }));
    // A duplicate is a delivery queued before; its lane is brought in line all the same.
    await deliveries.insertMany(documents, { ordered: false }).catch(ignoreDuplicate);
    await accountFor(documents);
  };

  const repairUnlaned = async (ref: SubscriptionRef): Promise<void> => {
    const unlaned = await read(
      deliveries
        .find(
          { tenant: ref.tenant, subscriptionId: ref.subscriptionId, laned: false },
          { maxTimeMS, projection: { payload: 0 } },
        )
        .limit(REPAIR_BATCH)
        .toArray(),
    );
    if (unlaned.length > 0) await accountFor(unlaned);
  };

  const leasesOf = (ref: SubscriptionRef): Promise<StoredLease[]> =>
    read(
      leases
        .find({ tenant: ref.tenant, subscriptionId: ref.subscriptionId, kind: 'key' }, { maxTimeMS })
        .toArray(),
    );

  /** Takes the lease of `target` until `leaseUntil` unless one runs at `now`; answers the lease's id. */
  const takeLease = async (
    target: LeaseTarget,
    holder: string,
    leaseUntil: number,
    now: number,
  ): Promise<ObjectId | null> => {
    for (let round = 0; round < 2; round++) {
      const _id = new ObjectId();
      try {
        await leases.insertOne({ _id, ...target, holder, leaseUntil });
        return _id;
      } catch (error) {
        if (!isDuplicate(error)) throw error;
      }
      const current = await read(leases.findOne({ lane: target.lane }, { maxTimeMS }));
      if (current && current.leaseUntil > now) return null;
      if (current) await leases.deleteOne({ _id: current._id, leaseUntil: { $lte: now } });
    }
    return null;
  };

  const releaseLease = async (_id: ObjectId): Promise<void> => {
    await leases.deleteOne({ _id });
  };

  return {
    enqueue,

    async queuedCount(ref, orderKey) {
      const { tenant, subscriptionId } = ref;
      return read(
        deliveries.countDocuments(
          { tenant, subscriptionId, ...(orderKey !== undefined && { orderKey }) },
          { maxTimeMS },
        ),
      );
    },

    async claim(ref, { now, max, holder, leaseUntil }) {
      if (max <= 0) return [];
      await repairUnlaned(ref);
      const claimed: StoredDelivery[] = [];
      const held = await leasesOf(ref);
      const tried = held.filter((lease) => lease.leaseUntil > now).map((lease) => lease.lane);
      // Claims the key's head when it is due, else leaves the lane in line. A lease that ran out is looked
      // at whatever its lane says: its holder may have died before bringing the lane in line.
      const tryKey = async (key: LaneKey): Promise<void> => {
        const lease = await takeLease(keyLease(key), holder, leaseUntil, now);
        if (!lease) return;
        const head = await syncLane(key, true, true);
        if (head && head.dueAt <= now && claimed.length < max) claimed.push(head);
        else await releaseLease(lease);
      };
      const ranOut = held.filter((lease) => lease.leaseUntil <= now);
      tried.push(...ranOut.map((lease) => lease.lane));
      await eachOf(ranOut, (lease) =>
        tryKey({ tenant: lease.tenant, subscriptionId: lease.subscriptionId, orderKey: lease.target }),
      );
      for (let round = 0; round < CLAIM_ROUNDS && claimed.length < max; round++) {
        const wanted = max - claimed.length;
        const due = await read(
          lanes
            .find(
              {
                tenant: ref.tenant,
                subscriptionId: ref.subscriptionId,
                dueAt: { $lte: now },
                _id: { $nin: tried },
              },
              { maxTimeMS },
            )
            .sort({ dueAt: 1, queued: 1 })
            .limit(wanted)
            .toArray(),
        );
        tried.push(...due.map((found) => found._id));
        await Promise.all(due.map(tryKey));
        if (due.length < wanted) break;
      }
      return claimed
        .sort((a, b) => a.dueAt - b.dueAt || (a.queued < b.queued ? -1 : a.queued > b.queued ? 1 : 0))
        .map((head) => toClaimed(head, leaseUntil));
    },

    async nextDue(ref, now) {
      const { tenant, subscriptionId } = ref;
      const [held, unlaned] = await Promise.all([
        leasesOf(ref),
        read(
          deliveries
            .find({ tenant, subscriptionId, laned: false }, { maxTimeMS, projection: { dueAt: 1 } })
            .sort({ dueAt: 1 })
            .limit(1)
            .toArray(),
        ),
      ]);
      const running = held.filter((lease) => lease.leaseUntil > now).map((lease) => lease.lane);
      const [earliest] = await read(
        lanes
          .find({ tenant, subscriptionId, _id: { $nin: running } }, { maxTimeMS, projection: { dueAt: 1 } })
          .sort({ dueAt: 1 })
          .limit(1)
          .toArray(),
      );
      // A lease counts from its end; one that has run out is due now (a claim takes it over and repairs).
      const times = [
        ...held.map((lease) => lease.leaseUntil),
        ...unlaned.map((delivery) => delivery.dueAt),
        ...(earliest ? [earliest.dueAt] : []),
      ];
      return times.length > 0 ? Math.min(...times) : null;
    },

    async settle(claimed, holder, attempt, settlement) {
      assertPositions(attempt.position);
      const { tenant, subscriptionId } = claimed;
      await attempts.insertOne({ ...attempt, tenant, subscriptionId });
      const lease = await read(
        leases.findOne(
          { lane: laneIdOf(claimed), holder, leaseUntil: claimed.leaseUntil },
          { maxTimeMS, projection: { _id: 1 } },
        ),
      );
      if (!lease) return;
      const _id = deliveryIdOf(claimed);
      if (settlement.kind === 'retry') {
        await deliveries.updateOne(
          { _id },
          {
            $set: {
              dueAt: settlement.dueAt,
              attempts: claimed.attempts + 1,
              firstAttemptAt: claimed.firstAttemptAt ?? attempt.at,
            },
          },
        );
      } else {
        await deliveries.deleteOne({ _id });
        const next = await headOf(claimed, false);
        if (next && next.dueAt > attempt.at)
          await deliveries.updateOne({ _id: next._id }, { $set: { dueAt: attempt.at } });
      }
      await syncLane(claimed, true);
      await releaseLease(lease._id);
    },

    async hurry(ref, now) {
      const { tenant, subscriptionId } = ref;
      const running = (await leasesOf(ref))
        .filter((lease) => lease.leaseUntil > now)
        .map((lease) => lease.lane);
      const waiting = await read(
        lanes
          .find({ tenant, subscriptionId, dueAt: { $gt: now }, _id: { $nin: running } }, { maxTimeMS })
          .toArray(),
      );
      let hurried = 0;
      await eachOf(waiting, async (found) => {
        const key = { tenant, subscriptionId, orderKey: found.orderKey };
        const lease = await takeLease(keyLease(key), 'hurry', now + HURRY_LEASE_MS, now);
        if (!lease) return;
        const head = await headOf(key, false);
        if (head && head.dueAt > now) {
          await deliveries.updateOne({ _id: head._id }, { $set: { dueAt: now } });
          hurried += 1;
        }
        await syncLane(key, true);
        await releaseLease(lease);
      });
      return hurried;
    },

    async subscriptionsWithQueue() {
      const groups = await read(
        deliveries
          .aggregate<{ _id: SubscriptionRef }>(
            [{ $group: { _id: { tenant: '$tenant', subscriptionId: '$subscriptionId' } } }],
            { maxTimeMS },
          )
          .toArray(),
      );
      return groups.map(({ _id }) => ({ tenant: _id.tenant, subscriptionId: _id.subscriptionId }));
    },

    async forget(ref) {
      const filter = { tenant: ref.tenant, subscriptionId: ref.subscriptionId };
      // The queue first: a claim meanwhile finds no head to take.
      await deliveries.deleteMany(filter);
      await lanes.deleteMany(filter);
      await replays.deleteMany(filter);
      await attempts.deleteMany(filter);
      await leases.deleteMany(filter);
    },

    async deliveredSince(ref, since) {
      const found = await read(
        attempts.findOne(
          {
            tenant: ref.tenant,
            subscriptionId: ref.subscriptionId,
            status: 'delivered',
            at: { $gte: since },
          },
          { maxTimeMS, projection: { _id: 1 } },
        ),
      );
      return found !== null;
    },

    async attempts(query) {
      if (!Number.isSafeInteger(query.limit) || query.limit < 1)
        throw new PlatformError('validation_failed', 'limit is a whole number of at least 1');
      const match = query.before === undefined ? undefined : ATTEMPT_CURSOR.exec(query.before);
      if (match === null)
        throw new PlatformError('validation_failed', 'before is not a page of this attempt log');
      const filter: Filter<StoredAttempt> = {
        tenant: query.tenant,
        subscriptionId: query.subscriptionId,
        ...(query.eventId === undefined ? {} : { eventId: query.eventId }),
        ...(query.status === undefined ? {} : { status: query.status }),
        ...(match
          ? {
              $or: [
                { at: { $lt: Number(match[1]) } },
                { at: Number(match[1]), _id: { $lt: new ObjectId(match[2]) } },
              ],
            }
          : {}),
      };
      const found = await read(
        attempts
          .find(filter, { maxTimeMS })
          .sort({ at: -1, _id: -1 })
          .limit(query.limit + 1)
          .toArray(),
      );
      const page = found.slice(0, query.limit).map((stored) => ({
        ...toAttempt(stored),
        id: stored._id!.toHexString(),
      }));
      const last = page[page.length - 1];
      return { attempts: page, next: found.length > query.limit && last ? `${last.at}:${last.id}` : null };
    },

    async lastAttemptOf(ref, eventId) {
      const [newest] = await read(
        attempts
          .find({ tenant: ref.tenant, subscriptionId: ref.subscriptionId, eventId }, { maxTimeMS })
          .sort({ at: -1, _id: -1 })
          .limit(1)
          .toArray(),
      );
      return newest ? toAttempt(newest) : null;
    },

    async prune(before) {
      const { deletedCount } = await attempts.deleteMany({ at: { $lt: before } });
      const finished = await read(
        replays.find({ finishedAt: { $lt: before } }, { maxTimeMS, projection: { _id: 1 } }).toArray(),
      );
      const ids = finished.map((replay) => replay._id);
      if (ids.length > 0) {
        await replays.deleteMany({ _id: { $in: ids } });
        // A holder that died between finishing a replay and releasing it left its lease behind.
        await leases.deleteMany({ lane: { $in: ids.map(replayLaneOf) } });
      }
      return deletedCount;
    },

    async addReplay(replay) {
      assertPositions(replay.after, replay.until);
      await replays
        .insertOne({
          _id: replay.replayId,
          tenant: replay.tenant,
          subscriptionId: replay.subscriptionId,
          after: replay.after,
          until: replay.until,
          eventId: replay.eventId,
          cursor: replay.after,
          queued: 0,
          requestedAt: replay.requestedAt,
          finishedAt: null,
        })
        .catch(ignoreDuplicate);
    },

    async replays(ref, limit) {
      const found = await read(
        replays
          .find({ tenant: ref.tenant, subscriptionId: ref.subscriptionId }, { maxTimeMS })
          .sort({ requestedAt: -1, _id: -1 })
          .limit(limit)
          .toArray(),
      );
      return found.map(toReplay);
    },

    async claimReplay({ now, holder, leaseUntil }) {
      const running = await read(
        leases
          .find({ kind: 'replay', leaseUntil: { $gt: now } }, { maxTimeMS, projection: { target: 1 } })
          .toArray(),
      );
      const candidates = await read(
        replays
          .find({ finishedAt: null, _id: { $nin: running.map((lease) => lease.target) } }, { maxTimeMS })
          .sort({ requestedAt: 1, _id: 1 })
          .limit(REPLAY_CANDIDATES)
          .toArray(),
      );
      for (const candidate of candidates) {
        const target: LeaseTarget = {
          lane: replayLaneOf(candidate._id),
          kind: 'replay',
          tenant: candidate.tenant,
          subscriptionId: candidate.subscriptionId,
          target: candidate._id,
        };
        const lease = await takeLease(target, holder, leaseUntil, now);
        if (!lease) continue;
        // Read under the lease: the previous holder may have moved the cursor since the candidates were read.
        const current = await read(replays.findOne({ _id: candidate._id }, { maxTimeMS }));
        if (current?.finishedAt === null) return toReplay(current);
        await releaseLease(lease);
      }
      return null;
    },

    async advanceReplay(replayId, holder, { deliveries: batch, cursor, leaseUntil, finishedAt }) {
      assertPositions(cursor);
      const [lease, replay] = await Promise.all([
        read(leases.findOne({ lane: replayLaneOf(replayId), holder }, { maxTimeMS })),
        read(replays.findOne({ _id: replayId }, { maxTimeMS, projection: { finishedAt: 1 } })),
      ]);
      if (!lease || replay?.finishedAt !== null) return false;
      // In this order, a crash leaves the cursor behind deliveries already queued: the next holder queues
      // them again, and the repeats are ignored.
      await enqueue(batch);
      await replays.updateOne(
        { _id: replayId },
        { $set: { cursor, finishedAt }, $inc: { queued: batch.length } },
      );
      if (finishedAt === null) await leases.updateOne({ _id: lease._id }, { $set: { leaseUntil } });
      else await releaseLease(lease._id);
      return true;
    },

    async close() {
      await client.close();
    },
  };
}
