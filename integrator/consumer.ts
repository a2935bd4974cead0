import type { RunParkedData, WebhookRequestReceivedData } from '../contracts/events/integrator';
import type { RecordedEvent } from '../contracts/events/envelope';
import { upcast } from '../contracts/events/registry';
import { canonicalPosition } from '../contracts/positions';
import type { Logger } from '../infra/logging';
import type { ConsumedMessage, Consumer, Stream } from '../infra/stream/port';
import type { DeliveryIntake } from './deliveries/intake';
import type { EventStore } from '../infra/event-store/port';
import type { QueueWorker } from './queue-worker';
import { RunBacklog, type RunBacklogDeps } from './run-backlog';
import type { ScenarioRunner } from './runner';

export interface IntegratorOptions {
  readonly stream: Stream;
  readonly runner: ScenarioRunner;
  readonly queues: Pick<QueueWorker, 'drain'>;
  readonly logger: Logger;
  readonly topic: string;
  readonly group: string;
  /**
   * Messages handled at once in this process (requests of a sequential scenario still run one after another);
   * how many of them run a scenario at once, and for one system, is the runner's (its fair slots).
   */
  readonly concurrency: number;
  /**
   * Runs of one system this integrator holds in hand at once (running, or waiting for the system's share of
   * the runner): a request beyond them is parked in the system's run backlog, so that one system's excess
   * does not fill the stream's window in front of the others' requests.
   */
  readonly tenantInHand: number;
  /** The run backlogs (see `RunBacklog`): everything but the store and how a parked request is run. */
  readonly backlog: Omit<RunBacklogDeps, 'run' | 'events'>;
  /**
   * The event store: the run backlogs are kept there, an event relayed without its data is read there, and
   * it opens the personal values of a relayed event (the stream carries them sealed, as stored).
   */
  readonly events: RunBacklogDeps['events'] & {
    reveal(event: RecordedEvent): Promise<RecordedEvent>;
    /** The store's events as stored (what deliveries queue: personal values sealed). */
    readonly sealed: Pick<EventStore, 'readStream'>;
  };
  /** Outgoing subscriptions: the published events to deliver, and the subscriptions' own events. */
  readonly deliveries?: Pick<DeliveryIntake, 'takes' | 'passesOver' | 'take'>;
}

/** An event as the relay publishes it: as stored (any version of its schema), with its envelope. */
interface RelayedEvent extends Omit<RecordedEvent, 'revision' | 'position'> {
  readonly revision: string;
  readonly position: string;
  /** Relayed without its data (larger than the stream takes): the data is read from the store. */
  readonly dataOmitted?: boolean;
}

/** Events after which an instant scenario may have a queue to take: it was made, changed or activated. */
const MAY_DRAIN = new Set(['ScenarioCreated', 'ScenarioUpdated', 'ScenarioActivated']);

/**
 * The integrator: a consumer group on the events topic. Each request a hook accepted to run at once becomes a
 * scenario run; the stream keeps a sequential scenario's requests under one key, so they run in arrival order,
 * and the others run side by side. A run's effects are recorded in its own stream, so a request delivered
 * again (after a crash, a rebalance, a second integrator) is not run twice. A scenario that starts running
 * instantly takes what its hook queued before. A system with `tenantInHand` runs in hand here, or with requests
 * already waiting in its run backlog, has its next request parked there (see `RunBacklog`): the message is
 * done with, and the next system's requests are taken.
 */
export class Integrator {
  private consumer: Consumer | undefined;
  private lastPosition = 0n;
  private runs = 0;
  private finished = 0;
  /** Per system, its runs in hand here (see `tenantInHand`). */
  private readonly inHand = new Map<string, number>();
  readonly backlog: RunBacklog;

  constructor(private readonly options: IntegratorOptions) {
    this.backlog = new RunBacklog({
      ...options.backlog,
      events: options.events,
      run: async (tenant, parked) => void (await this.runRequest(tenant, parked.runId, parked.request)),
    });
  }

  async start(): Promise<void> {
    const { stream, topic, group, concurrency } = this.options;
    // The backlogs left waiting (by a crash, by another integrator) are known before the first request: a
    // system's new requests wait behind its parked ones.
    await this.backlog
      .sweep()
      .catch((error: unknown) =>
        this.options.logger.error({ err: error }, 'the run backlogs could not be looked for at start'),
      );
    this.consumer = await stream.consume({
      topic,
      group,
      concurrency,
      handle: (message) => this.handle(message),
    });
  }

  /** The position of the newest event this integrator has seen (for its lag on `/metrics`). */
  get position(): bigint {
    return this.lastPosition;
  }

  get runsStarted(): number {
    return this.runs;
  }

  get runsFinished(): number {
    return this.finished;
  }

  private async handle(message: ConsumedMessage): Promise<void> {
    const type = message.headers?.type;
    const { deliveries } = this.options;
    if (type !== undefined && deliveries?.takes(type)) {
      if (!(await deliveries.passesOver(message.headers ?? {})))
        await deliveries.take(await this.relayedEventOf(message, 'sealed'));
      return this.seen(message);
    }
    if (type !== undefined && MAY_DRAIN.has(type)) {
      const event = await this.relayedEventOf(message);
      const { scenarioId } = event.data as { scenarioId: number };
      const taken = await this.options.queues.drain(event.metadata.tenant, scenarioId);
      if (taken > 0) this.options.logger.info({ scenarioId, taken }, 'ran the queued requests');
      return this.seen(message);
    }
    if (type !== 'WebhookRequestReceived') return this.seen(message);
    const event = await this.relayedEventOf(message);
    const data = event.data as WebhookRequestReceivedData;
    if (!data.queued && data.scenarioId !== null) {
      const tenant = event.metadata.tenant;
      const held = this.inHand.get(tenant) ?? 0;
      if (held >= this.options.tenantInHand || this.backlog.hasBacklog(tenant)) {
        const parked: RunParkedData = { runId: event.id, orderKey: message.key, request: data };
        await this.backlog.park(tenant, parked);
        return this.seen(message);
      }
      this.inHand.set(tenant, held + 1);
      try {
        await this.runRequest(tenant, event.id, data);
      } finally {
        const left = (this.inHand.get(tenant) ?? 1) - 1;
        if (left === 0) this.inHand.delete(tenant);
        else this.inHand.set(tenant, left);
      }
    }
    this.seen(message);
  }

  /**
   * The relayed event, its data lifted to the current version of its schema (as every stream reader does),
   * its personal values opened, or left sealed as stored.
   */
  private async relayedEventOf(
    message: ConsumedMessage,
    values: 'revealed' | 'sealed' = 'revealed',
  ): Promise<RecordedEvent> {
    const { dataOmitted, ...relayed } = JSON.parse(message.value) as RelayedEvent;
    const event: RecordedEvent = {
      ...relayed,
      revision: BigInt(relayed.revision),
      position: BigInt(relayed.position),
    };
    if (dataOmitted !== true) return this.lifted(event, values);
    for await (const stored of this.options.events.sealed.readStream(event.streamId, {
      fromRevision: event.revision,
      maxCount: 1,
    }))
      return this.lifted({ ...event, data: stored.data }, values);
    throw new Error(`event ${event.id} was relayed without its data and is not in the store`);
  }

  /** The event (with its data as stored) lifted to the current version of its schema, its values opened or not. */
  private async lifted(event: RecordedEvent, values: 'revealed' | 'sealed'): Promise<RecordedEvent> {
    const stored = values === 'sealed' ? event : await this.options.events.reveal(event);
    return { ...event, data: upcast(stored).data };
  }

  private async runRequest(tenant: string, runId: string, data: WebhookRequestReceivedData): Promise<void> {
    // Arrival order includes what waited in the queue while the scenario was off: that runs first. (The
    // drain its activation started may be taking the same items: each still runs once, by its run id.)
    if (data.sequential && data.scenarioId !== null) await this.options.queues.drain(tenant, data.scenarioId);
    this.runs += 1;
    const result = await this.options.runner.run({ tenant, runId, attempt: 1, data }, 'instant');
    this.finished += 1;
    this.options.logger.debug({ runId, result }, 'scenario run');
  }

  private seen(message: ConsumedMessage): void {
    const at = message.headers?.position;
    const position = at === undefined ? undefined : canonicalPosition(at);
    if (position !== undefined && position > this.lastPosition) this.lastPosition = position;
  }

  async stop(): Promise<void> {
    await this.consumer?.stop();
    await this.backlog.stop();
  }
}
