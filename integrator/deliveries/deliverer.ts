import { subjectOfPublicEvent } from '../../contracts/personal-data';
import { headersOf } from '../../command-api/subscriptions/commands';
import {
  MAX_LOGGED_RESPONSE_BYTES,
  type ClaimedDelivery,
  type DeliveryAttempt,
  type DeliveryStore,
  type Settlement,
  type SubscriptionRef,
} from '../../infra/deliveries/port';
import type { Logger } from '../../infra/logging';
import { signedHeaders } from '../../infra/outbound/standard-webhooks';
import { OutboundError, type OutboundHttp } from '../../infra/outbound/port';
import type { Sealer } from '../../infra/secrets/sealer';
import { retryDelay } from './retry-schedule';
import type { DirectoryEntry, SubscriptionDirectory } from './subscription-directory';

export interface DelivererOptions {
  readonly store: DeliveryStore;
  readonly directory: Pick<SubscriptionDirectory, 'get'>;
  readonly outbound: OutboundHttp;
  readonly sealer: Pick<Sealer, 'open'>;
  readonly logger: Logger;
  /** Names this deliverer's leases (host, process and a random part). */
  readonly holder: string;
  /** Deliveries in flight from this process at most… */
  readonly slots: number;
  /** …for one system… */
  readonly tenantSlots: number;
  /** …and for one subscription: a slow receiver holds only these. */
  readonly subscriptionSlots: number;
  /** One attempt's deadline (connect, send, answer). */
  readonly timeoutMs: number;
  /** How often the queue is looked at for work other processes queued. */
  readonly pollMs: number;
  /** The delays between attempts (see `retry-schedule.ts`). */
  readonly schedule?: readonly number[];
  /**
   * The body to send for a queued payload of `tenant`'s: its personal values, queued sealed, opened (or
   * erased, once their subject was). See `revealedPayload`.
   */
  readonly revealPayload: (payload: string, tenant: string) => Promise<string>;
  /** Turns off a subscription whose deliveries all failed for the whole schedule, saying why. */
  readonly disable: (ref: SubscriptionRef, reason: string) => Promise<void>;
  readonly now?: () => number;
  readonly random?: () => number;
}

/** What this process knows of one subscription's queue. */
interface QueueState {
  readonly ref: SubscriptionRef;
  inFlight: number;
  /** When its next delivery is due (0: now, or unknown: look). */
  nextDue: number;
  /** An attempt failed since the last that was delivered. */
  failing: boolean;
  /**
   * This deliverer disabled the subscription: nothing is claimed for it until the directory has shown it
   * disabled and then enabled again (`until-active`), or this process is told it was enabled (`enabled`); while the
   * directory, which learns of the disabling a moment later, still shows it active (`until-disabled`), too.
   */
  held: false | 'until-disabled' | 'until-active';
}

const USER_AGENT = 'RecordsPlatform-Webhooks/1';
/** A known subscription's queue is looked at again after at most this many polls, whatever it expects. */
const RECHECK_POLLS = 10;

const refKey = (ref: SubscriptionRef) => `${ref.tenant}\n${ref.subscriptionId}`;

/** The start of an answer, cut at a character boundary within the log's kilobyte. */
function loggedBody(raw: Buffer): string {
  const text = raw.subarray(0, MAX_LOGGED_RESPONSE_BYTES).toString('utf8');
  // A multi-byte character cut at the end decodes as U+FFFD: drop it rather than log a character never sent.
  return raw.length > MAX_LOGGED_RESPONSE_BYTES ? text.replace(/\uFFFD$/, '') : text;
}

/**
 * Makes the queued deliveries: claims the due heads of each subscription's keys (systems take turns, then
 * their subscriptions; each within its slots), POSTs each signed as Standard Webhooks says, through the SSRF
 * guard, with a deadline and 1 KB of the answer read, logs the attempt and settles it: delivered, again later
 * (the retry schedule), or failed. A subscription whose every delivery failed for the whole schedule is
 * disabled (its queue waits for it to be enabled again); one that answers again has its waiting retries made
 * at once.
 */
export class Deliverer {
  private readonly queues = new Map<string, QueueState>();
  private inFlight = 0;
  private readonly inFlightBy = new Map<string, number>();
  private pumping = false;
  private pumpAgain = false;
  private timer: NodeJS.Timeout | undefined;
  private poller: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly running = new Set<Promise<void>>();
  private turn = 0;
  private delivered = 0;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(private readonly options: DelivererOptions) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  async start(): Promise<void> {
    await this.discover();
    this.poller = setInterval(() => {
      this.discover().catch((error: unknown) =>
        this.options.logger.error({ err: error }, 'could not look for queued deliveries'),
      );
    }, this.options.pollMs);
    this.poller.unref();
  }

  /** Deliveries made since start (for `/metrics`). */
  get deliveredCount(): number {
    return this.delivered;
  }

  get inFlightCount(): number {
    return this.inFlight;
  }

  /** Something was queued for the subscription: look at once (one this deliverer disabled stays held). */
  notify(ref: SubscriptionRef): void {
    this.queueOf(ref).nextDue = 0;
    this.pump();
  }

  /** The subscription was enabled again: what waits for it is due now, held here or not. */
  enabled(ref: SubscriptionRef): void {
    this.queueOf(ref).held = false;
    this.notify(ref);
  }

  /** The subscription was deleted: its queue is gone. */
  forget(ref: SubscriptionRef): void {
    this.queues.delete(refKey(ref));
  }

  private async discover(): Promise<void> {
    // What this process knows is due when it knows (its own enqueues notify it); another process's enqueue
    // is looked at within a few polls, not at every one (each look is a query per subscription).
    const recheckBy = this.now() + this.options.pollMs * RECHECK_POLLS;
    for (const ref of await this.options.store.subscriptionsWithQueue()) {
      const known = this.queues.has(refKey(ref));
      const queue = this.queueOf(ref);
      if (queue.held === 'until-disabled') continue;
      queue.nextDue = known ? Math.min(queue.nextDue, recheckBy) : 0;
    }
    this.pump();
  }

  private queueOf(ref: SubscriptionRef): QueueState {
    const key = refKey(ref);
    let queue = this.queues.get(key);
    if (!queue) {
      queue = {
        ref: { tenant: ref.tenant, subscriptionId: ref.subscriptionId },
        inFlight: 0,
        nextDue: 0,
        failing: false,
        held: false,
      };
      this.queues.set(key, queue);
    }
    return queue;
  }

  private pump(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    void this.claimDue()
      .catch((error: unknown) => this.options.logger.error({ err: error }, 'could not claim deliveries'))
      .finally(() => {
        this.pumping = false;
        if (this.pumpAgain) {
          this.pumpAgain = false;
          this.pump();
        } else this.wakeAtNextDue();
      });
  }

  /** Claims what is due, systems in turn, then each system's subscriptions, within every bound. */
  private async claimDue(): Promise<void> {
    const { slots, tenantSlots, subscriptionSlots } = this.options;
    const byTenant = new Map<string, QueueState[]>();
    const now = this.now();
    for (const queue of this.queues.values())
      if (queue.nextDue <= now && queue.inFlight < subscriptionSlots)
        byTenant.set(queue.ref.tenant, [...(byTenant.get(queue.ref.tenant) ?? []), queue]);
    const tenants = [...byTenant.keys()];
    this.turn = (this.turn + 1) % Math.max(1, tenants.length);
    const ordered = [...tenants.slice(this.turn), ...tenants.slice(0, this.turn)];
    for (const tenant of ordered) {
      for (const queue of byTenant.get(tenant)!) {
        const free = Math.min(
          subscriptionSlots - queue.inFlight,
          tenantSlots - (this.inFlightBy.get(tenant) ?? 0),
          slots - this.inFlight,
        );
        if (free <= 0) break;
        const entry = this.options.directory.get(queue.ref.tenant, queue.ref.subscriptionId);
        if (!entry) {
          // Deleted (its queue is forgotten when the deletion is consumed) or not yet known here.
          queue.nextDue = this.now() + this.options.pollMs;
          continue;
        }
        if (queue.held === 'until-disabled' && entry.state.active) {
          queue.nextDue = this.now() + this.options.pollMs;
          continue;
        }
        if (queue.held !== false) queue.held = entry.state.active ? false : 'until-active';
        if (!entry.state.active) {
          // Disabled: its deliveries wait; enabling it makes them due (see `notify`).
          queue.nextDue = Number.POSITIVE_INFINITY;
          continue;
        }
        await this.claimFor(queue, entry, free);
      }
      if (this.inFlight >= slots) return;
    }
  }

  private async claimFor(queue: QueueState, entry: DirectoryEntry, free: number): Promise<void> {
    const now = this.now();
    const claimed = await this.options.store.claim(queue.ref, {
      now,
      max: free,
      holder: this.options.holder,
      // The attempt's deadline and a margin: the lease outlives any attempt that is still running.
      leaseUntil: now + this.options.timeoutMs * 2 + 5_000,
    });
    if (claimed.length < free)
      queue.nextDue = (await this.options.store.nextDue(queue.ref, now)) ?? Number.POSITIVE_INFINITY;
    for (const delivery of claimed) this.launch(queue, entry, delivery);
  }

  private launch(queue: QueueState, entry: DirectoryEntry, delivery: ClaimedDelivery): void {
    const tenant = queue.ref.tenant;
    queue.inFlight++;
    this.inFlight++;
    this.inFlightBy.set(tenant, (this.inFlightBy.get(tenant) ?? 0) + 1);
    const run = this.attempt(queue, entry, delivery)
      .catch((error: unknown) =>
        this.options.logger.error(
          { err: error, eventId: delivery.eventId, subscriptionId: delivery.subscriptionId },
          'a delivery attempt could not be settled; its lease will run out and it is tried again',
        ),
      )
      .finally(() => {
        queue.inFlight--;
        this.inFlight--;
        const left = (this.inFlightBy.get(tenant) ?? 1) - 1;
        if (left === 0) this.inFlightBy.delete(tenant);
        else this.inFlightBy.set(tenant, left);
        this.running.delete(run);
        this.pump();
      });
    this.running.add(run);
  }

  private async attempt(queue: QueueState, entry: DirectoryEntry, delivery: ClaimedDelivery): Promise<void> {
    const startedAt = this.now();
    const outcome = await this.post(entry, delivery, new Date(startedAt));
    const attemptNumber = delivery.attempts + 1;
    const ok = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
    let settlement: Settlement;
    let disabled = false;
    let error = ok ? null : outcome.error;
    if (ok) settlement = { kind: 'delivered' };
    else {
      const delay = retryDelay(attemptNumber, this.random(), this.options.schedule);
      if (delay !== null) settlement = { kind: 'retry', dueAt: startedAt + delay };
      else if (await this.keepsFailing(delivery, startedAt)) {
        const reason = `every delivery failed since ${new Date(delivery.firstAttemptAt ?? startedAt).toISOString()} (${attemptNumber} attempts); the last: ${error ?? 'no answer'}`;
        await this.options.disable(queue.ref, reason.slice(0, 500));
        disabled = true;
        // It stays queued: enabling the subscription delivers it, and what came after it.
        settlement = { kind: 'retry', dueAt: startedAt };
        error = `${error ?? 'no answer'}; the subscription was disabled and the delivery waits for it`;
      } else settlement = { kind: 'failed' };
    }
    const attempt: DeliveryAttempt = {
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      position: delivery.position,
      origin: delivery.origin,
      attempt: attemptNumber,
      at: startedAt,
      status: ok ? 'delivered' : settlement.kind === 'failed' ? 'failed' : 'retrying',
      latencyMs: Math.round(outcome.latencyMs),
      responseStatus: outcome.status,
      responseBody: outcome.body,
      error,
      nextAttemptAt: settlement.kind === 'retry' ? settlement.dueAt : null,
    };
    await this.options.store.settle(delivery, this.options.holder, attempt, settlement);
    if (ok) {
      this.delivered++;
      queue.nextDue = 0;
      if (queue.failing) {
        // The receiver is back: what waits for a retry need not wait out its back-off.
        queue.failing = false;
        await this.options.store.hurry(queue.ref, this.now());
      }
    } else {
      queue.failing = true;
      if (disabled) {
        queue.held = 'until-disabled';
        queue.nextDue = this.now() + this.options.pollMs;
      } else if (settlement.kind === 'retry') queue.nextDue = Math.min(queue.nextDue, settlement.dueAt);
      else queue.nextDue = 0;
    }
  }

  /** No attempt of the subscription was delivered since this delivery's first: its receiver is gone. */
  private async keepsFailing(delivery: ClaimedDelivery, now: number): Promise<boolean> {
    const ref = { tenant: delivery.tenant, subscriptionId: delivery.subscriptionId };
    return !(await this.options.store.deliveredSince(ref, delivery.firstAttemptAt ?? now));
  }

  private async post(
    entry: DirectoryEntry,
    delivery: ClaimedDelivery,
    sentAt: Date,
  ): Promise<{ status: number | null; body: string; error: string | null; latencyMs: number }> {
    const started = performance.now();
    try {
      const { state } = entry;
      const previousValid =
        state.previousSealedSecret !== null &&
        state.previousExpiresAt !== null &&
        Date.parse(state.previousExpiresAt) > sentAt.getTime();
      const body = await this.options.revealPayload(delivery.payload, delivery.tenant);
      const signature = signedHeaders(
        {
          current: this.options.sealer.open(state.sealedSecret),
          ...(previousValid && { previous: this.options.sealer.open(state.previousSealedSecret!) }),
        },
        delivery.eventId,
        sentAt,
        body,
      );
      const response = await this.options.outbound.request({
        method: 'POST',
        url: state.settings.url,
        headers: {
          ...headersOf(this.options.sealer, state),
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          ...signature,
        },
        body,
        timeoutMs: this.options.timeoutMs,
        maxBytes: MAX_LOGGED_RESPONSE_BYTES,
      });
      const ok = response.status >= 200 && response.status < 300;
      return {
        status: response.status,
        body: loggedBody(response.raw),
        error: ok
          ? null
          : response.status >= 300 && response.status < 400
            ? `answered ${response.status} (a redirect: deliveries do not follow them)`
            : `answered ${response.status}`,
        latencyMs: performance.now() - started,
      };
    } catch (error) {
      const reason =
        error instanceof OutboundError ? `${error.reason}: ${error.message}` : `failed: ${String(error)}`;
      return { status: null, body: '', error: reason.slice(0, 500), latencyMs: performance.now() - started };
    }
  }

  /** Sleeps until the earliest due subscription that has a free slot, or the next poll. */
  private wakeAtNextDue(): void {
    if (this.stopped) return;
    const { slots, tenantSlots, subscriptionSlots } = this.options;
    // At a bound, the next attempt to finish looks again: no timer needed (nor a busy loop).
    if (this.inFlight >= slots) return;
    let earliest = Number.POSITIVE_INFINITY;
    for (const queue of this.queues.values())
      if (
        queue.inFlight < subscriptionSlots &&
        (this.inFlightBy.get(queue.ref.tenant) ?? 0) < tenantSlots &&
        queue.nextDue < earliest
      )
        earliest = queue.nextDue;
    if (earliest === Number.POSITIVE_INFINITY) return;
    clearTimeout(this.timer);
    const delay = Math.max(0, Math.min(earliest - this.now(), this.options.pollMs));
    this.timer = setTimeout(() => this.pump(), delay);
    this.timer.unref();
  }

  /** Stops claiming, and waits for the attempts under way (each settles, or its lease runs out). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.poller);
    await Promise.allSettled([...this.running]);
  }
}

/** A queued payload (a public event as JSON) with the personal values of its record opened by `revealData`. */
export async function revealedPayload(
  payload: string,
  tenant: string,
  revealData: (data: unknown, subject: string) => Promise<unknown>,
): Promise<string> {
  const event = JSON.parse(payload) as { type: string; data: unknown };
  const subject = subjectOfPublicEvent(tenant, event);
  if (subject === undefined) return payload;
  const data = await revealData(event.data, subject);
  return data === event.data ? payload : JSON.stringify({ ...event, data });
}
