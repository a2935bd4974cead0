import type { NewEvent, RecordedEvent } from '../../contracts/events/envelope';
import { categoryOf } from '../../contracts/streams';
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
  type Subscription,
} from '../../infra/event-store/port';
import { AfterCommitHooks } from '../../infra/event-store/after-commit';

/** One earlier append, remembered by its event ids so that repeating it exactly appends nothing. */
interface PastAppend {
  readonly streamId: string;
  readonly eventIds: readonly string[];
  readonly result: AppendResult;
}

function expectationHolds(expected: ExpectedRevision, current: bigint | undefined): boolean {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return current === undefined;
  if (expected === 'stream_exists') return current !== undefined;
  return current === expected;
}

/**
 * An event store in memory for unit tests: atomic appends with all four expectations, idempotent repeats
 * by event id, `readStream` and `readAll` as the port describes them. Subscriptions are not supported.
 * Positions start at 1 and increase by 1 per event; the head of an empty store is 0.
 */
export class MemoryEventStore implements EventStore {
  private readonly log: RecordedEvent[] = [];
  private readonly streams = new Map<string, RecordedEvent[]>();
  private readonly appendsByFirstEventId = new Map<string, PastAppend>();
  private readonly storedEventIds = new Set<string>();
  private readonly afterCommit = new AfterCommitHooks();

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
    options: AppendOptions = {},
  ): Promise<AppendResult> {
    // Let other tasks run first, as a store behind a network would.
    await Promise.resolve();
    if (events.length === 0) throw new Error(`stream ${streamId}: an append needs at least one event`);

    const eventIds = events.map((event) => event.id);
    const repeated = this.repeatedAppend(streamId, eventIds);
    if (repeated) return repeated;

    const stream = this.streams.get(streamId) ?? [];
    const current = stream.length === 0 ? undefined : BigInt(stream.length - 1);
    const expected = options.expectedRevision ?? 'any';
    if (!expectationHolds(expected, current))
      throw new WrongExpectedRevisionError(streamId, expected, current);

    const recordedAt = new Date().toISOString();
    const recorded = events.map((event, index): RecordedEvent => ({
      id: event.id,
      type: event.type,
      schemaVersion: event.schemaVersion,
      data: structuredClone(event.data),
      metadata: structuredClone(event.metadata),
      streamId,
      revision: BigInt(stream.length + index),
      position: BigInt(this.log.length + index + 1),
      recordedAt,
    }));
    stream.push(...recorded);
    this.streams.set(streamId, stream);
    this.log.push(...recorded);
    for (const id of eventIds) this.storedEventIds.add(id);

    const last = recorded[recorded.length - 1]!;
    const result: AppendResult = { nextExpectedRevision: last.revision, position: last.position };
    this.appendsByFirstEventId.set(eventIds[0]!, { streamId, eventIds, result });
    return result;
  }

  /** One after the other, each as `append`. */
  private async appendToStreamsWithoutHooks(
    appends: readonly StreamAppend[],
  ): Promise<StreamAppendOutcome[]> {
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
    const stream = [...(this.streams.get(streamId) ?? [])];
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision ?? (backwards ? BigInt(stream.length - 1) : 0n);
    const selected = backwards
      ? stream.filter((event) => event.revision <= from).reverse()
      : stream.filter((event) => event.revision >= from);
    yield* selected.slice(0, options.maxCount ?? selected.length).map((event) => structuredClone(event));
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    const backwards = options.direction === 'backwards';
    const categories = options.filter?.categories;
    const after = options.after;
    const selected = this.log.filter(
      (event) =>
        (after === undefined || (backwards ? event.position < after : event.position > after)) &&
        (categories === undefined || categories.includes(categoryOf(event.streamId))),
    );
    if (backwards) selected.reverse();
    yield* selected.slice(0, options.maxCount ?? selected.length).map((event) => structuredClone(event));
  }

  subscribeToAll(): Subscription {
    throw new Error('MemoryEventStore: subscriptions are not supported');
  }

  async headPosition(): Promise<bigint> {
    return BigInt(this.log.length);
  }

  async close(): Promise<void> {}

  /** The original result when `eventIds` repeat an earlier append to this stream exactly; throws on a partial repeat. */
  private repeatedAppend(streamId: string, eventIds: readonly string[]): AppendResult | undefined {
    const duplicatedWithin = eventIds.filter((id, index) => eventIds.indexOf(id) !== index);
    if (duplicatedWithin.length > 0) throw new EventIdConflictError(streamId, duplicatedWithin);
    const alreadyStored = eventIds.filter((id) => this.storedEventIds.has(id));
    if (alreadyStored.length === 0) return undefined;
    const earlier = this.appendsByFirstEventId.get(eventIds[0]!);
    const isExactRepeat =
      earlier !== undefined &&
      earlier.streamId === streamId &&
      earlier.eventIds.length === eventIds.length &&
      earlier.eventIds.every((id, index) => id === eventIds[index]);
    if (!isExactRepeat) throw new EventIdConflictError(streamId, alreadyStored);
    return earlier.result;
  }
}
