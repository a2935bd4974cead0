import type Database from 'better-sqlite3';
import { openSqliteFile } from '../sqlite-file';
import { defaultRetryBackoff, retryDelayMs, type RetryBackoff } from './backoff';
import { silentStreamLogger, type StreamLogger } from './logger';
import { KeyedWindow } from './keyed-window';
import type { ConsumedMessage, ConsumeOptions, Consumer, Stream, StreamMessage } from './port';

export interface InProcessStreamOptions {
  /** The SQLite file holding the log and the groups' offsets; created when missing. */
  readonly path: string;
  /**
   * How often an idle consumer looks for messages appended by another process on the same file. Publishes
   * from this stream wake its consumers at once. Default 250 ms.
   */
  readonly pollIntervalMs?: number;
  /** Messages a consumer reads per query: bounds its memory. Default 256. */
  readonly pageSize?: number;
  readonly retryBackoff?: RetryBackoff;
  /** 'full' also survives power loss (an fsync per publish); 'normal' survives a crash of the process. */
  readonly synchronous?: 'normal' | 'full';
  readonly logger?: StreamLogger;
}

const DEFAULT_PAGE_SIZE = 256;

function pageSizeOf(options: { readonly pageSize?: number }): number {
  const size = options.pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isSafeInteger(size) || size < 1)
    throw new RangeError(`pageSize must be a positive integer, got ${size}`);
  return size;
}

/** Every topic has one partition, so the log's total order also keeps each key's order. */
const PARTITION = 0;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS stream_messages (
    topic TEXT NOT NULL,
    message_offset INTEGER NOT NULL,
    message_key TEXT NOT NULL,
    value TEXT NOT NULL,
    headers TEXT,
    PRIMARY KEY (topic, message_offset)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS stream_group_offsets (
    topic TEXT NOT NULL,
    group_name TEXT NOT NULL,
    next_offset INTEGER NOT NULL,
    PRIMARY KEY (topic, group_name)
  ) WITHOUT ROWID;
`;

interface MessageRow {
  readonly message_offset: number;
  readonly message_key: string;
  readonly value: string;
  readonly headers: string | null;
}

/**
 * The embedded stream: a durable log in a SQLite file (WAL). Each topic is one partition with offsets
 * 0, 1, 2…; a group's committed offset is the next offset it will read, so a restart resumes there.
 *
 * One active consumer per (topic, group) per stream: a second `consume` of the same pair is refused while
 * the first runs. Consumers of the same group in other processes sharing the file are not coordinated: each
 * would get every message past the committed offset (duplicates, never losses, as commits only move
 * forward), so run a group in one process.
 */
export function createInProcessStream(options: InProcessStreamOptions): InProcessStreamHandle {
  return new InProcessStream(options);
}

/** The embedded stream, which another thread of this process can wake after it published on the same file. */
export interface InProcessStreamHandle extends Stream {
  /** Messages were appended to `topic` by another stream on the same file: its consumers look at once. */
  notifyExternalPublish(topic: string): void;
}

class InProcessStream implements InProcessStreamHandle {
  private readonly db: Database.Database;
  private readonly consumers = new Map<string, InProcessConsumer>();
  private closing: Promise<void> | undefined;

  private readonly selectLastOffset;
  private readonly insertMessage;
  private readonly selectPage;
  private readonly selectCommitted;
  private readonly upsertCommitted;
  private readonly insertStartOffset;
  private readonly append;
  private readonly fixStartOffset;

  constructor(private readonly options: InProcessStreamOptions) {
    this.db = openSqliteFile(options.path, options.synchronous === 'full' ? 'FULL' : 'NORMAL');
    this.db.exec(SCHEMA);

    this.selectLastOffset = this.db.prepare<[string], { last: number | null }>(
      'SELECT MAX(message_offset) AS last FROM stream_messages WHERE topic = ?',
    );
    this.insertMessage = this.db.prepare<[string, number, string, string, string | null]>(
      `INSERT INTO stream_messages (topic, message_offset, message_key, value, headers)
       VALUES (?, ?, ?, ?, ?)`,
    );
    // A literal LIMIT: a bound one makes SQLite re-prepare the statement on every call.
    this.selectPage = this.db.prepare<[string, number], MessageRow>(
      `SELECT message_offset, message_key, value, headers FROM stream_messages
       WHERE topic = ? AND message_offset >= ? ORDER BY message_offset LIMIT ${pageSizeOf(this.options)}`,
    );
    this.selectCommitted = this.db.prepare<[string, string], { next_offset: number }>(
      'SELECT next_offset FROM stream_group_offsets WHERE topic = ? AND group_name = ?',
    );
    this.upsertCommitted = this.db.prepare<[string, string, number]>(
      `INSERT INTO stream_group_offsets (topic, group_name, next_offset) VALUES (?, ?, ?)
       ON CONFLICT (topic, group_name) DO UPDATE SET next_offset = MAX(next_offset, excluded.next_offset)`,
    );
    this.insertStartOffset = this.db.prepare<[string, string, number]>(
      `INSERT INTO stream_group_offsets (topic, group_name, next_offset) VALUES (?, ?, ?)
       ON CONFLICT (topic, group_name) DO NOTHING`,
    );

    this.append = this.db.transaction((topic: string, messages: readonly StreamMessage[]) => {
      let offset = this.nextOffsetOf(topic);
      for (const message of messages) {
        this.insertMessage.run(topic, offset, message.key, message.value, headersToJson(message.headers));
        offset += 1;
      }
    });
    // A new group fixes its start once, like Kafka's committed default offset: later runs resume from it.
    this.fixStartOffset = this.db.transaction((topic: string, group: string, fromBeginning: boolean) => {
      this.insertStartOffset.run(topic, group, fromBeginning ? 0 : this.nextOffsetOf(topic));
      const committed = this.selectCommitted.get(topic, group);
      if (!committed) throw new Error(`stream: no start offset for group "${group}" on topic "${topic}"`);
      return committed.next_offset;
    });
  }

  async publish(topic: string, messages: readonly StreamMessage[]): Promise<void> {
    this.assertOpen();
    assertTopicName(topic);
    if (messages.length === 0) return;
    // IMMEDIATE takes the write lock up front, so two processes never compute the same next offset.
    this.append.immediate(topic, messages);
    for (const consumer of this.consumers.values()) {
      if (consumer.topic === topic) consumer.wake();
    }
  }

  notifyExternalPublish(topic: string): void {
    for (const consumer of this.consumers.values()) if (consumer.topic === topic) consumer.wake();
  }

  async consume(options: ConsumeOptions): Promise<Consumer> {
    this.assertOpen();
    assertTopicName(options.topic);
    const id = `${options.topic}\u0000${options.group}`;
    if (this.consumers.has(id)) {
      throw new Error(
        `stream: group "${options.group}" already consumes topic "${options.topic}" on this stream; ` +
          'stop that consumer first',
      );
    }
    const startOffset = this.fixStartOffset.immediate(
      options.topic,
      options.group,
      options.fromBeginning ?? true,
    );
    const consumer = new InProcessConsumer(
      {
        topic: options.topic,
        group: options.group,
        handle: options.handle,
        concurrency: options.concurrency ?? 1,
        readPage: (from) => this.selectPage.all(options.topic, from),
        commit: (nextOffset) => {
          this.upsertCommitted.run(options.topic, options.group, nextOffset);
        },
        pollIntervalMs: this.options.pollIntervalMs ?? 250,
        retryBackoff: this.options.retryBackoff ?? defaultRetryBackoff,
        logger: this.options.logger ?? silentStreamLogger,
        onStopped: () => this.consumers.delete(id),
      },
      startOffset,
    );
    this.consumers.set(id, consumer);
    consumer.start();
    return consumer;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all([...this.consumers.values()].map((consumer) => consumer.stop()));
      this.db.close();
    })();
    return this.closing;
  }

  private nextOffsetOf(topic: string): number {
    return (this.selectLastOffset.get(topic)?.last ?? -1) + 1;
  }

  private assertOpen(): void {
    if (this.closing) throw new Error('stream: the in-process stream is closed');
  }
}

interface ConsumerDependencies {
  readonly topic: string;
  readonly group: string;
  readonly handle: ConsumeOptions['handle'];
  readonly concurrency: number;
  readonly readPage: (fromOffset: number) => MessageRow[];
  readonly commit: (nextOffset: number) => void;
  readonly pollIntervalMs: number;
  readonly retryBackoff: RetryBackoff;
  readonly logger: StreamLogger;
  readonly onStopped: () => void;
}

/** How long a concurrent consumer lets handled messages gather before it commits them. */
const COMMIT_EVERY_MS = 20;

/** A pull loop: read a page from the next offset, hand over each message, commit it once handled. */
class InProcessConsumer implements Consumer {
  readonly topic: string;
  private stopping = false;
  private stopped: Promise<void> | undefined;
  /** Ends the current wait early: set while the loop sleeps. */
  private endWait: (() => void) | undefined;
  /** Whether a publish may end the current wait (idle waits yes, back-off waits no). */
  private waitingForMessages = false;
  private running: Promise<void> = Promise.resolve();
  /** Reads of the storage that failed in a row (their back-off grows with them). */
  private storageFailures = 0;

  constructor(
    private readonly deps: ConsumerDependencies,
    private nextOffset: number,
  ) {
    this.topic = deps.topic;
  }

  start(): void {
    this.running = this.deps.concurrency > 1 ? this.runWindowed() : this.run();
  }

  /** A message was appended to this consumer's topic. */
  wake(): void {
    if (this.waitingForMessages) this.endWait?.();
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.stopping = true;
      this.endWait?.();
      await this.running;
      this.deps.onStopped();
    })();
    return this.stopped;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const page = await this.readNextPage();
      for (const row of page) {
        if (this.stopping) return;
        if (!(await this.deliver(row))) return;
        // Not committed (the store refused): a restart would deliver it again, which at-least-once allows.
        this.commit(row.message_offset + 1);
        this.nextOffset = row.message_offset + 1;
      }
      if (page.length > 0) await yieldToEventLoop();
    }
  }

  /** The messages from `nextOffset` on; none after a wait (nothing new yet, or the storage failed). */
  private async readNextPage(): Promise<MessageRow[]> {
    try {
      const page = this.deps.readPage(this.nextOffset);
      this.storageFailures = 0;
      if (page.length === 0) await this.sleep(this.deps.pollIntervalMs, true);
      return page;
    } catch (error) {
      this.storageFailures += 1;
      await this.waitAfterStorageError(error, this.storageFailures);
      return [];
    }
  }

  /** Commits the group's offset; a failure is logged (the messages since are delivered again after a restart). */
  private commit(offset: number): void {
    try {
      this.deps.commit(offset);
    } catch (error) {
      this.deps.logger.error(
        { topic: this.topic, group: this.deps.group, offset: offset - 1, err: error },
        'stream: could not commit an offset',
      );
    }
  }

  /**
   * `concurrency` messages at once (see `KeyedWindow`): reads ahead a bounded page of messages, commits the
   * contiguous prefix of handled ones as it grows, at most every `COMMIT_EVERY_MS` (a commit is a write, and
   * most messages are handled in microseconds; a crash redelivers the few handled since, as at-least-once allows).
   */
  private async runWindowed(): Promise<void> {
    const readAhead = Math.max(256, 16 * this.deps.concurrency);
    let commitTimer: NodeJS.Timeout | undefined;
    const commitSoon = (): void => {
      commitTimer ??= setTimeout(() => {
        commitTimer = undefined;
        commitHandled();
      }, COMMIT_EVERY_MS);
    };
    const commitHandled = (): void => {
      const last = window.takeHandled();
      if (last !== undefined) this.commit(last.message_offset + 1);
    };
    const window = new KeyedWindow<MessageRow>(this.deps.concurrency, (row) => this.deliver(row), commitSoon);
    while (!this.stopping) {
      // A full window may be full of handled messages waiting for the commit timer: commit them now.
      if (window.size >= readAhead) commitHandled();
      await window.whenBelow(readAhead);
      if (this.stopping) break;
      const page = await this.readNextPage();
      for (const row of page) {
        if (this.stopping || window.size >= readAhead) break;
        window.add(row, row.message_key);
        this.nextOffset = row.message_offset + 1;
      }
      if (page.length > 0) await yieldToEventLoop();
    }
    await window.idle();
    clearTimeout(commitTimer);
    commitHandled();
  }

  /** Hands the message over until its handler resolves; false when the consumer stopped first. */
  private async deliver(row: MessageRow): Promise<boolean> {
    const message: ConsumedMessage = {
      topic: this.topic,
      partition: PARTITION,
      offset: String(row.message_offset),
      key: row.message_key,
      value: row.value,
      headers: headersFromJson(row.headers),
    };
    for (let failures = 1; !this.stopping; failures += 1) {
      try {
        await this.deps.handle(message);
        return true;
      } catch (error) {
        const retryInMs = retryDelayMs(failures, this.deps.retryBackoff);
        this.deps.logger.warn(
          {
            topic: this.topic,
            group: this.deps.group,
            offset: message.offset,
            failures,
            retryInMs,
            err: error,
          },
          'stream: handler failed; the message will be delivered again',
        );
        await this.sleep(retryInMs, false);
      }
    }
    return false;
  }

  private async waitAfterStorageError(error: unknown, failures: number): Promise<void> {
    const retryInMs = retryDelayMs(failures, this.deps.retryBackoff);
    this.deps.logger.error(
      { topic: this.topic, group: this.deps.group, retryInMs, err: error },
      'stream: could not read the log',
    );
    await this.sleep(retryInMs, false);
  }

  private sleep(ms: number, wakeOnPublish: boolean): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.endWait = undefined;
        this.waitingForMessages = false;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.endWait = finish;
      this.waitingForMessages = wakeOnPublish;
    });
  }
}

/**
 * Lets timers, I/O and signals run between pages: handlers that resolve at once would otherwise keep the loop
 * on microtasks for a whole backlog, and the process would answer nothing until it is through.
 */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function assertTopicName(topic: string): void {
  if (topic.length === 0) throw new Error('stream: a topic name must not be empty');
}

function headersToJson(headers: StreamMessage['headers']): string | null {
  if (!headers || Object.keys(headers).length === 0) return null;
  return JSON.stringify(headers);
}

function headersFromJson(json: string | null): Record<string, string> {
  if (json === null) return {};
  const parsed: unknown = JSON.parse(json);
  const headers: Record<string, string> = {};
  if (typeof parsed === 'object' && parsed !== null) {
    for (const [name, value] of Object.entries(parsed)) {
      if (typeof value === 'string') headers[name] = value;
    }
  }
  return headers;
}
