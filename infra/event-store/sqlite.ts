import type Database from 'better-sqlite3';
import type { EventMetadata, NewEvent, RecordedEvent } from '../../contracts/events/envelope';
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
  type SubscribeOptions,
  type Subscription,
} from './port';
import {
  openEventStoreDatabase,
  prepareEventStoreStatements,
  type EventRow,
  PAGE_SIZE,
  ROW_POSITION,
  ROW_REVISION,
  type EventStoreStatements,
  type SynchronousMode,
} from './sqlite-schema';
import { RecentEvents } from './sqlite-recent';
import { SqliteSubscription, toCursor, type SubscriptionSource } from './sqlite-subscription';
import { AfterCommitHooks } from './after-commit';

export interface SqliteEventStoreOptions {
  /** Database file; created with its schema when missing. */
  readonly path: string;
  /** `NORMAL` (default) may lose the last commits on power loss, never on a process crash; `FULL` fsyncs each commit. */
  readonly synchronous?: SynchronousMode;
  /** How often live subscriptions look for appends made by other processes on the same file. */
  readonly pollIntervalMs?: number;
  /** Commit the appends of one event-loop turn together (for a server with concurrent writers). Default off. */
  readonly groupCommit?: boolean;
}

interface PendingAppend {
  readonly streamId: string;
  readonly events: readonly NewEvent[];
  readonly expected: ExpectedRevision;
  /** Told what became of the append once its transaction committed (or failed). */
  readonly settle: (outcome: StreamAppendOutcome) => void;
}

/**
 * Settles an append's promise: bound to it as its `settle` rather than written as a closure there, since the
 * TypeScript loader (tsx) keeps function names, which costs a named closure a `defineProperty` as it is made,
 * once per append or record.
 */
function settlePromise(
  resolve: (result: AppendResult) => void,
  reject: (error: unknown) => void,
  outcome: StreamAppendOutcome,
): void {
  if (outcome.ok) resolve(outcome.result);
  else reject(outcome.error);
}

/** An append's result, plus the events as recorded when this call wrote them (not for a repeat). */
type AppendOutcome = AppendResult & { readonly recorded?: readonly RecordedEvent[] };

const DEFAULT_POLL_INTERVAL_MS = 250;
const FILTER_WINDOW = 10 * PAGE_SIZE;
const LAST_REVISION = Number.MAX_SAFE_INTEGER;

/** The SQLite store, plus a way to hear of appends another thread or process made to the same file. */
export interface SqliteEventStoreHandle extends EventStore {
  /** Re-reads the head at once and wakes live subscribers (instead of waiting for the next poll). */
  notifyExternalAppend(): void;
}

export function createSqliteEventStore(options: SqliteEventStoreOptions): SqliteEventStoreHandle {
  const db = openEventStoreDatabase(options.path, options.synchronous ?? 'NORMAL');
  return new SqliteEventStore(
    db,
    options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
    options.groupCommit ?? false,
  );
}

class SqliteEventStore implements SqliteEventStoreHandle {
  private readonly statements: EventStoreStatements;
  private readonly appendTransaction: Database.Transaction<
    (streamId: string, events: readonly NewEvent[], expected: ExpectedRevision) => AppendOutcome
  >;
  private readonly groupTransaction: Database.Transaction<(commit: () => void) => void>;
  private pendingAppends: PendingAppend[] = [];
  private readonly appendWaiters = new Set<() => void>();
  private readonly subscriptions = new Set<SqliteSubscription>();
  private readonly subscriptionSource: SubscriptionSource;
  private readonly recent = new RecentEvents();
  private readonly afterCommit = new AfterCommitHooks();
  /** The last position this process appended (what `recent` holds only while there are subscribers). */
  private lastAppendedPosition = 0;
  /** The last position of each category asked for, valid while `data_version` is `headsVersion`. */
  private readonly categoryHeads = new Map<string, number>();
  private headsVersion = -1;
  /** The database's head as last read, and when: appends by other processes are seen at the next read. */
  private databaseHead = { position: 0, readAt: -Infinity };
  private closed = false;

  constructor(
    private readonly db: Database.Database,
    pollIntervalMs: number,
    private readonly groupCommit: boolean,
  ) {
    this.statements = prepareEventStoreStatements(db);
    this.groupTransaction = db.transaction((commit: () => void) => commit());
    this.appendTransaction = db.transaction(
      (streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): AppendOutcome =>
        this.appendInTransaction(streamId, events, expected),
    );
    this.subscriptionSource = {
      headPosition: () => this.knownHead(pollIntervalMs),
      readAfter: (after, head, limit) =>
        this.recentCovers(after, head)
          ? this.recent.read(after, head, limit)
          : this.statements.allForwards.all(after).map(toRecordedEvent),
      readCategoriesAfter: (after, upTo, categories, limit) =>
        this.recentCovers(after, upTo)
          ? this.recent.read(after, upTo, limit, new Set(categories))
          : this.categoryRows('forwards', after, upTo, categories).map(toRecordedEvent),
      onNextAppend: (wake) => {
        this.appendWaiters.add(wake);
        return () => this.appendWaiters.delete(wake);
      },
      pollIntervalMs,
      pageSize: PAGE_SIZE,
      filterWindow: FILTER_WINDOW,
    };
  }

  /**
   * Each append is one transaction. With group commit on, appends made in the same event-loop turn share
   * one transaction instead (one failing expectation still fails only its own append):
   * one commit for many concurrent requests, at the price of one event-loop turn of latency. Every append
   * resolves only after its commit.
   */
  append(streamId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult> {
    return this.afterCommit.append(streamId, this.appendWithoutHooks(streamId, events, options));
  }

  appendToStreams(appends: readonly StreamAppend[]): Promise<StreamAppendOutcome[]> {
    return this.afterCommit.appendToStreams(appends, this.appendToStreamsWithoutHooks(appends));
  }

  onAfterCommit(hook: AfterCommitHook): () => void {
    return this.afterCommit.add(hook);
  }

  private appendWithoutHooks(
    streamId: string,
    events: readonly NewEvent[],
    options?: AppendOptions,
  ): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new Error('event store closed'));
    if (events.length === 0) return Promise.reject(emptyAppendError(streamId));
    return new Promise((resolve, reject) => {
      this.enqueue([
        {
          streamId,
          events,
          expected: options?.expectedRevision ?? 'any',
          settle: settlePromise.bind(undefined, resolve, reject),
        },
      ]);
    });
  }

  /** All in one transaction (with the group's other appends, if group commit is on). */
  private appendToStreamsWithoutHooks(appends: readonly StreamAppend[]): Promise<StreamAppendOutcome[]> {
    if (this.closed) return Promise.reject(new Error('event store closed'));
    if (appends.length === 0) return Promise.resolve([]);
    return new Promise((resolve) => {
      const outcomes = new Array<StreamAppendOutcome>(appends.length);
      let unsettled = appends.length;
      const settleAt = (index: number, outcome: StreamAppendOutcome): void => {
        outcomes[index] = outcome;
        if (--unsettled === 0) resolve(outcomes);
      };
      const pending: PendingAppend[] = [];
      appends.forEach(({ streamId, events, expectedRevision }, index) => {
        if (events.length === 0) settleAt(index, { ok: false, error: emptyAppendError(streamId) });
        else
          pending.push({
            streamId,
            events,
            expected: expectedRevision ?? 'any',
            settle: settleAt.bind(undefined, index),
          });
      });
      this.enqueue(pending);
    });
  }

  private enqueue(appends: readonly PendingAppend[]): void {
    if (appends.length === 0) return;
    const firstOfTurn = this.pendingAppends.length === 0;
    this.pendingAppends.push(...appends);
    if (!this.groupCommit) this.commitPendingAppends();
    else if (firstOfTurn) setImmediate(() => this.commitPendingAppends());
  }

  private commitPendingAppends(): void {
    const batch = this.pendingAppends;
    this.pendingAppends = [];
    if (batch.length === 0) return;
    // Read again after this commit (synchronous: nothing reads them before it is done).
    this.categoryHeads.clear();
    const outcomes: Array<{ result: AppendOutcome } | { error: unknown }> = [];
    try {
      // IMMEDIATE takes the write lock before reading revisions, so another process cannot interleave.
      if (batch.length === 1) {
        outcomes.push(this.appendOne(batch[0]!, this.appendTransaction.immediate));
      } else {
        this.groupTransaction.immediate(() => {
          for (const append of batch) {
            // A one-event append writes one row: a statement that fails keeps nothing of itself, so it needs
            // no savepoint of its own (SQLite keeps the transaction open after a constraint failure).
            const transaction = append.events.length === 1 ? this.appendInGroup : this.appendTransaction;
            outcomes.push(this.appendOne(append, transaction));
            // An error SQLite answers by rolling the whole transaction back (I/O, a full disk) must stop the
            // batch: the appends after it would otherwise each commit on their own, yet be reported failed.
            if (!this.db.inTransaction) throw new Error('the append transaction was rolled back');
          }
        });
      }
    } catch (error) {
      for (const append of batch) append.settle({ ok: false, error });
      return;
    }
    batch.forEach((append, index) => {
      const outcome = outcomes[index]!;
      if ('error' in outcome) return append.settle({ ok: false, error: outcome.error });
      if (outcome.result.recorded) this.recent.push(outcome.result.recorded);
      this.lastAppendedPosition = Math.max(this.lastAppendedPosition, Number(outcome.result.position));
      append.settle({
        ok: true,
        result: {
          nextExpectedRevision: outcome.result.nextExpectedRevision,
          position: outcome.result.position,
        },
      });
    });
    // Also after repeats recognised in the transaction: a spurious wake-up only costs subscribers one read.
    this.wakeSubscribers();
  }

  /** `appendInTransaction` inside the group's transaction, without a savepoint (see `commitPendingAppends`). */
  private readonly appendInGroup = (
    streamId: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
  ): AppendOutcome => this.appendInTransaction(streamId, events, expected);

  /** One append, in its own transaction (or inside the group's transaction). */
  private appendOne(
    { streamId, events, expected }: PendingAppend,
    transaction: (streamId: string, events: readonly NewEvent[], expected: ExpectedRevision) => AppendOutcome,
  ): { result: AppendOutcome } | { error: unknown } {
    try {
      return { result: transaction(streamId, events, expected) };
    } catch (error) {
      if (!isEventIdUniqueViolation(error)) return { error };
      try {
        const repeat = this.findRepeatedAppend(streamId, events);
        return repeat
          ? { result: repeat }
          : { error: new EventIdConflictError(streamId, this.storedEventIds(events)) };
      } catch (conflict) {
        return { error: conflict };
      }
    }
  }

  /**
   * Whether the ring covers (after, upTo] for a subscriber, after reading what it lacks at its end: a live
   * subscriber at or past the ring's end reads every event up to `upTo` (all categories) into the ring,
   * so the other live subscribers (each projection has its own) read and parse those events only once.
   * Subscribers further behind read the database themselves and leave the ring alone.
   */
  private recentCovers(after: number, upTo: number): boolean {
    if (this.recent.covers(after, upTo)) return true;
    const behindRing = this.recent.end > 0 && !this.recent.reaches(after);
    // A reader ahead of the ring (or an empty ring) starts it anew at its own position.
    let cursor = this.recent.reaches(after) && after <= this.recent.end ? this.recent.end : after;
    if (behindRing || upTo - cursor > this.recent.refillLimit) return false;
    while (cursor < upTo) {
      const rows = this.statements.allForwards.all(cursor);
      if (rows.length === 0) break;
      this.recent.push(rows.map(toRecordedEvent));
      cursor = rows[rows.length - 1]![ROW_POSITION];
    }
    return this.recent.covers(after, upTo);
  }

  notifyExternalAppend(): void {
    this.databaseHead = { position: this.databaseHead.position, readAt: -Infinity };
    this.wakeSubscribers();
  }

  /**
   * The head for subscribers: this process's own appends at once, the database's head (other processes'
   * appends) at most once per half poll interval.
   */
  private knownHead(pollIntervalMs: number): number {
    const now = performance.now();
    if (now - this.databaseHead.readAt >= pollIntervalMs / 2) {
      this.databaseHead = { position: this.statements.headPosition.get() ?? 0, readAt: now };
    }
    return Math.max(this.databaseHead.position, this.lastAppendedPosition);
  }

  async *readStream(streamId: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    const forwards = options.direction !== 'backwards';
    let remaining = options.maxCount ?? Infinity;
    let revision =
      options.fromRevision === undefined ? (forwards ? 0 : LAST_REVISION) : toCursor(options.fromRevision);
    while (remaining > 0) {
      this.assertOpen();
      const limit = remaining === 1 ? 1 : PAGE_SIZE;
      const rows = this.streamStatement(forwards, limit).all(streamId, revision);
      for (const row of rows) {
        yield toRecordedEvent(row);
        if (--remaining === 0) return;
      }
      if (rows.length < limit) return;
      revision = rows[rows.length - 1]![ROW_REVISION] + (forwards ? 1 : -1);
    }
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    let remaining = options.maxCount ?? Infinity;
    if (remaining <= 0) return;
    for (const rows of this.rowPagesOf(options)) {
      for (const row of rows) {
        yield toRecordedEvent(row);
        if (--remaining === 0) return;
      }
    }
  }

  async *readAllPages(options: ReadAllOptions = {}): AsyncIterable<readonly RecordedEvent[]> {
    let remaining = options.maxCount ?? Infinity;
    if (remaining <= 0) return;
    for (const rows of this.rowPagesOf(options)) {
      if (rows.length >= remaining) {
        yield rows.slice(0, remaining).map(toRecordedEvent);
        return;
      }
      remaining -= rows.length;
      yield rows.map(toRecordedEvent);
    }
  }

  /** The pages of rows a read of all events reads, before its maximum cuts them. */
  private rowPagesOf(options: ReadAllOptions): Iterable<readonly EventRow[]> {
    const categories = options.filter?.categories;
    if (options.maxCount === 1 && categories === undefined) {
      // One event, not a page of them: a search by time makes a few dozen such reads.
      this.assertOpen();
      const row =
        options.direction === 'backwards'
          ? this.statements.allBackwardsOne.get(
              options.after === undefined ? Number.MAX_SAFE_INTEGER : toCursor(options.after),
            )
          : this.statements.allForwardsOne.get(toCursor(options.after ?? 0n));
      return row === undefined ? [] : [[row]];
    }
    return options.direction === 'backwards'
      ? this.pagesBackwards(options.after, categories)
      : this.pagesForwards(options.after, categories);
  }

  subscribeToAll(options: SubscribeOptions = {}): Subscription {
    this.assertOpen();
    const subscription = new SqliteSubscription(this.subscriptionSource, options, (closed) =>
      this.subscriptions.delete(closed),
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  async headPosition(): Promise<bigint> {
    this.assertOpen();
    return BigInt(this.statements.headPosition.get() ?? 0);
  }

  /**
   * Asked on every authenticated request (credential reads wait for the credential categories' heads), so the
   * heads are kept until a commit: this connection's clears them as it begins, another's (any thread or
   * process) shows as a new `data_version`.
   */
  async categoryHead(categories: readonly string[]): Promise<bigint> {
    this.assertOpen();
    const version = this.statements.dataVersion.get()!;
    if (version !== this.headsVersion) {
      this.categoryHeads.clear();
      this.headsVersion = version;
    }
    let head = 0;
    for (const category of categories) {
      let known = this.categoryHeads.get(category);
      if (known === undefined) {
        known = this.statements.categoryHead.get(category) ?? 0;
        this.categoryHeads.set(category, known);
      }
      head = Math.max(head, known);
    }
    return BigInt(head);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.pendingAppends.length > 0) this.commitPendingAppends();
    await Promise.all([...this.subscriptions].map((subscription) => subscription.close()));
    this.closed = true;
    this.db.close();
  }

  private appendInTransaction(
    streamId: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
  ): AppendOutcome {
    const current = this.statements.currentRevision.get(streamId);
    if (!expectationHolds(expected, current)) {
      const repeat = this.findRepeatedAppend(streamId, events);
      if (repeat) return repeat;
      throw new WrongExpectedRevisionError(
        streamId,
        expected,
        current === undefined ? undefined : BigInt(current),
      );
    }
    const recordedAt = new Date().toISOString();
    const category = categoryOf(streamId);
    let revision = current === undefined ? 0 : current + 1;
    let position: number | bigint = 0;
    // For this process's live subscribers only (see `recent`): without any, a ring of recorded events only
    // made work for the garbage collector (a third of an append's time).
    const recorded: RecordedEvent[] | undefined = this.subscriptions.size > 0 ? [] : undefined;
    for (const event of events) {
      position = this.statements.insert.run(
        streamId,
        revision,
        event.id,
        event.type,
        event.schemaVersion,
        JSON.stringify(event.data) ?? 'null',
        JSON.stringify(event.metadata),
        recordedAt,
        category,
      ).lastInsertRowid;
      recorded?.push({
        ...event,
        streamId,
        revision: BigInt(revision),
        position: BigInt(position),
        recordedAt,
      });
      revision++;
    }
    return {
      nextExpectedRevision: BigInt(revision - 1),
      position: BigInt(position),
      ...(recorded && { recorded }),
    };
  }

  /**
   * The result of the earlier append when all these event ids are already, in this order, at consecutive
   * revisions of this stream; undefined when none of them is stored. Anything in between is a conflict.
   */
  private findRepeatedAppend(streamId: string, events: readonly NewEvent[]): AppendResult | undefined {
    const stored = events.map((event) => this.statements.findEventId.get(event.id));
    if (stored.every((row) => row === undefined)) return undefined;
    const first = stored[0];
    const isRepeat =
      first !== undefined &&
      stored.every((row, index) => row?.stream_id === streamId && row.revision === first.revision + index);
    if (!isRepeat) throw new EventIdConflictError(streamId, this.storedEventIds(events));
    const last = stored[stored.length - 1]!;
    return { nextExpectedRevision: BigInt(last.revision), position: BigInt(last.position) };
  }

  private storedEventIds(events: readonly NewEvent[]): string[] {
    const seen = new Set<string>();
    return events
      .filter((event) => {
        const duplicateInAppend = seen.has(event.id);
        seen.add(event.id);
        return duplicateInAppend || this.statements.findEventId.get(event.id) !== undefined;
      })
      .map((event) => event.id);
  }

  private *pagesForwards(after: bigint | undefined, categories: readonly string[] | undefined) {
    let cursor = toCursor(after ?? 0n);
    for (;;) {
      this.assertOpen();
      if (categories === undefined) {
        const rows = this.statements.allForwards.all(cursor);
        if (rows.length > 0) yield rows;
        if (rows.length < PAGE_SIZE) return;
        cursor = rows[rows.length - 1]![ROW_POSITION];
        continue;
      }
      const head = this.statements.headPosition.get() ?? 0;
      if (cursor >= head) return;
      const upTo = Math.min(cursor + FILTER_WINDOW, head);
      const rows = this.categoryRows('forwards', cursor, upTo, categories);
      if (rows.length > 0) yield rows;
      cursor = rows.length === PAGE_SIZE ? rows[rows.length - 1]![ROW_POSITION] : upTo;
    }
  }

  private *pagesBackwards(before: bigint | undefined, categories: readonly string[] | undefined) {
    let cursor = before === undefined ? Number.MAX_SAFE_INTEGER : toCursor(before);
    for (;;) {
      this.assertOpen();
      if (categories === undefined) {
        const rows = this.statements.allBackwards.all(cursor);
        if (rows.length > 0) yield rows;
        if (rows.length < PAGE_SIZE) return;
        cursor = rows[rows.length - 1]![ROW_POSITION];
        continue;
      }
      cursor = Math.min(cursor, (this.statements.headPosition.get() ?? 0) + 1);
      if (cursor <= 1) return;
      const downTo = Math.max(1, cursor - FILTER_WINDOW);
      const rows = this.categoryRows('backwards', cursor, downTo, categories);
      if (rows.length > 0) yield rows;
      cursor = rows.length === PAGE_SIZE ? rows[rows.length - 1]![ROW_POSITION] : downTo;
    }
  }

  private streamStatement(forwards: boolean, limit: 1 | typeof PAGE_SIZE) {
    const { statements } = this;
    if (forwards) return limit === 1 ? statements.streamForwardsOne : statements.streamForwards;
    return limit === 1 ? statements.streamBackwardsOne : statements.streamBackwards;
  }

  /** Rows of the categories between `from` (exclusive) and `to` (inclusive), in the direction's order. */
  private categoryRows(
    direction: 'forwards' | 'backwards',
    from: number,
    to: number,
    categories: readonly string[],
  ): EventRow[] {
    const { statements } = this;
    if (categories.length === 1) {
      const statement = direction === 'forwards' ? statements.categoryForwards : statements.categoryBackwards;
      return statement.all(from, to, categories[0]!);
    }
    const statement =
      direction === 'forwards' ? statements.categoriesForwards : statements.categoriesBackwards;
    return statement.all(from, to, JSON.stringify(categories));
  }

  private wakeSubscribers(): void {
    if (this.appendWaiters.size === 0) return;
    const waiters = [...this.appendWaiters];
    this.appendWaiters.clear();
    for (const wake of waiters) wake();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('event store closed');
  }
}

function emptyAppendError(streamId: string): Error {
  return new Error(`stream ${streamId}: an append needs at least one event`);
}

function expectationHolds(expected: ExpectedRevision, current: number | undefined): boolean {
  switch (expected) {
    case 'any':
      return true;
    case 'no_stream':
      return current === undefined;
    case 'stream_exists':
      return current !== undefined;
    default:
      return current !== undefined && BigInt(current) === expected;
  }
}

/** By shape, not `instanceof`: the native module's error class belongs to whichever realm loaded it first. */
function isEventIdUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (
    code === 'SQLITE_CONSTRAINT_UNIQUE' && typeof message === 'string' && message.includes('events.event_id')
  );
}

function toRecordedEvent(row: EventRow): RecordedEvent {
  const [position, streamId, revision, id, type, schemaVersion, data, metadata, recordedAt] = row;
  return {
    id,
    type,
    schemaVersion,
    data: parseJson(data),
    metadata: parseJson(metadata) as EventMetadata,
    streamId,
    revision: BigInt(revision),
    position: BigInt(position),
    recordedAt,
  };
}

function parseJson(text: string): unknown {
  return JSON.parse(text);
}
