import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { ExpressionPool } from '../../infra/expressions/pool';
import { FairSlots } from '../../infra/fair-slots';
import { Integrator } from '../../integrator/consumer';
import { QueueWorker } from '../../integrator/queue-worker';
import { ScenarioRunner } from '../../integrator/runner';
import { IntegratorScheduler } from '../../integrator/scheduler';
import { bookkeepingContext } from '../../command-api/kit/handler';
import { disableSubscription } from '../../command-api/subscriptions/commands';
import { recordFieldsIn } from '../../infra/read-store/command-reads';
import { resolveRecordListTexts } from '../../languages/filter/record-fields';
import { revealedPayload, Deliverer } from '../../integrator/deliveries/deliverer';
import { DeliveryIntake } from '../../integrator/deliveries/intake';
import { cachedFilters, DeliveryMatcher } from '../../integrator/deliveries/matcher';
import { RecordStates } from '../../integrator/deliveries/record-states';
import { Replayer } from '../../integrator/deliveries/replayer';
import { RETRY_DELAYS_MS } from '../../integrator/deliveries/retry-schedule';
import { SubscriptionDirectory } from '../../integrator/deliveries/subscription-directory';
import { EXPRESSION_MAX_INPUT_BYTES, EXPRESSION_MAX_RESULT_CHARS } from '../../languages/mapping/mapping';
import { outboundOf, uploadLimits, type Kernel } from '../kernel';
import type { ServiceModule } from '../service-module';
import { EXPRESSION_PROCESS_ENTRY } from '../threads';

export interface IntegratorService extends ServiceModule {
  readonly integrator: Integrator;
  /** Outgoing deliveries (tests look at their counts). */
  readonly deliverer: Deliverer;
  /** The integrator's time-driven rules (tests call them with an instant of their choosing). */
  readonly scheduler: IntegratorScheduler;
}

/** The integrator: scenario runs from the events topic, as a member of its consumer group. */
export async function integratorService(kernel: Kernel): Promise<IntegratorService> {
  const { config, adapters, handler, readModels } = kernel;
  const logger = kernel.logger.child({ component: 'integrator' });
  const now = () => new Date();
  const expressions = new ExpressionPool({
    entry: EXPRESSION_PROCESS_ENTRY,
    size: config.EXPRESSION_PROCESSES,
    perTenant: config.EXPRESSION_TENANT_PROCESSES,
    memoryMb: config.EXPRESSION_MEMORY_MB,
    timeoutMs: config.EXPRESSION_TIMEOUT_MS,
    maxResultBytes: EXPRESSION_MAX_RESULT_CHARS,
    maxInputBytes: EXPRESSION_MAX_INPUT_BYTES,
    logger: logger.child({ component: 'expressions' }),
  });
  const runner = new ScenarioRunner({
    expressions,
    slots: new FairSlots(config.INTEGRATOR_CONCURRENCY, config.INTEGRATOR_TENANT_CONCURRENCY),
    handler,
    ids: kernel.ids,
    idempotency: kernel.idempotency,
    blobs: adapters.blobs,
    logger,
    now,
    readModels,
    uploads: uploadLimits(config),
    outbound: outboundOf(config),
  });
  const queues = new QueueWorker({ handler, readModels, runner, logger, now });
  const holder = `${hostname()}:${process.pid}:${randomUUID()}`;
  const deliveries = deliveriesOf(kernel, holder);
  const integrator = new Integrator({
    stream: await adapters.stream(),
    runner,
    queues,
    logger,
    topic: config.EVENTS_TOPIC,
    group: config.INTEGRATOR_GROUP,
    // Messages in hand at once: more than the runs that may go at once (the runner's fair slots), so the runs
    // of busy systems that wait for their system's share do not keep another system's messages from being
    // taken. (The stream reads ahead 16 times this many messages.)
    concurrency: Math.min(1000, config.INTEGRATOR_CONCURRENCY * 4),
    // A system holds twice its share of the runner in hand; beyond that its requests wait in its run backlog.
    tenantInHand: 2 * config.INTEGRATOR_TENANT_CONCURRENCY,
    events: adapters.events,
    deliveries: deliveries.intake,
    backlog: {
      handler,
      readModels,
      logger: logger.child({ component: 'run-backlog' }),
      now,
      holder,
      leaseMs: config.INTEGRATOR_BACKLOG_LEASE_MS,
      window: 2 * config.INTEGRATOR_TENANT_CONCURRENCY,
    },
  });
  const scheduler = new IntegratorScheduler({
    handler,
    events: adapters.events,
    readModels,
    logger,
    now,
    logRetentionMs: config.HOOK_LOG_RETENTION_HOURS * 3_600_000,
    intervalMs: 60_000,
    queues,
    dueCheckMs: 5_000,
    backlogs: integrator.backlog,
    deliveries: {
      store: kernel.deliveries(),
      retentionMs: config.DELIVERY_LOG_RETENTION_HOURS * 3_600_000,
    },
  });
  return {
    integrator,
    scheduler,
    deliverer: deliveries.deliverer,
    metrics: {
      async integrator() {
        const head = await adapters.events.headPosition();
        const seen = integrator.position;
        return {
          lagPositions: seen > head ? 0 : Number(head - seen),
          runsStarted: integrator.runsStarted,
          runsFinished: integrator.runsFinished,
          runsParked: integrator.backlog.parked,
          backlogsDraining: integrator.backlog.draining,
          deliveriesMade: deliveries.deliverer.deliveredCount,
          deliveriesInFlight: deliveries.deliverer.inFlightCount,
        };
      },
    },
    async start() {
      deliveries.directory.start();
      await deliveries.deliverer.start();
      deliveries.replayer.start();
      await integrator.start();
      scheduler.start();
    },
    async stop() {
      await scheduler.stop();
      await integrator.stop();
      await deliveries.replayer.stop();
      await deliveries.deliverer.stop();
      await deliveries.directory.stop();
      await expressions.close();
    },
  };
}

/**
 * Outgoing subscriptions' deliveries: the directory of subscriptions, the matching of published events, the
 * deliverer that makes them and the replayer, all on the deployment's delivery store.
 */
function deliveriesOf(kernel: Kernel, holder: string) {
  const { config, adapters, handler, readModels } = kernel;
  const logger = kernel.logger.child({ component: 'deliveries' });
  const store = kernel.deliveries();
  const directory = new SubscriptionDirectory({ events: adapters.events, logger });
  const matcher = new DeliveryMatcher({
    directory,
    logger,
    records: new RecordStates(adapters.events),
    reveal: (event) => adapters.events.reveal(event),
    filters: cachedFilters(async (tenant, text) => {
      const { filter } = await resolveRecordListTexts((named) => recordFieldsIn(readModels, tenant, named), {
        filter: text,
      });
      return filter ?? null;
    }, logger),
  });
  const deliverer = new Deliverer({
    store,
    directory,
    outbound: outboundOf(config),
    sealer: kernel.sealer,
    logger,
    holder,
    slots: config.DELIVERY_CONCURRENCY,
    tenantSlots: config.DELIVERY_TENANT_CONCURRENCY,
    subscriptionSlots: config.DELIVERY_SUBSCRIPTION_CONCURRENCY,
    timeoutMs: config.DELIVERY_TIMEOUT_MS,
    pollMs: 1_000,
    schedule: config.DELIVERY_RETRY_DELAYS_MS ?? RETRY_DELAYS_MS,
    revealPayload: (payload, tenant) =>
      revealedPayload(payload, tenant, (data, subject) =>
        adapters.events.revealData(data, subject, { fresh: true }),
      ),
    disable: async (ref, reason) => {
      const commandId = randomUUID();
      await disableSubscription(
        { handler },
        bookkeepingContext(ref.tenant, commandId),
        ref.subscriptionId,
        reason,
      );
      logger.warn({ ...ref, reason }, 'disabled a subscription whose deliveries kept failing');
    },
  });
  const replayer = new Replayer({
    store,
    // Events as stored: the payloads it queues keep their personal values sealed.
    events: adapters.events.sealed,
    matcher,
    directory,
    logger,
    holder,
    batch: 500,
    maxQueued: 10_000,
    leaseMs: 30_000,
    maxHeld: 16,
    pollMs: 1_000,
    queued: (ref) => deliverer.notify(ref),
  });
  const intake = new DeliveryIntake({
    store,
    events: adapters.events,
    directory,
    matcher,
    deliverer,
    replayer,
  });
  return { directory, deliverer, replayer, intake };
}
