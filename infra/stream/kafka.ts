import {
  Kafka,
  logLevel,
  Partitioners,
  type Admin,
  type Consumer as KafkaConsumer,
  type EachBatchPayload,
  type IHeaders,
  type KafkaMessage,
  type logCreator,
  type Producer,
} from 'kafkajs';
import { defaultRetryBackoff, retryDelayMs, type RetryBackoff } from './backoff';
import { KeyedWindow } from './keyed-window';
import { silentStreamLogger, type StreamLogger } from './logger';
import {
  messageBytes,
  type ConsumedMessage,
  type ConsumeOptions,
  type Consumer,
  type Stream,
  type StreamMessage,
} from './port';

export interface KafkaStreamOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  /** Partitions of the topics this stream creates. Default 3. */
  readonly partitions?: number;
  /** Replication factor of the topics this stream creates. Default 1. */
  readonly replicationFactor?: number;
  /** A consumer that sends no heartbeat for this long leaves its group. Default 10 s. */
  readonly sessionTimeoutMs?: number;
  /** Default 1 s. */
  readonly heartbeatIntervalMs?: number;
  /** Longest a fetch waits for new messages; an idle consumer stops within about this. Default 500 ms. */
  readonly maxWaitTimeMs?: number;
  /** Partitions a consumer hands over at once (one message at a time per partition). Default 1. */
  readonly concurrentPartitions?: number;
  /** How long `consume` waits to join its group and fetch its start offsets. Default 30 s. */
  readonly joinTimeoutMs?: number;
  /**
   * Retries of a failed send before `publish` rejects. Default 5. kafkajs warns that bounded retries may
   * break idempotence; a failed publish therefore replaces the producer, so no sequence number is reused.
   */
  readonly publishRetries?: number;
  /**
   * The most bytes one send puts in a partition's batch, below the broker's `message.max.bytes` (1 MiB by
   * default): a publish of more goes in several sends, in order, and no one message may be larger. Default 900,000.
   */
  readonly maxBatchBytes?: number;
  readonly retryBackoff?: RetryBackoff;
  readonly logger?: StreamLogger;
}

/**
 * The Kafka stream on kafkajs: an idempotent producer (acks from all in-sync replicas, one request in flight,
 * so a key's messages land in order), topics created on demand, and consumer groups that commit an offset
 * only once its handler resolved.
 *
 * Consumers use `eachBatch` with `eachBatchAutoResolve: false` and autoCommit: an offset is resolved after
 * its handler resolves, and kafkajs commits exactly the resolved offsets (after each batch and on stop).
 * With `eachMessage` kafkajs resolves an offset whenever the callback returns, so a swallowed rejection
 * would be committed (the message skipped), and a thrown one crashes and restarts the whole consumer. On a
 * rejection the partition seeks back to the message and pauses for a back-off; its later messages wait, so
 * a key's order holds.
 */
const DEFAULT_MAX_BATCH_BYTES = 900_000;

/** Consecutive parts of `messages` of at most `maxBytes` each (a larger message alone is refused). */
function partsOf(messages: readonly StreamMessage[], maxBytes: number): StreamMessage[][] {
  const parts: StreamMessage[][] = [];
  let part: StreamMessage[] = [];
  let bytes = 0;
  for (const message of messages) {
    const size = messageBytes(message);
    if (size > maxBytes)
      throw new Error(`a message of ${size} bytes is larger than the stream takes (${maxBytes})`);
    if (bytes + size > maxBytes && part.length > 0) {
      parts.push(part);
      part = [];
      bytes = 0;
    }
    part.push(message);
    bytes += size;
  }
  if (part.length > 0) parts.push(part);
  return parts;
}

export function createKafkaStream(options: KafkaStreamOptions): Stream {
  return new KafkaStream(options);
}

class KafkaStream implements Stream {
  private readonly kafka: Kafka;
  private readonly logger: StreamLogger;
  private readonly topicsReady = new Map<string, Promise<void>>();
  private readonly consumers = new Set<KafkaStreamConsumer>();
  private admin: Promise<Admin> | undefined;
  private producer: Promise<Producer> | undefined;
  /** Publishes run one after another: a key's messages keep the order of the calls. */
  private publishing: Promise<unknown> = Promise.resolve();
  private closing: Promise<void> | undefined;

  constructor(private readonly options: KafkaStreamOptions) {
    if (options.brokers.length === 0) throw new Error('stream: the Kafka stream needs at least one broker');
    this.logger = options.logger ?? silentStreamLogger;
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: [...options.brokers],
      logLevel: logLevel.INFO,
      logCreator: kafkajsLogCreator(this.logger),
    });
  }

  async publish(topic: string, messages: readonly StreamMessage[]): Promise<void> {
    this.assertOpen();
    const sent = this.publishing.then(() => this.send(topic, messages));
    this.publishing = sent.catch(() => undefined);
    await sent;
  }

  async consume(options: ConsumeOptions): Promise<Consumer> {
    this.assertOpen();
    await this.ensureTopic(options.topic);
    this.assertOpen();
    const consumer = new KafkaStreamConsumer(
      this.kafka.consumer({
        groupId: options.group,
        sessionTimeout: this.options.sessionTimeoutMs ?? 10_000,
        heartbeatInterval: this.options.heartbeatIntervalMs ?? 1_000,
        maxWaitTimeInMs: this.options.maxWaitTimeMs ?? 500,
        allowAutoTopicCreation: false,
      }),
      options,
      {
        retryBackoff: this.options.retryBackoff ?? defaultRetryBackoff,
        concurrentPartitions: this.options.concurrentPartitions ?? 1,
        joinTimeoutMs: this.options.joinTimeoutMs ?? 30_000,
        logger: this.logger,
        onStopped: (stopped) => this.consumers.delete(stopped),
      },
    );
    this.consumers.add(consumer);
    try {
      await consumer.start();
    } catch (error) {
      await consumer.stop();
      throw error;
    }
    return consumer;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all([...this.consumers].map((consumer) => consumer.stop()));
      await this.publishing;
      const clients: Promise<Producer | Admin>[] = [];
      if (this.producer) clients.push(this.producer);
      if (this.admin) clients.push(this.admin);
      for (const client of await Promise.allSettled(clients)) {
        if (client.status === 'fulfilled') await client.value.disconnect();
      }
    })();
    return this.closing;
  }

  get maxMessageBytes(): number {
    return this.options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES;
  }

  private async send(topic: string, messages: readonly StreamMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.ensureTopic(topic);
    const producer = await this.connectedProducer();
    try {
      // A partition's batch larger than the broker takes is refused whole, and would be sent again for ever.
      for (const part of partsOf(messages, this.maxMessageBytes))
        await producer.send({
          topic,
          acks: -1,
          messages: part.map((message) => ({
            key: message.key,
            value: message.value,
            headers: message.headers ? { ...message.headers } : undefined,
          })),
        });
    } catch (error) {
      // After a failed send the producer's sequence numbers may disagree with the broker's; a new producer
      // (a new producer id) keeps the next publish from being taken for a duplicate and dropped.
      this.producer = undefined;
      await producer.disconnect().catch(() => undefined);
      throw error;
    }
  }

  private connectedProducer(): Promise<Producer> {
    if (!this.producer) {
      const producer = this.kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        // Named explicitly: keeps kafkajs from warning about its v2 default (murmur2 of the key, as Java).
        createPartitioner: Partitioners.DefaultPartitioner,
        retry: { retries: this.options.publishRetries ?? 5 },
      });
      const connecting = producer.connect().then(() => producer);
      this.producer = connecting;
      connecting.catch(() => {
        if (this.producer === connecting) this.producer = undefined;
      });
    }
    return this.producer;
  }

  private connectedAdmin(): Promise<Admin> {
    if (!this.admin) {
      const admin = this.kafka.admin();
      const connecting = admin.connect().then(() => admin);
      this.admin = connecting;
      connecting.catch(() => {
        if (this.admin === connecting) this.admin = undefined;
      });
    }
    return this.admin;
  }

  private ensureTopic(topic: string): Promise<void> {
    let ready = this.topicsReady.get(topic);
    if (!ready) {
      ready = this.createTopic(topic);
      this.topicsReady.set(topic, ready);
      ready.catch(() => this.topicsReady.delete(topic));
    }
    return ready;
  }

  /**
   * Creates the topic unless it exists (then its own partition count stands), and waits until every
   * partition has a leader: `waitForLeaders` only waits when this call created the topic, and a consumer
   * that joins while a partition is leaderless may be assigned without it.
   */
  private async createTopic(topic: string): Promise<void> {
    if (topic.length === 0) throw new Error('stream: a topic name must not be empty');
    const admin = await this.connectedAdmin();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        {
          topic,
          numPartitions: this.options.partitions ?? 3,
          replicationFactor: this.options.replicationFactor ?? 1,
        },
      ],
    });
    const deadline = Date.now() + TOPIC_READY_TIMEOUT_MS;
    for (;;) {
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      const partitions = topics[0]?.partitions ?? [];
      if (partitions.length > 0 && partitions.every((partition) => partition.leader >= 0)) return;
      if (Date.now() > deadline) throw new Error(`stream: topic "${topic}" has partitions without a leader`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private assertOpen(): void {
    if (this.closing) throw new Error('stream: the Kafka stream is closed');
  }
}

const TOPIC_READY_TIMEOUT_MS = 10_000;
/**
 * How long a batch may go on through handlers that settle without I/O (their promises already resolved) before
 * it lets timers and I/O in: a batch of thousands of messages is otherwise one long run of microtasks, during
 * which no request, timer or signal of the process is served.
 */
const MAX_TURN_MS = 10;

interface ConsumerSettings {
  readonly retryBackoff: RetryBackoff;
  readonly concurrentPartitions: number;
  readonly joinTimeoutMs: number;
  readonly logger: StreamLogger;
  readonly onStopped: (consumer: KafkaStreamConsumer) => void;
}

class KafkaStreamConsumer implements Consumer {
  /** Failed deliveries in a row per partition, for the back-off. */
  private readonly failures = new Map<number, number>();
  private readonly resumeTimers = new Set<NodeJS.Timeout>();
  private starting: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;
  /** Fails a `start` still waiting to join when the consumer is stopped meanwhile. */
  private abortStart: ((reason: Error) => void) | undefined;
  private turnStarted = performance.now();

  constructor(
    private readonly consumer: KafkaConsumer,
    private readonly options: ConsumeOptions,
    private readonly settings: ConsumerSettings,
  ) {}

  /**
   * Joins the group and resolves after the first fetch: by then the group's start offsets are fixed (for a
   * new group with `fromBeginning: false`, the end of each partition), so a later publish is seen.
   */
  start(): Promise<void> {
    this.starting ??= this.join();
    return this.starting;
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.abortStart?.(new Error('stream: the consumer was stopped before it joined its group'));
      await this.starting?.catch(() => undefined);
      for (const timer of this.resumeTimers) clearTimeout(timer);
      this.resumeTimers.clear();
      // Waits for the batch in progress: handleBatch returns after the current handler once not running.
      await this.consumer.disconnect();
      this.settings.onStopped(this);
    })();
    return this.stopped;
  }

  private async join(): Promise<void> {
    const { topic, group } = this.options;
    const positioned = new Promise<void>((resolve, reject) => {
      const settle = (error?: Error): void => {
        clearTimeout(timer);
        removeFetchListener();
        removeCrashListener();
        this.abortStart = undefined;
        if (error) reject(error);
        else resolve();
      };
      const timer = setTimeout(
        () => settle(new Error(`stream: group "${group}" did not join on topic "${topic}" in time`)),
        this.settings.joinTimeoutMs,
      );
      const removeFetchListener = this.consumer.on(this.consumer.events.FETCH, () => settle());
      const removeCrashListener = this.consumer.on(this.consumer.events.CRASH, (event) => {
        if (!event.payload.restart) settle(event.payload.error);
      });
      this.abortStart = settle;
    });
    // Keeps an early rejection (before the await below) from being reported as unhandled.
    positioned.catch(() => undefined);
    await this.consumer.connect();
    this.throwIfStopped();
    await this.consumer.subscribe({ topics: [topic], fromBeginning: this.options.fromBeginning ?? true });
    this.throwIfStopped();
    await this.consumer.run({
      autoCommit: true,
      eachBatchAutoResolve: false,
      // With concurrency, a partition's batch waits for its slowest key: the other partitions must not wait too.
      partitionsConsumedConcurrently: Math.max(
        this.settings.concurrentPartitions,
        this.options.concurrency ?? 1,
      ),
      eachBatch: (payload) => this.handleBatch(payload),
    });
    await positioned;
  }

  private throwIfStopped(): void {
    if (this.stopped) throw new Error('stream: the consumer was stopped before it joined its group');
  }

  private async handleBatch({
    batch,
    resolveOffset,
    heartbeat,
    isRunning,
    isStale,
    pause,
  }: EachBatchPayload): Promise<void> {
    const { topic, partition } = batch;
    if ((this.options.concurrency ?? 1) > 1)
      return this.handleBatchWindowed({ batch, resolveOffset, heartbeat, isRunning, isStale });
    for (const message of batch.messages) {
      await this.letTheEventLoopIn();
      if (!isRunning() || isStale()) return;
      try {
        await this.options.handle(toConsumedMessage(topic, partition, message));
      } catch (error) {
        this.retryLater(topic, partition, message.offset, error, pause);
        return;
      }
      this.failures.delete(partition);
      resolveOffset(message.offset);
      await heartbeat();
    }
  }

  /**
   * A batch handled `concurrency` messages at once (see `KeyedWindow`). A failing message is retried in place
   * after its back-off (its key's later messages wait, the other keys go on); offsets are resolved through the
   * contiguous prefix of handled messages. On a rebalance or a stop, no new message starts, the running ones
   * finish, and the unresolved rest is fetched again by whoever owns the partition next.
   */
  private async handleBatchWindowed({
    batch,
    resolveOffset,
    heartbeat,
    isRunning,
    isStale,
  }: Pick<
    EachBatchPayload,
    'batch' | 'resolveOffset' | 'heartbeat' | 'isRunning' | 'isStale'
  >): Promise<void> {
    const { topic, partition } = batch;
    const active = (): boolean => isRunning() && !isStale();
    const deliver = async (message: KafkaMessage): Promise<boolean> => {
      await this.letTheEventLoopIn();
      for (let failures = 1; active(); failures += 1) {
        try {
          await this.options.handle(toConsumedMessage(topic, partition, message));
          return true;
        } catch (error) {
          const retryInMs = retryDelayMs(failures, this.settings.retryBackoff);
          this.settings.logger.warn(
            {
              topic,
              group: this.options.group,
              partition,
              offset: message.offset,
              failures,
              retryInMs,
              err: error,
            },
            'stream: handler failed; the message will be delivered again',
          );
          const until = Date.now() + retryInMs;
          while (active() && Date.now() < until) {
            await new Promise((resolve) => setTimeout(resolve, Math.min(1000, until - Date.now())));
            await heartbeat().catch(() => undefined);
          }
        }
      }
      return false;
    };
    const window = new KeyedWindow<KafkaMessage>(this.options.concurrency ?? 1, deliver, () => {
      const last = window.takeHandled();
      if (last !== undefined) resolveOffset(last.offset);
    });
    for (const message of batch.messages) {
      if (!active()) break;
      window.add(message, message.key?.toString('utf8') ?? '');
    }
    const beat = setInterval(() => void heartbeat().catch(() => undefined), 1000);
    try {
      await window.idle();
    } finally {
      clearInterval(beat);
    }
    await heartbeat().catch(() => undefined);
  }

  /** Waits for the event loop's next turn once this one has gone on for `MAX_TURN_MS`. */
  private async letTheEventLoopIn(): Promise<void> {
    if (performance.now() - this.turnStarted < MAX_TURN_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.turnStarted = performance.now();
  }

  /** The next fetch of the partition starts at the failed message again, once the back-off is over. */
  private retryLater(
    topic: string,
    partition: number,
    offset: string,
    error: unknown,
    pause: EachBatchPayload['pause'],
  ): void {
    const failures = (this.failures.get(partition) ?? 0) + 1;
    this.failures.set(partition, failures);
    const retryInMs = retryDelayMs(failures, this.settings.retryBackoff);
    this.settings.logger.warn(
      { topic, group: this.options.group, partition, offset, failures, retryInMs, err: error },
      'stream: handler failed; the message will be delivered again',
    );
    this.consumer.seek({ topic, partition, offset });
    const resume = pause();
    const timer = setTimeout(() => {
      this.resumeTimers.delete(timer);
      resume();
    }, retryInMs);
    this.resumeTimers.add(timer);
  }
}

function toConsumedMessage(topic: string, partition: number, message: KafkaMessage): ConsumedMessage {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key?.toString('utf8') ?? '',
    value: message.value?.toString('utf8') ?? '',
    headers: headersToStrings(message.headers),
  };
}

/** Kafka allows a header name more than once; as with Java's `lastHeader`, the last value wins. */
function headersToStrings(headers: IHeaders | undefined): Record<string, string> {
  const strings: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    if (last !== undefined) strings[name] = last.toString();
  }
  return strings;
}

const levelNames = new Map<logLevel, keyof StreamLogger>([
  [logLevel.ERROR, 'error'],
  [logLevel.WARN, 'warn'],
  [logLevel.INFO, 'info'],
  [logLevel.DEBUG, 'debug'],
]);

/** Sends kafkajs's own log entries to the stream's logger instead of the console. */
function kafkajsLogCreator(logger: StreamLogger): logCreator {
  return () =>
    ({ namespace, level, log }) => {
      const { message, timestamp: _timestamp, ...fields } = log;
      logger[levelNames.get(level) ?? 'error']({ kafkajs: namespace, ...fields }, message);
    };
}
