import type { NewEvent, RecordedEvent } from '../../contracts/events/envelope';

/**
 * The event store port. Revisions are 0-based per stream (the first event of a stream has revision 0n);
 * positions are global, strictly increasing in `$all` order, and comparable as bigints on every adapter.
 */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | bigint;

export interface AppendOptions {
  readonly expectedRevision?: ExpectedRevision;
}

export interface AppendResult {
  /** Revision of the last event of the stream after the append (the one to expect next time). */
  readonly nextExpectedRevision: bigint;
  /** Global position of the last appended event. */
  readonly position: bigint;
}

/** One append of `appendToStreams`. */
export interface StreamAppend {
  readonly streamId: string;
  readonly events: readonly NewEvent[];
  readonly expectedRevision?: ExpectedRevision;
}

/** What became of one append of `appendToStreams`: its result, or what `append` would have thrown. */
export type StreamAppendOutcome =
  { readonly ok: true; readonly result: AppendResult } | { readonly ok: false; readonly error: unknown };

/** One append the store committed: its stream, and the revision and position of its last event. */
export interface CommittedAppend extends AppendResult {
  readonly streamId: string;
}

/**
 * Told of the appends of one `append` or `appendToStreams` call once they are stored, before the call
 * returns (awaited: what it records is there before the writer hears of the write). Failed appends are left
 * out, and a call where every append failed runs no hook. A hook that throws fails the call; the events
 * stay stored.
 */
export type AfterCommitHook = (commits: readonly CommittedAppend[]) => void | Promise<void>;

export interface ReadStreamOptions {
  readonly direction?: 'forwards' | 'backwards';
  /** Inclusive. Default: the start (forwards) or the end (backwards). */
  readonly fromRevision?: bigint;
  readonly maxCount?: number;
}

export interface ReadAllOptions {
  readonly direction?: 'forwards' | 'backwards';
  /** Exclusive: events strictly after (forwards) or before (backwards) this position. */
  readonly after?: bigint;
  readonly maxCount?: number;
  readonly filter?: SubscriptionFilter;
}

export interface SubscriptionFilter {
  /** Only events of streams in these categories (`record` for `record-test.12`). */
  readonly categories?: readonly string[];
}

export interface SubscribeOptions {
  /** Exclusive: the last position already processed; omitted = from the beginning. */
  readonly after?: bigint;
  readonly filter?: SubscriptionFilter;
}

/**
 * What a subscription yields: events in order; `caught-up` once the historic part is read (and again after
 * every later catch-up); `checkpoint` when the filter skipped events, so the consumer can store progress.
 */
export type SubscriptionItem =
  | { readonly kind: 'event'; readonly event: RecordedEvent }
  | { readonly kind: 'caught-up'; readonly position: bigint }
  | { readonly kind: 'checkpoint'; readonly position: bigint };

export interface Subscription extends AsyncIterable<SubscriptionItem> {
  /** Ends the iteration; the iterator returns after the item in flight. */
  close(): Promise<void>;
}

export interface EventStore {
  /**
   * Appends atomically. Throws `WrongExpectedRevisionError` when the expectation fails. Appending events
   * whose ids are already in the stream (a repeated command) appends nothing and returns the original result.
   */
  append(streamId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult>;
  /**
   * Appends to several streams, each append exactly as `append` would do it (its own expectation, atomic,
   * a repeat recognised), in the order given: positions increase from one append to the next. One outcome
   * per append, in order; an append that fails fails alone. How they are committed is the adapter's: SQLite
   * commits them all in one transaction (one commit for a whole bulk request, all or none kept after a
   * crash); EventStoreDB, which has no transaction across streams, appends them one after the other.
   */
  appendToStreams(appends: readonly StreamAppend[]): Promise<StreamAppendOutcome[]>;
  /** Events of one stream; a stream that does not exist yields nothing. */
  readStream(streamId: string, options?: ReadStreamOptions): AsyncIterable<RecordedEvent>;
  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent>;
  /**
   * What `readAll` reads, in the pages the adapter reads them in (none empty), for adapters that read pages
   * (SQLite): a reader that handles events a batch at a time (the personal-data store reads a batch's keys
   * together) takes a page per wait rather than an event.
   */
  readAllPages?(options?: ReadAllOptions): AsyncIterable<readonly RecordedEvent[]>;
  /** Catch up from `after`, then stay live until closed. Adapters resubscribe by themselves after drops. */
  subscribeToAll(options?: SubscribeOptions): Subscription;
  /** Position of the last event in the store (0n when empty). */
  headPosition(): Promise<bigint>;
  /**
   * Position of the last event of these categories (0n when none), for adapters that find it cheaply (an
   * index seek); absent where it would take a scan.
   */
  categoryHead?(categories: readonly string[]): Promise<bigint>;
  /**
   * Adds a hook run after each successful append, as `AfterCommitHook` describes (the seam where a process
   * notes its own writes); the function returned removes it.
   */
  onAfterCommit(hook: AfterCommitHook): () => void;
  close(): Promise<void>;
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    /** Current revision, or undefined when the stream does not exist. */
    readonly actual: bigint | undefined,
  ) {
    super(
      `stream ${streamId}: expected revision ${String(expected)}, actual ${actual === undefined ? 'no stream' : String(actual)}`,
    );
    this.name = 'WrongExpectedRevisionError';
  }
}

/**
 * An append's event ids overlap stored events without being a repeat of one earlier append to the stream
 * (same ids, same order, consecutive revisions): a partial repeat, ids of another stream, or one id twice.
 */
export class EventIdConflictError extends Error {
  constructor(
    readonly streamId: string,
    /** The ids of the append that are already stored, or repeated within it. */
    readonly eventIds: readonly string[],
  ) {
    super(`stream ${streamId}: conflicting event ids (not a repeated append): ${eventIds.join(', ')}`);
    this.name = 'EventIdConflictError';
  }
}
