import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  WrongExpectedVersionError,
  type AppendExpectedRevision,
  type AppendResult as EsdbAppendResult,
  type ReadPosition,
  type ReadRevision,
  type ResolvedEvent,
} from '@eventstore/db-client';
import type { NewEvent, RecordedEvent } from '../../contracts/events/envelope';
import {
  EventIdConflictError,
  WrongExpectedRevisionError,
  type AfterCommitHook,
  type AppendOptions,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type ReadAllOptions,
  type ReadStreamOptions,
  type StreamAppend,
  type StreamAppendOutcome,
  type SubscribeOptions,
  type Subscription,
} from './port';
import {
  categoryMatcher,
  esdbPosition,
  isRealPosition,
  isUserEvent,
  positionOf,
  toEventData,
  toRecordedEvent,
} from './eventstoredb-events';
import { EventStoreDbSubscription } from './eventstoredb-subscription';
import { AfterCommitHooks } from './after-commit';

export interface EventStoreDbEventStoreOptions {
  /** e.g. `esdb://localhost:2113?tls=false`. */
  readonly connectionString: string;
  /** Told when a subscription dropped and is about to resubscribe; defaults to a process warning. */
  readonly onSubscriptionDropped?: (error: unknown) => void;
}

const PAGE_SIZE = 500;
/**
 * How many of a stream's latest events are searched for the ids of an append, to recognise a repeated
 * command. ESDB itself only deduplicates when the expected revision is the one the first append used.
 */
const IDEMPOTENCY_WINDOW = 100;

export function createEventStoreDbEventStore(options: EventStoreDbEventStoreOptions): EventStore {
  return new EventStoreDbEventStore(
    EventStoreDBClient.connectionString(options.connectionString),
    options.onSubscriptionDropped ?? warnSubscriptionDropped,
  );
}

function warnSubscriptionDropped(error: unknown): void {
  process.emitWarning(`event store subscription dropped, resubscribing: ${String(error)}`);
}

interface StoredEventId {
  readonly revision: bigint;
  readonly position: bigint | undefined;
}

class EventStoreDbEventStore implements EventStore {
  private readonly subscriptions = new Set<EventStoreDbSubscription>();
  private readonly afterCommit = new AfterCommitHooks();
  private closed = false;

  constructor(
    private readonly client: EventStoreDBClient,
    private readonly onSubscriptionDropped: (error: unknown) => void,
  ) {}

  append(streamId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult> {
    return this.afterCommit.append(streamId, this.appendWithoutHooks(streamId, events, options));
  }

  appendToStreams(appends: readonly StreamAppend[]): Promise<StreamAppendOutcome[]> {
    return this.afterCommit.appendToStreams(appends, this.appendToStreamsWithoutHooks(appends));
  }

  onAfterCommit(hook: AfterCommitHook): () => void {
    return this.afterCommit.add(hook);
  }

  private async appendWithoutHooks(
    streamId: string,
    events: readonly NewEvent[],
    options?: AppendOptions,
  ): Promise<AppendResult> {
    this.assertOpen();
    if (events.length === 0) throw new Error(`stream ${streamId}: an append needs at least one event`);
    const expected = options?.expectedRevision ?? 'any';
    // With no_stream the server recognises a repeat by itself, or answers "wrong revision" (handled below).
    if (expected !== 'no_stream') {
      const searchFrom = typeof expected === 'bigint' && expected >= 0n ? expected : END;
      const repeat = await this.findRepeatedAppend(streamId, events, searchFrom);
      if (repeat) return repeat;
    }
    if (typeof expected === 'bigint' && expected < 0n) {
      throw new WrongExpectedRevisionError(streamId, expected, await this.currentRevision(streamId));
    }
    let result: EsdbAppendResult;
    try {
      result = await this.client.appendToStream(streamId, events.map(toEventData), {
        expectedRevision: toEsdbExpectation(expected),
      });
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
      const repeat = await this.findRepeatedAppend(streamId, events, END);
      if (repeat) return repeat;
      const actual = error.actualVersion === NO_STREAM ? undefined : error.actualVersion;
      throw new WrongExpectedRevisionError(streamId, expected, actual);
    }
    const position = result.position?.commit;
    return {
      nextExpectedRevision: result.nextExpectedRevision,
      // A repeat the server recognised itself comes back without a position.
      position: isRealPosition(position)
        ? position
        : await this.positionAtRevision(streamId, result.nextExpectedRevision),
    };
  }

  /** One after the other: EventStoreDB has no transaction across streams. */
  private async appendToStreamsWithoutHooks(
    appends: readonly StreamAppend[],
  ): Promise<StreamAppendOutcome[]> {
    this.assertOpen();
    const outcomes: StreamAppendOutcome[] = [];
    for (const { streamId, events, expectedRevision } of appends) {
      try {
        outcomes.push({
          ok: true,
          result: await this.appendWithoutHooks(streamId, events, { expectedRevision }),
        });
      } catch (error) {
        outcomes.push({ ok: false, error });
      }
    }
    return outcomes;
  }

  async *readStream(streamId: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    const backwards = options.direction === 'backwards';
    let remaining = options.maxCount ?? Infinity;
    let from: ReadRevision;
    if (options.fromRevision === undefined) from = backwards ? END : START;
    else if (options.fromRevision < 0n) {
      if (backwards) return;
      from = START;
    } else from = options.fromRevision;
    while (remaining > 0) {
      this.assertOpen();
      const limit = Math.min(PAGE_SIZE, remaining);
      let read = 0;
      let lastRevision = 0n;
      try {
        for await (const resolved of this.client.readStream(streamId, {
          fromRevision: from,
          direction: backwards ? BACKWARDS : FORWARDS,
          maxCount: limit,
        })) {
          read++;
          const event = resolved.event;
          if (!event) continue;
          lastRevision = event.revision;
          yield toRecordedEvent(event, requirePosition(resolved, streamId));
        }
      } catch (error) {
        if (error instanceof StreamNotFoundError) return;
        throw error;
      }
      if (read < limit || (backwards && lastRevision === 0n)) return;
      remaining -= read;
      from = backwards ? lastRevision - 1n : lastRevision + 1n;
    }
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    const backwards = options.direction === 'backwards';
    const matchesCategories = categoryMatcher(options.filter?.categories);
    let remaining = options.maxCount ?? Infinity;
    let cursor = options.after;
    while (remaining > 0) {
      this.assertOpen();
      if (backwards && cursor !== undefined && cursor <= 0n) return;
      const fromPosition: ReadPosition =
        cursor === undefined || cursor <= 0n ? (backwards ? END : START) : esdbPosition(cursor);
      const pageStart = cursor;
      let read = 0;
      // The client has no server-side filter for reads of $all: system events and categories are skipped here.
      for await (const resolved of this.client.readAll({
        fromPosition,
        direction: backwards ? BACKWARDS : FORWARDS,
        maxCount: PAGE_SIZE,
      })) {
        read++;
        const event = resolved.event;
        if (!event) continue;
        const position = event.position.commit;
        // Forwards reads of $all include the event at the start position; ours are exclusive.
        if (pageStart !== undefined && (backwards ? position >= pageStart : position <= pageStart)) continue;
        cursor = position;
        if (!isUserEvent(event) || !matchesCategories(event)) continue;
        yield toRecordedEvent(event, position);
        if (--remaining === 0) return;
      }
      if (read < PAGE_SIZE || cursor === pageStart) return;
    }
  }

  subscribeToAll(options: SubscribeOptions = {}): Subscription {
    this.assertOpen();
    const subscription = new EventStoreDbSubscription(
      this.client,
      options,
      this.onSubscriptionDropped,
      (closed) => this.subscriptions.delete(closed),
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  async headPosition(): Promise<bigint> {
    this.assertOpen();
    let from: ReadPosition = END;
    for (;;) {
      let read = 0;
      let oldest: bigint | undefined;
      for await (const resolved of this.client.readAll({
        fromPosition: from,
        direction: BACKWARDS,
        maxCount: PAGE_SIZE,
      })) {
        read++;
        const event = resolved.event;
        if (!event) continue;
        if (isUserEvent(event)) return event.position.commit;
        oldest = event.position.commit;
      }
      if (read < PAGE_SIZE || oldest === undefined) return 0n;
      from = esdbPosition(oldest);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.all([...this.subscriptions].map((subscription) => subscription.close()));
    this.closed = true;
    await this.client.dispose();
  }

  /**
   * The result of the earlier append when all these event ids are, in this order, at consecutive revisions
   * among the stream's latest events (searched backwards from `searchFrom`); undefined when none is there.
   */
  private async findRepeatedAppend(
    streamId: string,
    events: readonly NewEvent[],
    searchFrom: ReadRevision,
  ): Promise<AppendResult | undefined> {
    const recent = new Map<string, StoredEventId>();
    try {
      for await (const resolved of this.client.readStream(streamId, {
        fromRevision: searchFrom,
        direction: BACKWARDS,
        maxCount: IDEMPOTENCY_WINDOW,
      })) {
        const event = resolved.event;
        if (event) recent.set(event.id, { revision: event.revision, position: positionOf(resolved) });
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return undefined;
      throw error;
    }
    const stored = events.map((event) => recent.get(event.id));
    if (stored.every((found) => found === undefined)) return undefined;
    const first = stored[0];
    const isRepeat =
      first !== undefined &&
      stored.every((found, index) => found?.revision === first.revision + BigInt(index));
    if (!isRepeat) {
      throw new EventIdConflictError(
        streamId,
        events.filter((event) => recent.has(event.id)).map((event) => event.id),
      );
    }
    const last = stored[stored.length - 1]!;
    return {
      nextExpectedRevision: last.revision,
      position: isRealPosition(last.position)
        ? last.position
        : await this.positionAtRevision(streamId, last.revision),
    };
  }

  private async positionAtRevision(streamId: string, revision: bigint): Promise<bigint> {
    for await (const resolved of this.client.readStream(streamId, { fromRevision: revision, maxCount: 1 })) {
      return requirePosition(resolved, streamId);
    }
    throw new Error(`stream ${streamId}: no event at revision ${revision}`);
  }

  private async currentRevision(streamId: string): Promise<bigint | undefined> {
    try {
      for await (const resolved of this.client.readStream(streamId, {
        fromRevision: END,
        direction: BACKWARDS,
        maxCount: 1,
      })) {
        if (resolved.event) return resolved.event.revision;
      }
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
    return undefined;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('event store closed');
  }
}

/** The client's constants, never the -1/-2 numbers of older protocols (notes §E.2 item 3). */
function toEsdbExpectation(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'any':
      return ANY;
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      return expected;
  }
}

function requirePosition(resolved: ResolvedEvent, streamId: string): bigint {
  const position = positionOf(resolved);
  if (!isRealPosition(position)) {
    throw new Error(
      `stream ${streamId}: the server reports no event positions on stream reads (needs 22.6 or later)`,
    );
  }
  return position;
}
