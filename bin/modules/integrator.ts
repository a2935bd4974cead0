import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { ExpressionPool } from '../../infra/expressions/pool';
import { FairSlots } from '../../infra/fair-slots';
import { Integrator } from '../../integrator/consumer';
import { QueueWorker } from '../../integrator/queue-worker';
import { ScenarioRunner } from '../../integrator/runner';
import { IntegratorScheduler } from '../../integrator/scheduler';
import { EXPRESSION_MAX_INPUT_BYTES, EXPRESSION_MAX_RESULT_CHARS } from '../../languages/mapping/mapping';
import { outboundOf, uploadLimits, type Kernel } from '../kernel';
import type { ServiceModule } from '../service-module';
import { EXPRESSION_PROCESS_ENTRY } from '../threads';

export interface IntegratorService extends ServiceModule {
  readonly integrator: Integrator;
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
    backlog: {
      handler,
      readModels,
      logger: logger.child({ component: 'run-backlog' }),
      now,
      holder: `${hostname()}:${process.pid}:${randomUUID()}`,
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
  });
  return {
    integrator,
    scheduler,
    metrics: {
      async integrator() {
        const head = await adapters.events.headPosition();
        const seen = integrator.position;
        return {
          lagPositions: seen > head ? 0 : Number(head - seen),
          runsStarted: integrator.runsStarted,
          runsParked: integrator.backlog.parked,
          backlogsDraining: integrator.backlog.draining,
        };
      },
    },
    async start() {
      await integrator.start();
      scheduler.start();
    },
    async stop() {
      await scheduler.stop();
      await integrator.stop();
      await expressions.close();
    },
  };
}
