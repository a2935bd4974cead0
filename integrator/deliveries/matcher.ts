import type { RecordedEvent } from '../../contracts/events/envelope';
import type { Document } from '../../contracts/read-model-changes';
import { toPublicEvents } from '../../contracts/public-event-mapping';
import type { PublicEvent } from '../../contracts/public-events';
import { partitionKeyOf } from '../../contracts/streams';
import { matchesFilter } from '../../languages/filter/document-match';
import type { StoreFilter } from '../../languages/filter/store-query';
import type { NewDelivery } from '../../infra/deliveries/port';
import type { Logger } from '../../infra/logging';
import type { RecordStates } from './record-states';
import { activeAt, type DirectoryEntry, type SubscriptionDirectory } from './subscription-directory';

/** A filter's text resolved for one system (null: it names what the system no longer has: nothing matches). */
export type FilterResolver = (tenant: string, text: string) => Promise<StoreFilter | null>;

/** How long a resolved filter is used before it is resolved again (fields may have changed). */
const FILTER_TTL_MS = 10_000;

/** Resolved filters for a while, so a busy subscription does not read field definitions for each event. */
export function cachedFilters(resolve: FilterResolver, logger: Logger, now = Date.now): FilterResolver {
  const cache = new Map<string, { readonly at: number; readonly filter: Promise<StoreFilter | null> }>();
  return (tenant, text) => {
    const key = `${tenant}\n${text}`;
    const cached = cache.get(key);
    if (cached && now() - cached.at < FILTER_TTL_MS) return cached.filter;
    const filter = resolve(tenant, text).catch((error: unknown) => {
      logger.warn({ err: error, tenant }, 'a subscription filter no longer resolves: nothing matches it');
      return null;
    });
    if (cache.size >= 10_000) cache.clear();
    cache.set(key, { at: now(), filter });
    return filter;
  };
}

export interface MatchOptions {
  /** Why the deliveries are queued: `live`, or a replay's origin. */
  readonly origin: string;
  /** Only this subscription (a replay); otherwise every one of the event's system created before it. */
  readonly only?: DirectoryEntry;
  readonly dueAt: number;
}

/**
 * Which subscriptions an event is delivered to: those of its system that ask for its public type and, for a
 * record's events, whose filter matches the record as it is right after the event.
 */
export class DeliveryMatcher {
  constructor(
    private readonly deps: {
      readonly directory: SubscriptionDirectory;
      readonly records: RecordStates;
      readonly filters: FilterResolver;
      readonly logger: Logger;
      /** Opens an event's personal values (for a filter's look at its record). */
      readonly reveal: (event: RecordedEvent) => Promise<RecordedEvent>;
    },
  ) {}

  /**
   * The deliveries of an event as stored: its personal values stay sealed in the payloads queued (the deliverer
   * opens them as it sends, so a queue holds no personal data, and what it sends after an erasure is erased).
   */
  async deliveriesOf(event: RecordedEvent, options: MatchOptions): Promise<NewDelivery[]> {
    let published: PublicEvent[];
    try {
      published = toPublicEvents(event, event.position);
    } catch (error) {
      // Data that fails its own schema is a bug upstream, the same each time: it is logged and goes nowhere,
      // rather than holding up every later event of its record.
      this.deps.logger.error({ err: error, eventId: event.id }, 'an event could not be made public');
      return [];
    }
    if (published.length === 0) return [];
    const tenant = event.metadata.tenant;
    const candidates = options.only
      ? [options.only]
      : [...this.deps.directory.of(tenant)].filter((entry) => activeAt(entry, event.position));
    const deliveries: NewDelivery[] = [];
    let record: Promise<Document | null> | undefined;
    for (const entry of candidates)
      for (const publicEvent of published) {
        if (!entry.state.settings.events.includes(publicEvent.type)) continue;
        const filterText = entry.state.settings.filter;
        if (filterText !== null && filterText !== '' && publicEvent.type.startsWith('record.')) {
          const filter = await this.deps.filters(tenant, filterText);
          record ??= this.deps.reveal(event).then((revealed) => this.deps.records.after(revealed));
          const doc = await record;
          if (filter === null || doc === null || !matchesFilter(doc, filter)) continue;
        }
        deliveries.push(this.delivery(entry, event, publicEvent, options));
      }
    return deliveries;
  }

  private delivery(
    entry: DirectoryEntry,
    event: RecordedEvent,
    publicEvent: PublicEvent,
    options: MatchOptions,
  ): NewDelivery {
    return {
      tenant: entry.tenant,
      subscriptionId: entry.state.subscriptionId,
      orderKey: partitionKeyOf(event.streamId),
      eventId: publicEvent.id,
      eventType: publicEvent.type,
      position: event.position,
      origin: options.origin,
      payload: JSON.stringify(publicEvent),
      dueAt: options.dueAt,
    };
  }
}
