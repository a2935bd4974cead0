/**
 * The delivery store: the outgoing deliveries of subscriptions still to be made, the log of every attempt, and
 * the replays asked for. Shared by every integrator replica of a deployment (a SQLite file on one host, a
 * MongoDB database across hosts); the queue is what makes a delivery durable once the stream's message that
 * caused it is done with.
 *
 * The queue holds deliveries by subscription and order key (a record's stream, say): of one key only the
 * head — the lowest position, then the earliest queued — may be claimed, and only once it is due, so the
 * deliveries of one key go one at a time, in order, while every other key goes its own pace.
 */

/** A subscription of a system: what deliveries and replays belong to. */
export interface SubscriptionRef {
  readonly tenant: string;
  readonly subscriptionId: number;
}

export interface NewDelivery extends SubscriptionRef {
  /** Deliveries of one key go one at a time, in position order. */
  readonly orderKey: string;
  /** The public event's id: the `webhook-id` of every attempt of it. */
  readonly eventId: string;
  readonly eventType: string;
  /** The event's global position (`PublicEvent.position`, from 0 to `MAX_POSITION`). */
  readonly position: bigint;
  /**
   * Why it is queued: `live`, or the replay it belongs to. A delivery is queued once per subscription, event
   * and origin (queuing it again changes nothing), so a replay can deliver an event the live flow delivered.
   */
  readonly origin: string;
  /** The body to POST: the public event as JSON. */
  readonly payload: string;
  /** When it is due (ms since the epoch). */
  readonly dueAt: number;
}

/** A queued delivery claimed by one deliverer until `leaseUntil`. */
export interface ClaimedDelivery extends NewDelivery {
  /** Attempts made before this one. */
  readonly attempts: number;
  /** When the first attempt was made (ms since the epoch), none yet: null. */
  readonly firstAttemptAt: number | null;
  readonly leaseUntil: number;
}

export type AttemptStatus = 'delivered' | 'retrying' | 'failed';

/** One attempt, as the log keeps it. */
export interface DeliveryAttempt {
  readonly eventId: string;
  readonly eventType: string;
  readonly position: bigint;
  readonly origin: string;
  /** 1 for the first attempt of this delivery. */
  readonly attempt: number;
  /** When it was made (ms since the epoch). */
  readonly at: number;
  /** `delivered`: a 2xx answer; `retrying`: another attempt is due at `nextAttemptAt`; `failed`: no more. */
  readonly status: AttemptStatus;
  readonly latencyMs: number;
  /** The receiver's HTTP status; null when there was no answer (refused, unreachable, timed out). */
  readonly responseStatus: number | null;
  /** The start of the answer (at most `MAX_LOGGED_RESPONSE_BYTES` of UTF-8: the caller cuts, the store keeps). */
  readonly responseBody: string;
  /** Why it did not get an answer, or why the answer is not a success. */
  readonly error: string | null;
  readonly nextAttemptAt: number | null;
}

/** Positions are signed 64-bit integers on every store. */
export const MAX_POSITION = 2n ** 63n - 1n;

/** Throws unless every position is one a store keeps exactly. */
export function assertPositions(...positions: bigint[]): void {
  for (const position of positions)
    if (position < 0n || position > MAX_POSITION)
      throw new RangeError(`position ${position} is out of range`);
}

/** The first kilobyte of a receiver's answer is what the log keeps of it. */
export const MAX_LOGGED_RESPONSE_BYTES = 1024;

/** What became of a claimed delivery's attempt. */
export type Settlement =
  | { readonly kind: 'delivered' }
  /** Another attempt at `dueAt`. */
  | { readonly kind: 'retry'; readonly dueAt: number }
  /** No more attempts: the delivery leaves the queue and the next of its key is due at once. */
  | { readonly kind: 'failed' };

export interface AttemptPage {
  /** Newest first. */
  readonly attempts: (DeliveryAttempt & { readonly id: string })[];
  /** Pass as `before` for the next page; null when this is the last. */
  readonly next: string | null;
}

export interface AttemptQuery extends SubscriptionRef {
  readonly eventId?: string;
  readonly status?: AttemptStatus;
  /** The `next` of the previous page (anything else is refused: `validation_failed`). */
  readonly before?: string;
  /** At least 1. */
  readonly limit: number;
}

export interface Replay extends SubscriptionRef {
  /** The id the API answered with (a UUID). */
  readonly replayId: string;
  /** Events after this position are replayed… */
  readonly after: bigint;
  /** …up to and including this one. */
  readonly until: bigint;
  /** A redelivery of this one event (null: a replay of a range). */
  readonly eventId: string | null;
  /** How far it has come: every event up to here is queued. */
  readonly cursor: bigint;
  readonly queued: number;
  readonly requestedAt: number;
  /** When the last event was queued (ms since the epoch); null: still under way. */
  readonly finishedAt: number | null;
}

export interface DeliveryStore {
  /**
   * Queues deliveries (one transaction, or each at most once on MongoDB); repeats are ignored. Once it has
   * answered, the deliveries are durable; a call that failed may be repeated.
   */
  enqueue(deliveries: readonly NewDelivery[]): Promise<void>;
  /** How many deliveries the subscription has queued (of one key: `orderKey`). */
  queuedCount(ref: SubscriptionRef, orderKey?: string): Promise<number>;
  /**
   * Claims up to `max` heads of the subscription's keys that are due at `now` and not claimed by a lease
   * running at `now`, earliest due first, each leased to `holder` until `leaseUntil`. The lease is the key's:
   * while it runs nothing else of the key is claimed, not even a delivery of a lower position queued since
   * (that one is the head once the leased one is settled or its lease has run out).
   */
  claim(
    ref: SubscriptionRef,
    options: {
      readonly now: number;
      readonly max: number;
      readonly holder: string;
      readonly leaseUntil: number;
    },
  ): Promise<ClaimedDelivery[]>;
  /**
   * When a claim could next answer something (ms since the epoch): the earliest due time of the
   * subscription's heads, a head under a lease running at `now` counting as due when that lease ends (its
   * holder may never settle it); null: nothing queued.
   */
  nextDue(ref: SubscriptionRef, now: number): Promise<number | null>;
  /**
   * Logs the attempt and settles the claimed delivery as `settlement` says, ending the lease; the next head of
   * a key whose delivery left the queue is due no later than `attempt.at`. A holder whose lease another has
   * taken since (or that `forget` ended) logs the attempt but leaves the queue as it is.
   */
  settle(
    claimed: ClaimedDelivery,
    holder: string,
    attempt: DeliveryAttempt,
    settlement: Settlement,
  ): Promise<void>;
  /**
   * Makes every head of the subscription due later than `now` and not under a lease running at `now` due at
   * `now` (a receiver is back: no need to wait); answers how many.
   */
  hurry(ref: SubscriptionRef, now: number): Promise<number>;
  /** The subscriptions with something queued. */
  subscriptionsWithQueue(): Promise<SubscriptionRef[]>;
  /** Forgets the subscription's queue, replays and log (it was deleted). */
  forget(ref: SubscriptionRef): Promise<void>;
  /** Whether an attempt of the subscription was delivered at or after `since`. */
  deliveredSince(ref: SubscriptionRef, since: number): Promise<boolean>;
  attempts(query: AttemptQuery): Promise<AttemptPage>;
  /** The newest logged attempt of the event to the subscription, if the log still has it. */
  lastAttemptOf(ref: SubscriptionRef, eventId: string): Promise<DeliveryAttempt | null>;
  /** Deletes logged attempts made before `before`, and replays finished before it; answers how many attempts. */
  prune(before: number): Promise<number>;

  /** Records a replay (a second one with the same id changes nothing). */
  addReplay(replay: Omit<Replay, 'cursor' | 'queued' | 'finishedAt'>): Promise<void>;
  /** The subscription's replays, newest first (at most `limit`). */
  replays(ref: SubscriptionRef, limit: number): Promise<Replay[]>;
  /** Claims one unfinished replay not leased at `now`, oldest first. */
  claimReplay(options: {
    readonly now: number;
    readonly holder: string;
    readonly leaseUntil: number;
  }): Promise<Replay | null>;
  /**
   * Queues deliveries of a claimed replay and moves its cursor, in one step, when `holder` still holds it
   * (its lease may have run out, as long as no one took it over): answers false (nothing done) when it does
   * not. Renews the lease until `leaseUntil`; `finishedAt` ends the replay and releases it. On MongoDB, a
   * holder whose lease is taken over during the call may still queue its deliveries: they are the replay's
   * own, past its cursor, which the next holder queues again (repeats are ignored).
   */
  advanceReplay(
    replayId: string,
    holder: string,
    progress: {
      readonly deliveries: readonly NewDelivery[];
      readonly cursor: bigint;
      readonly leaseUntil: number;
      readonly finishedAt: number | null;
    },
  ): Promise<boolean>;
  close(): Promise<void>;
}
