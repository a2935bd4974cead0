import type { RecordedEvent } from '../contracts/events/envelope';
import { categoryOf, partitionKeyOf } from '../contracts/streams';
import type { EventStore, Subscription } from '../infra/event-store/port';
import type { Logger } from '../infra/logging';
import type { ReadStore } from '../infra/read-store/port';
import { messageBytes, type Stream, type StreamMessage } from '../infra/stream/port';
import { consumeInBatches } from './batched-consumer';
import { runWithRestarts } from './restarts';

/**
 * Write-side bookkeeping streams stay out of the relay: nobody downstream acts on them (the integrator reads
 * its run backlogs from the store).
 */
const INTERNAL_CATEGORIES = new Set(['sequence', 'idempotency', 'runBacklog']);

/**
 * The event as a stream message. One larger than the stream takes (`maxBytes`) goes without its data
 * (`dataOmitted`): a consumer that needs the data reads the event from the store by its stream and revision.
 */
export function toStreamMessage(event: RecordedEvent, maxBytes = Number.POSITIVE_INFINITY): StreamMessage {
  const headers = {
    type: event.type,
    tenant: event.metadata.tenant,
    eventId: event.id,
    position: event.position.toString(),
  };
  const envelope = { ...event, revision: event.revision.toString(), position: event.position.toString() };
  const whole = { key: partitionKeyOf(event.streamId), value: JSON.stringify(envelope), headers };
  // A stream without a limit (the embedded one) need not have each message measured.
  if (maxBytes === Number.POSITIVE_INFINITY || messageBytes(whole) <= maxBytes) return whole;
  return {
    ...whole,
    value: JSON.stringify({ ...envelope, data: null, dataOmitted: true }),
    headers: { ...headers, dataOmitted: 'true' },
  };
}

/**
 * Publishes every event to the stream topic, keyed by stream id (so one aggregate's events keep their
 * order), and moves its checkpoint only after the broker acknowledged the batch: at-least-once.
 */
export class Relay {
  private subscription: Subscription | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private relayed = 0n;
  private checkpointWrittenAt = 0;

  constructor(
    private readonly deps: {
      events: EventStore;
      readStore: ReadStore;
      stream: Stream;
      logger: Logger;
      /** Told after each publish (a thread of the process wakes the stream's consumers in another). */
      onPublished?: (topic: string) => void;
    },
    private readonly topic: string,
  ) {}

  get checkpointName(): string {
    return `relay:${this.topic}`;
  }

  get position(): bigint {
    return this.relayed;
  }

  async start(): Promise<void> {
    const stored = await this.deps.readStore.getCheckpoint(this.checkpointName);
    this.relayed = stored === null ? 0n : BigInt(stored);
    this.loop = this.runWithRestarts();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.subscription?.close();
    await this.loop;
  }

  private runWithRestarts(): Promise<void> {
    return runWithRestarts({
      run: () => this.run(),
      isStopped: () => this.stopped,
      initialBackoffMs: 200,
      onFailure: (error) =>
        this.deps.logger.error(
          { err: error, topic: this.topic },
          'relay failed; resuming from its checkpoint',
        ),
    });
  }

  private async run(): Promise<void> {
    this.subscription = this.deps.events.subscribeToAll({
      after: this.relayed === 0n ? undefined : this.relayed,
    });
    if (this.stopped) await this.subscription.close();
    let batch: StreamMessage[] = [];
    await consumeInBatches(
      this.subscription,
      {
        add: (event) => {
          if (!INTERNAL_CATEGORIES.has(categoryOf(event.streamId)))
            batch.push(toStreamMessage(event, this.deps.stream.maxMessageBytes));
        },
        flush: async (position) => {
          const published = batch.length > 0;
          if (published) {
            await this.deps.stream.publish(this.topic, batch);
            this.deps.onPublished?.(this.topic);
          }
          batch = [];
          // After a publish the checkpoint is written at once; over internal events only, at most once a second.
          if (published || Date.now() - this.checkpointWrittenAt >= 1000) {
            await this.deps.readStore.apply([], { name: this.checkpointName, value: position.toString() });
            this.checkpointWrittenAt = Date.now();
          }
          this.relayed = position;
        },
      },
      500,
      this.relayed,
    );
  }
}
