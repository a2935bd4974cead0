import type { SubscriptionEvent } from '../../contracts/events/subscriptions';
import { upcast } from '../../contracts/events/registry';
import {
  subscriptionDecider,
  type SubscriptionState,
} from '../../command-api/subscriptions/domain/subscription';
import type { EventStore, Subscription } from '../../infra/event-store/port';
import type { Logger } from '../../infra/logging';

/** A subscription as deliveries see it: its state (sealed secrets included) and where it began. */
export interface DirectoryEntry {
  readonly tenant: string;
  readonly state: SubscriptionState;
  /** The position of its creation: it is told of events after it, never of earlier ones unasked. */
  readonly createdAt: bigint;
  /** While it is disabled: the position of the disabling (events before it were still its to deliver). */
  readonly disabledAt: bigint | null;
}

/** Whether the subscription was active when the event at `position` was written. */
export function activeAt(entry: DirectoryEntry, position: bigint): boolean {
  if (position <= entry.createdAt) return false;
  return entry.state.active || (entry.disabledAt !== null && position < entry.disabledAt);
}

/** How long a match waits for the directory to reach an event's position before it goes with what it has. */
const CATCH_UP_WAIT_MS = 5_000;
/**
 * The same where the store cannot tell the newest subscription event (EventStoreDB): its filtered
 * subscription tells the directory how far it has read only every so many events, so on a quiet log the
 * directory may never report reaching the position, and each event would wait the whole time.
 */
const BLIND_CATCH_UP_WAIT_MS = 250;

/**
 * Every subscription of every system, kept in this process by tailing the subscription streams of the event
 * store in their global order: a delivery decides on the subscriptions as written, with their secrets, and
 * does not depend on a read model or on which replica saw a subscription's events on the stream.
 */
export class SubscriptionDirectory {
  private readonly byTenant = new Map<string, Map<number, DirectoryEntry>>();
  private reached = 0n;
  private stopped = false;
  private subscription: Subscription | undefined;
  private loop: Promise<void> | undefined;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly deps: { readonly events: EventStore; readonly logger: Logger }) {}

  start(): void {
    const subscription = this.deps.events.subscribeToAll({ filter: { categories: ['subscription'] } });
    this.subscription = subscription;
    this.loop = (async () => {
      for await (const item of subscription) {
        if (item.kind === 'event') {
          try {
            this.apply(
              item.event.metadata.tenant,
              upcast(item.event) as SubscriptionEvent,
              item.event.position,
            );
          } catch (error) {
            // A subscription event this code cannot read must not stop every other subscription's deliveries.
            this.deps.logger.error(
              { err: error, eventId: item.event.id },
              'a subscription event could not be applied to the directory',
            );
          }
          this.advance(item.event.position);
        } else this.advance(item.position);
      }
    })().catch((error: unknown) =>
      this.deps.logger.error({ err: error }, 'the subscription directory stopped following the store'),
    );
  }

  /** The system's subscriptions, as of the newest subscription event read. */
  of(tenant: string): Iterable<DirectoryEntry> {
    return this.byTenant.get(tenant)?.values() ?? [];
  }

  get(tenant: string, subscriptionId: number): DirectoryEntry | undefined {
    return this.byTenant.get(tenant)?.get(subscriptionId);
  }

  /** Every subscription of every system. */
  *all(): Iterable<DirectoryEntry> {
    for (const subscriptions of this.byTenant.values()) yield* subscriptions.values();
  }

  /**
   * Resolves once the directory holds every subscription event up to `position` (or every one there is, when
   * the store can tell its newest), or after a few seconds at most: what an event there should be matched
   * against.
   */
  async reach(position: bigint): Promise<void> {
    if (this.reached >= position) return;
    const head = await this.deps.events.categoryHead?.(['subscription']);
    const target = head === undefined ? position : head < position ? head : position;
    if (this.reached >= target) return;
    await new Promise<void>((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const check = () => {
        if (this.reached >= target || this.stopped) finish();
      };
      const timer = setTimeout(finish, head === undefined ? BLIND_CATCH_UP_WAIT_MS : CATCH_UP_WAIT_MS);
      this.waiters.add(check);
    });
  }

  private advance(position: bigint): void {
    if (position <= this.reached) return;
    this.reached = position;
    for (const waiter of [...this.waiters]) waiter();
  }

  private apply(tenant: string, event: SubscriptionEvent, position: bigint): void {
    let subscriptions = this.byTenant.get(tenant);
    if (!subscriptions) {
      subscriptions = new Map();
      this.byTenant.set(tenant, subscriptions);
    }
    const { subscriptionId } = event.data;
    if (event.type === 'SubscriptionDeleted') {
      subscriptions.delete(subscriptionId);
      return;
    }
    const known = subscriptions.get(subscriptionId);
    const state = subscriptionDecider.evolve(known?.state ?? subscriptionDecider.initialState, event);
    const disabledAt =
      event.type === 'SubscriptionDisabled'
        ? (known?.disabledAt ?? position)
        : state.active
          ? null
          : (known?.disabledAt ?? (event.type === 'SubscriptionCreated' ? position : null));
    subscriptions.set(subscriptionId, { tenant, state, createdAt: known?.createdAt ?? position, disabledAt });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const waiter of [...this.waiters]) waiter();
    await this.subscription?.close();
    await this.loop;
  }
}
