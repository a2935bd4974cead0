/**
 * The stream port: a partitioned, durable log of keyed messages consumed by named groups.
 * Delivery is at-least-once; messages with the same key keep their order for a consumer group.
 */
export interface StreamMessage {
  readonly key: string;
  readonly value: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface ConsumedMessage extends StreamMessage {
  readonly topic: string;
  readonly partition: number;
  /** Opaque, increasing within a partition. */
  readonly offset: string;
}

export interface ConsumeOptions {
  readonly topic: string;
  readonly group: string;
  /** Where a group with no committed offset starts. Default: 'earliest'. */
  readonly fromBeginning?: boolean;
  /**
   * Called once per message; the offset is committed only after it resolves. A rejection stops the
   * consumer from advancing past the message: it is delivered again (after a back-off).
   */
  readonly handle: (message: ConsumedMessage) => Promise<void>;
  /**
   * Messages handled at once (default 1: one after another). Messages of one key are still handled one at a
   * time, in order; a message waiting for an earlier one of its key does not take a handler slot.
   */
  readonly concurrency?: number;
}

/** What a message takes of a broker's batch: its key, value and headers, and what a record adds to them. */
export function messageBytes(message: StreamMessage): number {
  let bytes = RECORD_OVERHEAD_BYTES + Buffer.byteLength(message.key) + Buffer.byteLength(message.value);
  for (const [name, value] of Object.entries(message.headers ?? {}))
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value) + 2;
  return bytes;
}

/** A record's framing in a Kafka batch (lengths, offsets, timestamps, attributes), generously. */
const RECORD_OVERHEAD_BYTES = 64;

export interface Consumer {
  stop(): Promise<void>;
}

export interface Stream {
  /**
   * The largest message (key, value and headers) the stream takes, in bytes; none: any. A publisher shrinks a
   * larger one. Messages of one publish may add up to more: the adapter sends them in parts, in order.
   */
  readonly maxMessageBytes?: number;
  /** Resolves once the broker has acknowledged every message. */
  publish(topic: string, messages: readonly StreamMessage[]): Promise<void>;
  consume(options: ConsumeOptions): Promise<Consumer>;
  close(): Promise<void>;
}
