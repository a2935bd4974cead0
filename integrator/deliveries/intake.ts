import type { RecordedEvent } from '../../contracts/events/envelope';
import type {
  SubscriptionEvent,
  SubscriptionReplayRequestedData,
} from '../../contracts/events/subscriptions';
import { upcast } from '../../contracts/events/registry';
import { MAPPED_INTERNAL_EVENT_TYPES } from '../../contracts/public-event-mapping';
import { TURNED_OFF_BY_UPDATE } from '../../command-api/subscriptions/domain/subscription';
import type { DeliveryStore, SubscriptionRef } from '../../infra/deliveries/port';
import type { EventStore } from '../../infra/event-store/port';
import type { Deliverer } from './deliverer';
import type { DeliveryMatcher } from './matcher';
import type { Replayer } from './replayer';
import { activeAt, type SubscriptionDirectory } from './subscription-directory';

const SUBSCRIPTION_EVENTS = new Set([
  'SubscriptionReplayRequested',
  'SubscriptionEnabled',
  'SubscriptionDeleted',
]);
const PUBLISHED = new Set(MAPPED_INTERNAL_EVENT_TYPES);

export interface DeliveryIntakeDeps {
  readonly store: DeliveryStore;
  readonly events: Pick<EventStore, 'readStream'>;
  readonly directory: SubscriptionDirectory;
  readonly matcher: DeliveryMatcher;
  readonly deliverer: Pick<Deliverer, 'notify' | 'enabled' | 'forget'>;
  readonly replayer: Pick<Replayer, 'notify'>;
  readonly now?: () => number;
}

/**
 * What the integrator does with the stream's events for outgoing subscriptions: queues a delivery of each
 * published event to each subscription it matches (the queue is durable before the message is done with),
 * records the replays asked for, replays what a subscription disabled for failing missed once it is enabled
 * again, and forgets a deleted subscription's queue.
 */
export class DeliveryIntake {
  private readonly now: () => number;

  constructor(private readonly deps: DeliveryIntakeDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Whether an event of this type is the intake's. */
  takes(type: string): boolean {
    return PUBLISHED.has(type) || SUBSCRIPTION_EVENTS.has(type);
  }

  /**
   * Whether a message of the stream (its headers: `type`, `tenant`, `position`) is a published event no
   * subscription can have (its system has none active at its position), known before its event is read: the
   * integrator reads every event of every record, and most systems subscribe to none. False when it may be.
   */
  async passesOver(headers: Readonly<Record<string, string>>): Promise<boolean> {
    const { type, tenant, position: at } = headers;
    if (type === undefined || !PUBLISHED.has(type) || tenant === undefined) return false;
    if (at === undefined || !/^[1-9][0-9]{0,19}$/.test(at)) return false;
    const position = BigInt(at);
    await this.deps.directory.reach(position);
    for (const entry of this.deps.directory.of(tenant)) if (activeAt(entry, position)) return false;
    return true;
  }

  async take(event: RecordedEvent): Promise<void> {
    if (PUBLISHED.has(event.type)) return this.publish(event);
    const tenant = event.metadata.tenant;
    const subscriptionEvent = upcast(event) as SubscriptionEvent;
    const ref: SubscriptionRef = { tenant, subscriptionId: subscriptionEvent.data.subscriptionId };
    switch (subscriptionEvent.type) {
      case 'SubscriptionReplayRequested':
        return this.replay(event, ref, subscriptionEvent.data);
      case 'SubscriptionEnabled':
        await this.replayWhatWasMissed(event, ref);
        // Its held deliveries go once the directory knows it is on again.
        await this.deps.directory.reach(event.position);
        this.deps.deliverer.enabled(ref);
        return;
      case 'SubscriptionDeleted':
        this.deps.deliverer.forget(ref);
        return this.deps.store.forget(ref);
      default:
        return;
    }
  }

  private async publish(event: RecordedEvent): Promise<void> {
    // The subscriptions as of the event: one created a moment before it is among them.
    await this.deps.directory.reach(event.position);
    const deliveries = await this.deps.matcher.deliveriesOf(event, { origin: 'live', dueAt: this.now() });
    if (deliveries.length === 0) return;
    await this.deps.store.enqueue(deliveries);
    for (const delivery of deliveries) this.deps.deliverer.notify(delivery);
  }

  private async replay(
    event: RecordedEvent,
    ref: SubscriptionRef,
    data: SubscriptionReplayRequestedData,
  ): Promise<void> {
    await this.deps.store.addReplay({
      ...ref,
      replayId: data.replayId,
      after: BigInt(data.after),
      // Up to the request: what came after it, the live flow delivers.
      until: data.until === null ? event.position : BigInt(data.until),
      eventId: data.eventId,
      requestedAt: Date.parse(event.metadata.occurredAt),
    });
    this.deps.replayer.notify();
  }

  /**
   * A subscription disabled because its deliveries kept failing gets, once enabled, every event it would
   * have had while it was off: a replay from its disabling to its enabling, named by the enabling event so
   * that the message delivered again adds no second replay. One a user turned off gets none.
   */
  private async replayWhatWasMissed(enabled: RecordedEvent, ref: SubscriptionRef): Promise<void> {
    let disabling: RecordedEvent | undefined;
    for await (const event of this.deps.events.readStream(enabled.streamId, {
      direction: 'backwards',
      fromRevision: enabled.revision,
    }))
      if (event.type === 'SubscriptionDisabled') {
        disabling = event;
        break;
      } else if (event.type === 'SubscriptionEnabled' && event.id !== enabled.id) break;
    if (!disabling) return;
    const { reason } = upcast(disabling).data as { reason: string };
    if (reason === TURNED_OFF_BY_UPDATE) return;
    await this.deps.store.addReplay({
      ...ref,
      replayId: enabled.id,
      after: disabling.position,
      until: enabled.position,
      eventId: null,
      requestedAt: Date.parse(enabled.metadata.occurredAt),
    });
    this.deps.replayer.notify();
  }
}
