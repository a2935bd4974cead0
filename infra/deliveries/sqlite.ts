import { PlatformError } from '../../contracts/errors';
import { openSqliteFile } from '../sqlite-file';
import {
  assertPositions,
  type AttemptStatus,
  type ClaimedDelivery,
  type DeliveryAttempt,
  type DeliveryStore,
  type NewDelivery,
  type Replay,
  type Settlement,
  type SubscriptionRef,
} from './port';

export interface SqliteDeliveryStoreOptions {
  /** Database file; its folder is created when missing. `:memory:` for a throw-away store. */
  readonly path: string;
  /**
   * `NORMAL` (the default) keeps every committed delivery through a process crash, `FULL` through a power
   * loss too: the platform passes SQLITE_SYNCHRONOUS, so the queue is as durable as the events it delivers.
   */
  readonly synchronous?: 'NORMAL' | 'FULL';
}

/**
 * Deliveries by key (`position, seq` is the queue order), one lane per key with a queued delivery: its head
 * (`head_seq`, `due_at`, kept exact by every write in the same transaction) and the key's lease. Claims read
 * the lanes, so a key's backlog behind its head costs them nothing. Attempts and replays are rows of their own.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS deliveries (
  seq INTEGER PRIMARY KEY,
  tenant TEXT NOT NULL,
  subscription_id INTEGER NOT NULL,
  order_key TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  position INTEGER NOT NULL,
  origin TEXT NOT NULL,
  payload TEXT NOT NULL,
  due_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  first_attempt_at INTEGER,
  UNIQUE (tenant, subscription_id, event_id, origin)
);
CREATE INDEX IF NOT EXISTS deliveries_by_key ON deliveries (tenant, subscription_id, order_key, position, seq);
CREATE TABLE IF NOT EXISTS delivery_lanes (
  tenant TEXT NOT NULL,
  subscription_id INTEGER NOT NULL,
  order_key TEXT NOT NULL,
  head_seq INTEGER NOT NULL,
  due_at INTEGER NOT NULL,
  holder TEXT,
  lease_until INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, subscription_id, order_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS delivery_lanes_by_due ON delivery_lanes (tenant, subscription_id, due_at, head_seq);
CREATE INDEX IF NOT EXISTS delivery_lanes_by_lease ON delivery_lanes (tenant, subscription_id, lease_until);
CREATE TABLE IF NOT EXISTS delivery_attempts (
  seq INTEGER PRIMARY KEY,
  tenant TEXT NOT NULL,
  subscription_id INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  position INTEGER NOT NULL,
  origin TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  at INTEGER NOT NULL,
  status TEXT NOT NULL,
  latency_ms INTEGER NOT NULL,
  response_status INTEGER,
  response_body TEXT NOT NULL,
  error TEXT,
  next_attempt_at INTEGER
);
CREATE INDEX IF NOT EXISTS delivery_attempts_by_time ON delivery_attempts (tenant, subscription_id, at, seq);
CREATE INDEX IF NOT EXISTS delivery_attempts_by_event
  ON delivery_attempts (tenant, subscription_id, event_id, at, seq);
CREATE INDEX IF NOT EXISTS delivery_attempts_by_status
  ON delivery_attempts (tenant, subscription_id, status, at, seq);
CREATE INDEX IF NOT EXISTS delivery_attempts_for_prune ON delivery_attempts (at);
CREATE TABLE IF NOT EXISTS delivery_replays (
  replay_id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  subscription_id INTEGER NOT NULL,
  after INTEGER NOT NULL,
  until INTEGER NOT NULL,
  event_id TEXT,
  cursor INTEGER NOT NULL,
  queued INTEGER NOT NULL DEFAULT 0,
  requested_at INTEGER NOT NULL,
  finished_at INTEGER,
  holder TEXT,
  lease_until INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS delivery_replays_by_subscription
  ON delivery_replays (tenant, subscription_id, requested_at, replay_id);
CREATE INDEX IF NOT EXISTS delivery_replays_unfinished ON delivery_replays (finished_at, requested_at, replay_id);
`;

/** Positions are read as text: better-sqlite3 reads an INTEGER past 2^53 as an inexact number. */
const DELIVERY_COLUMNS = `d.seq, d.tenant, d.subscription_id, d.order_key, d.event_id, d.event_type,
  CAST(d.position AS TEXT) AS position, d.origin, d.payload, d.due_at, d.attempts, d.first_attempt_at`;
const ATTEMPT_COLUMNS = `seq, event_id, event_type, CAST(position AS TEXT) AS position, origin, attempt, at,
  status, latency_ms, response_status, response_body, error, next_attempt_at`;
const REPLAY_COLUMNS = `replay_id, tenant, subscription_id, CAST(after AS TEXT) AS after,
  CAST(until AS TEXT) AS until, event_id, CAST(cursor AS TEXT) AS cursor, queued, requested_at, finished_at`;

/** Before every attempt: the first page's `before`. */
const NEWEST = { at: Number.MAX_SAFE_INTEGER, seq: 2n ** 63n - 1n };
const ATTEMPT_CURSOR = /^(\d{1,16}):(\d{1,19})$/;

interface DeliveryRow {
  readonly seq: number;
  readonly tenant: string;
  readonly subscription_id: number;
  readonly order_key: string;
  readonly event_id: string;
  readonly event_type: string;
  readonly position: string;
  readonly origin: string;
  readonly payload: string;
  readonly due_at: number;
  readonly attempts: number;
  readonly first_attempt_at: number | null;
}

interface AttemptRow {
  readonly seq: number;
  readonly event_id: string;
  readonly event_type: string;
  readonly position: string;
  readonly origin: string;
  readonly attempt: number;
  readonly at: number;
  readonly status: AttemptStatus;
  readonly latency_ms: number;
  readonly response_status: number | null;
  readonly response_body: string;
  readonly error: string | null;
  readonly next_attempt_at: number | null;
}

interface ReplayRow {
  readonly replay_id: string;
  readonly tenant: string;
  readonly subscription_id: number;
  readonly after: string;
  readonly until: string;
  readonly event_id: string | null;
  readonly cursor: string;
  readonly queued: number;
  readonly requested_at: number;
  readonly finished_at: number | null;
}

interface LaneKey {
  readonly tenant: string;
  readonly subscriptionId: number;
  readonly orderKey: string;
}

function toAttempt(row: AttemptRow): DeliveryAttempt & { readonly id: string } {
  return {
    id: String(row.seq),
    eventId: row.event_id,
    eventType: row.event_type,
    position: BigInt(row.position),
    origin: row.origin,
    attempt: row.attempt,
    at: row.at,
    status: row.status,
    latencyMs: row.latency_ms,
    responseStatus: row.response_status,
    responseBody: row.response_body,
    error: row.error,
    nextAttemptAt: row.next_attempt_at,
  };
}

function toReplay(row: ReplayRow): Replay {
  return {
    tenant: row.tenant,
    subscriptionId: row.subscription_id,
    replayId: row.replay_id,
    after: BigInt(row.after),
    until: BigInt(row.until),
    eventId: row.event_id,
    cursor: BigInt(row.cursor),
    queued: row.queued,
    requestedAt: row.requested_at,
    finishedAt: row.finished_at,
  };
}

function attemptCursor(before: string | undefined): { at: number; seq: bigint } {
  if (before === undefined) return NEWEST;
  const match = ATTEMPT_CURSOR.exec(before);
  if (!match) throw new PlatformError('validation_failed', 'before is not a page of this attempt log');
  return { at: Number(match[1]), seq: BigInt(match[2]!) };
}

/**
 * The delivery store in a SQLite file. Every operation is one immediate transaction, so the processes of a
 * host that share the file (WAL, busy timeout) see a claim, a settlement or a replay's step whole or not at
 * all, and a lease is a column compared and set inside one.
 */
export function createSqliteDeliveryStore(options: SqliteDeliveryStoreOptions): DeliveryStore {
  const db = openSqliteFile(options.path, options.synchronous ?? 'NORMAL');
  try {
    db.exec(SCHEMA);
  } catch (error) {
    db.close();
    throw error;
  }

  const insertDelivery = db.prepare<[string, number, string, string, string, bigint, string, string, number]>(
    `INSERT INTO deliveries (tenant, subscription_id, order_key, event_id, event_type, position, origin,
       payload, due_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (tenant, subscription_id, event_id, origin) DO NOTHING`,
  );
  const selectHead = db.prepare<[string, number, string], { seq: number; due_at: number }>(
    `SELECT seq, due_at FROM deliveries WHERE tenant = ? AND subscription_id = ? AND order_key = ?
     ORDER BY position, seq LIMIT 1`,
  );
  const upsertLane = db.prepare<[string, number, string, number, number]>(
    `INSERT INTO delivery_lanes (tenant, subscription_id, order_key, head_seq, due_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (tenant, subscription_id, order_key)
     DO UPDATE SET head_seq = excluded.head_seq, due_at = excluded.due_at`,
  );
  const deleteLane = db.prepare<[string, number, string]>(
    'DELETE FROM delivery_lanes WHERE tenant = ? AND subscription_id = ? AND order_key = ?',
  );
  const countQueued = db
    .prepare<[string, number], number>(
      'SELECT count(*) FROM deliveries WHERE tenant = ? AND subscription_id = ?',
    )
    .pluck();
  const countQueuedOfKey = db
    .prepare<[string, number, string], number>(
      'SELECT count(*) FROM deliveries WHERE tenant = ? AND subscription_id = ? AND order_key = ?',
    )
    .pluck();
  const selectClaimable = db.prepare<[string, number, number, number, number], DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM delivery_lanes l JOIN deliveries d ON d.seq = l.head_seq
     WHERE l.tenant = ? AND l.subscription_id = ? AND l.due_at <= ? AND l.lease_until <= ?
     ORDER BY l.due_at, l.head_seq LIMIT ?`,
  );
  const leaseLane = db.prepare<[string, number, string, number, string]>(
    `UPDATE delivery_lanes SET holder = ?, lease_until = ?
     WHERE tenant = ? AND subscription_id = ? AND order_key = ?`,
  );
  const selectHeld = db
    .prepare<[string, number, string, string, number], number>(
      `SELECT 1 FROM delivery_lanes
       WHERE tenant = ? AND subscription_id = ? AND order_key = ? AND holder = ? AND lease_until = ?`,
    )
    .pluck();
  const releaseLane = db.prepare<[string, number, string]>(
    `UPDATE delivery_lanes SET holder = NULL, lease_until = 0
     WHERE tenant = ? AND subscription_id = ? AND order_key = ?`,
  );
  const deleteDelivery = db.prepare<[string, number, string, string]>(
    'DELETE FROM deliveries WHERE tenant = ? AND subscription_id = ? AND event_id = ? AND origin = ?',
  );
  const scheduleRetry = db.prepare<[number, number, number, string, number, string, string]>(
    `UPDATE deliveries SET due_at = ?, attempts = ?, first_attempt_at = ?
     WHERE tenant = ? AND subscription_id = ? AND event_id = ? AND origin = ?`,
  );
  const dueNoLaterThan = db.prepare<[number, number, number]>(
    'UPDATE deliveries SET due_at = ? WHERE seq = ? AND due_at > ?',
  );
  const selectEarliestUnleased = db
    .prepare<[string, number, number], number>(
      `SELECT due_at FROM delivery_lanes WHERE tenant = ? AND subscription_id = ? AND lease_until <= ?
       ORDER BY due_at LIMIT 1`,
    )
    .pluck();
  const selectEarliestLeased = db
    .prepare<[string, number, number], number | null>(
      `SELECT MIN(MAX(due_at, lease_until)) FROM delivery_lanes
       WHERE tenant = ? AND subscription_id = ? AND lease_until > ?`,
    )
    .pluck();
  const hurryHeads = db.prepare<[number, string, number, number, number]>(
    `UPDATE deliveries SET due_at = ? WHERE seq IN (
       SELECT head_seq FROM delivery_lanes
       WHERE tenant = ? AND subscription_id = ? AND due_at > ? AND lease_until <= ?)`,
  );
  const hurryLanes = db.prepare<[number, string, number, number, number]>(
    `UPDATE delivery_lanes SET due_at = ?
     WHERE tenant = ? AND subscription_id = ? AND due_at > ? AND lease_until <= ?`,
  );
  const selectSubscriptions = db.prepare<[], { tenant: string; subscription_id: number }>(
    'SELECT DISTINCT tenant, subscription_id FROM delivery_lanes ORDER BY tenant, subscription_id',
  );
  const forgetStatements = ['deliveries', 'delivery_lanes', 'delivery_attempts', 'delivery_replays'].map(
    (table) => db.prepare<[string, number]>(`DELETE FROM ${table} WHERE tenant = ? AND subscription_id = ?`),
  );
  const insertAttempt = db.prepare<
    [
      string,
      number,
      string,
      string,
      bigint,
      string,
      number,
      number,
      string,
      number,
      number | null,
      string,
      string | null,
      number | null,
    ]
  >(
    `INSERT INTO delivery_attempts (tenant, subscription_id, event_id, event_type, position, origin, attempt,
       at, status, latency_ms, response_status, response_body, error, next_attempt_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const selectDeliveredSince = db
    .prepare<[string, number, number], number>(
      `SELECT 1 FROM delivery_attempts
       WHERE tenant = ? AND subscription_id = ? AND status = 'delivered' AND at >= ? LIMIT 1`,
    )
    .pluck();
  // One statement per filter, each served by its own index: (at, seq) below the cursor, newest first.
  const pageWhere = (filters: string) => `
    SELECT ${ATTEMPT_COLUMNS} FROM delivery_attempts
    WHERE tenant = @tenant AND subscription_id = @subscriptionId ${filters}
      AND (at < @at OR (at = @at AND seq < @seq))
    ORDER BY at DESC, seq DESC LIMIT @limit`;
  interface PageParameters {
    tenant: string;
    subscriptionId: number;
    eventId?: string;
    status?: AttemptStatus;
    at: number;
    seq: bigint;
    limit: number;
  }
  const selectPage = {
    all: db.prepare<PageParameters, AttemptRow>(pageWhere('')),
    event: db.prepare<PageParameters, AttemptRow>(pageWhere('AND event_id = @eventId')),
    status: db.prepare<PageParameters, AttemptRow>(pageWhere('AND status = @status')),
    both: db.prepare<PageParameters, AttemptRow>(pageWhere('AND event_id = @eventId AND status = @status')),
  };
  const selectLastAttempt = db.prepare<[string, number, string], AttemptRow>(
    `SELECT ${ATTEMPT_COLUMNS} FROM delivery_attempts WHERE tenant = ? AND subscription_id = ? AND event_id = ?
     ORDER BY at DESC, seq DESC LIMIT 1`,
  );
  const pruneAttempts = db.prepare<[number]>('DELETE FROM delivery_attempts WHERE at < ?');
  const pruneReplays = db.prepare<[number]>('DELETE FROM delivery_replays WHERE finished_at < ?');
  const insertReplay = db.prepare<[string, string, number, bigint, bigint, string | null, bigint, number]>(
    `INSERT INTO delivery_replays (replay_id, tenant, subscription_id, after, until, event_id, cursor, requested_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (replay_id) DO NOTHING`,
  );
  const selectReplays = db.prepare<[string, number, number], ReplayRow>(
    `SELECT ${REPLAY_COLUMNS} FROM delivery_replays WHERE tenant = ? AND subscription_id = ?
     ORDER BY requested_at DESC, replay_id DESC LIMIT ?`,
  );
  const selectClaimableReplay = db.prepare<[number], ReplayRow>(
    `SELECT ${REPLAY_COLUMNS} FROM delivery_replays WHERE finished_at IS NULL AND lease_until <= ?
     ORDER BY requested_at, replay_id LIMIT 1`,
  );
  const leaseReplay = db.prepare<[string, number, string]>(
    'UPDATE delivery_replays SET holder = ?, lease_until = ? WHERE replay_id = ?',
  );
  const advanceHeldReplay = db.prepare<{
    replayId: string;
    holder: string;
    cursor: bigint;
    queued: number;
    leaseUntil: number;
    finishedAt: number | null;
  }>(
    `UPDATE delivery_replays SET cursor = @cursor, queued = queued + @queued, finished_at = @finishedAt,
       holder = CASE WHEN @finishedAt IS NULL THEN holder END,
       lease_until = CASE WHEN @finishedAt IS NULL THEN @leaseUntil ELSE 0 END
     WHERE replay_id = @replayId AND holder = @holder AND finished_at IS NULL`,
  );

  /** Makes the key's lane name its head as it is now (none: no lane); the lease is left as it is. */
  const syncLane = (key: LaneKey): void => {
    const head = selectHead.get(key.tenant, key.subscriptionId, key.orderKey);
    if (head) upsertLane.run(key.tenant, key.subscriptionId, key.orderKey, head.seq, head.due_at);
    else deleteLane.run(key.tenant, key.subscriptionId, key.orderKey);
  };

  const enqueueAll = (deliveries: readonly NewDelivery[]): void => {
    const keys = new Map<string, LaneKey>();
    for (const delivery of deliveries) {
      insertDelivery.run(
        delivery.tenant,
        delivery.subscriptionId,
        delivery.orderKey,
        delivery.eventId,
        delivery.eventType,
        delivery.position,
        delivery.origin,
        delivery.payload,
        delivery.dueAt,
      );
      keys.set(JSON.stringify([delivery.tenant, delivery.subscriptionId, delivery.orderKey]), delivery);
    }
    for (const key of keys.values()) syncLane(key);
  };

  const enqueue = db.transaction(enqueueAll);

  const claim = db.transaction(
    (ref: SubscriptionRef, now: number, max: number, holder: string, leaseUntil: number) =>
      selectClaimable.all(ref.tenant, ref.subscriptionId, now, now, max).map((row): ClaimedDelivery => {
        leaseLane.run(holder, leaseUntil, row.tenant, row.subscription_id, row.order_key);
        return {
          tenant: row.tenant,
          subscriptionId: row.subscription_id,
          orderKey: row.order_key,
          eventId: row.event_id,
          eventType: row.event_type,
          position: BigInt(row.position),
          origin: row.origin,
          payload: row.payload,
          dueAt: row.due_at,
          attempts: row.attempts,
          firstAttemptAt: row.first_attempt_at,
          leaseUntil,
        };
      }),
  );

  const settle = db.transaction(
    (claimed: ClaimedDelivery, holder: string, attempt: DeliveryAttempt, settlement: Settlement) => {
      const { tenant, subscriptionId, orderKey, eventId, origin } = claimed;
      insertAttempt.run(
        tenant,
        subscriptionId,
        attempt.eventId,
        attempt.eventType,
        attempt.position,
        attempt.origin,
        attempt.attempt,
        attempt.at,
        attempt.status,
        attempt.latencyMs,
        attempt.responseStatus,
        attempt.responseBody,
        attempt.error,
        attempt.nextAttemptAt,
      );
      if (!selectHeld.get(tenant, subscriptionId, orderKey, holder, claimed.leaseUntil)) return;
      if (settlement.kind === 'retry') {
        scheduleRetry.run(
          settlement.dueAt,
          claimed.attempts + 1,
          claimed.firstAttemptAt ?? attempt.at,
          tenant,
          subscriptionId,
          eventId,
          origin,
        );
      } else {
        deleteDelivery.run(tenant, subscriptionId, eventId, origin);
        const next = selectHead.get(tenant, subscriptionId, orderKey);
        if (next) dueNoLaterThan.run(attempt.at, next.seq, attempt.at);
      }
      syncLane(claimed);
      releaseLane.run(tenant, subscriptionId, orderKey);
    },
  );

  const hurry = db.transaction((ref: SubscriptionRef, now: number) => {
    hurryHeads.run(now, ref.tenant, ref.subscriptionId, now, now);
    return hurryLanes.run(now, ref.tenant, ref.subscriptionId, now, now).changes;
  });

  const forget = db.transaction((ref: SubscriptionRef) => {
    for (const statement of forgetStatements) statement.run(ref.tenant, ref.subscriptionId);
  });

  const prune = db.transaction((before: number) => {
    pruneReplays.run(before);
    return pruneAttempts.run(before).changes;
  });

  const claimReplay = db.transaction((now: number, holder: string, leaseUntil: number) => {
    const row = selectClaimableReplay.get(now);
    if (!row) return null;
    leaseReplay.run(holder, leaseUntil, row.replay_id);
    return toReplay(row);
  });

  const advanceReplay = db.transaction(
    (
      replayId: string,
      holder: string,
      deliveries: readonly NewDelivery[],
      cursor: bigint,
      leaseUntil: number,
      finishedAt: number | null,
    ) => {
      const queued = deliveries.length;
      const moved = advanceHeldReplay.run({ replayId, holder, cursor, queued, leaseUntil, finishedAt });
      if (moved.changes === 0) return false;
      enqueueAll(deliveries);
      return true;
    },
  );

  return {
    async enqueue(deliveries) {
      assertPositions(...deliveries.map((delivery) => delivery.position));
      if (deliveries.length > 0) enqueue.immediate(deliveries);
    },
    async queuedCount(ref, orderKey) {
      return orderKey === undefined
        ? countQueued.get(ref.tenant, ref.subscriptionId)!
        : countQueuedOfKey.get(ref.tenant, ref.subscriptionId, orderKey)!;
    },
    async claim(ref, { now, max, holder, leaseUntil }) {
      return max > 0 ? claim.immediate(ref, now, max, holder, leaseUntil) : [];
    },
    async nextDue(ref, now) {
      const times = [
        selectEarliestUnleased.get(ref.tenant, ref.subscriptionId, now),
        selectEarliestLeased.get(ref.tenant, ref.subscriptionId, now),
      ].filter((time): time is number => typeof time === 'number');
      return times.length > 0 ? Math.min(...times) : null;
    },
    async settle(claimed, holder, attempt, settlement) {
      assertPositions(attempt.position);
      settle.immediate(claimed, holder, attempt, settlement);
    },
    async hurry(ref, now) {
      return hurry.immediate(ref, now);
    },
    async subscriptionsWithQueue() {
      return selectSubscriptions
        .all()
        .map((row) => ({ tenant: row.tenant, subscriptionId: row.subscription_id }));
    },
    async forget(ref) {
      forget.immediate(ref);
    },
    async deliveredSince(ref, since) {
      return selectDeliveredSince.get(ref.tenant, ref.subscriptionId, since) !== undefined;
    },
    async attempts(query) {
      if (!Number.isSafeInteger(query.limit) || query.limit < 1)
        throw new PlatformError('validation_failed', 'limit is a whole number of at least 1');
      const statement =
        query.eventId === undefined
          ? query.status === undefined
            ? selectPage.all
            : selectPage.status
          : query.status === undefined
            ? selectPage.event
            : selectPage.both;
      const rows = statement.all({
        tenant: query.tenant,
        subscriptionId: query.subscriptionId,
        eventId: query.eventId,
        status: query.status,
        ...attemptCursor(query.before),
        limit: query.limit + 1,
      });
      const attempts = rows.slice(0, query.limit).map(toAttempt);
      const last = attempts[attempts.length - 1];
      return { attempts, next: rows.length > query.limit && last ? `${last.at}:${last.id}` : null };
    },
    async lastAttemptOf(ref, eventId) {
      const row = selectLastAttempt.get(ref.tenant, ref.subscriptionId, eventId);
      if (!row) return null;
      const { id: _id, ...attempt } = toAttempt(row);
      return attempt;
    },
    async prune(before) {
      return prune.immediate(before);
    },
    async addReplay(replay) {
      assertPositions(replay.after, replay.until);
      insertReplay.run(
        replay.replayId,
        replay.tenant,
        replay.subscriptionId,
        replay.after,
        replay.until,
        replay.eventId,
        replay.after,
        replay.requestedAt,
      );
    },
    async replays(ref, limit) {
      return selectReplays.all(ref.tenant, ref.subscriptionId, limit).map(toReplay);
    },
    async claimReplay({ now, holder, leaseUntil }) {
      return claimReplay.immediate(now, holder, leaseUntil);
    },
    async advanceReplay(replayId, holder, { deliveries, cursor, leaseUntil, finishedAt }) {
      assertPositions(cursor, ...deliveries.map((delivery) => delivery.position));
      return advanceReplay.immediate(replayId, holder, deliveries, cursor, leaseUntil, finishedAt);
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
