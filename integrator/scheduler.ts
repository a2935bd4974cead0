import { HOOK_UNBOUND_LIFETIME_MS } from '../contracts/integrator';
import type { StoreFilter } from '../languages/filter/store-query';
import { READ_MODELS } from '../contracts/read-models';
import { streamName } from '../contracts/streams';
import { webhookDecider } from '../command-api/hooks/domain/webhook';
import { bookkeepingContext, type CommandHandler } from '../command-api/kit/handler';
import type { EventStore } from '../infra/event-store/port';
import type { DeliveryStore } from '../infra/deliveries/port';
import type { Logger } from '../infra/logging';
import type { ReadModels } from '../infra/read-store/read-models';
import type { QueueWorker } from './queue-worker';
import type { RunBacklog } from './run-backlog';

export interface SchedulerDeps {
  readonly handler: CommandHandler;
  readonly events: Pick<EventStore, 'headPosition'>;
  readonly readModels: ReadModels;
  readonly logger: Logger;
  readonly now: () => Date;
  /** How long webhook log entries are kept. */
  readonly logRetentionMs: number;
  /** Time between sweeps. */
  readonly intervalMs: number;
  /** Runs scheduled scenarios when their slot is due. */
  readonly queues: Pick<QueueWorker, 'runDue'>;
  /** Time between looks for due scheduled runs (the smallest interval is a minute), and for run backlogs. */
  readonly dueCheckMs: number;
  /** Run backlogs left waiting (by a crash, or let go by another integrator) are drained here. */
  readonly backlogs: Pick<RunBacklog, 'sweep'>;
  /** The outgoing delivery log, and how long it keeps an attempt. */
  readonly deliveries: { readonly store: Pick<DeliveryStore, 'prune'>; readonly retentionMs: number };
}

/** Documents one sweep handles per rule: a backlog is worked off over several sweeps. */
const BATCH = 500;

/** A job that runs every so often, never twice at once; its errors are logged, never thrown. */
class Periodic {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly name: string,
    private readonly job: () => Promise<unknown>,
    private readonly logger: Logger,
  ) {}

  start(everyMs: number): void {
    this.timer = setInterval(() => {
      this.running ??= this.job()
        .catch((error: unknown) => this.logger.error({ err: error }, `${this.name} failed`))
        .finally(() => (this.running = undefined));
    }, everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}

/**
 * The integrator's time-driven rules, as commands: scheduled scenarios run when their interval slot is due,
 * run backlogs nobody drains are taken up,
 * hooks without a scenario for more than 120 hours are deactivated, and webhook log entries older than the
 * retention are removed. Every integrator process may do all of it: a slot's run is claimed by a command (a
 * second claim is refused), a deactivation is a command with an id of its own (a second one appends nothing),
 * a removal of a removed entry changes nothing.
 */
export class IntegratorScheduler {
  private readonly jobs: Array<{ job: Periodic; everyMs: number }>;

  constructor(private readonly deps: SchedulerDeps) {
    this.jobs = [
      { job: new Periodic('integrator sweep', () => this.sweep(), deps.logger), everyMs: deps.intervalMs },
      {
        job: new Periodic('scheduled runs', () => this.runDue(), deps.logger),
        everyMs: deps.dueCheckMs,
      },
      {
        job: new Periodic('run backlogs', () => deps.backlogs.sweep(), deps.logger),
        everyMs: deps.dueCheckMs,
      },
    ];
  }

  start(): void {
    for (const { job, everyMs } of this.jobs) job.start(everyMs);
  }

  async stop(): Promise<void> {
    await Promise.all(this.jobs.map(({ job }) => job.stop()));
  }

  /** Runs the scheduled scenarios whose slot is due at `now`; how many ran. */
  runDue(now = this.deps.now()): Promise<number> {
    return this.deps.queues.runDue(now);
  }

  /** One sweep of the deactivation and retention rules at `now`; what it did. */
  async sweep(
    now = this.deps.now(),
  ): Promise<{ deactivated: number; expiredLogs: number; expiredAttempts: number }> {
    return {
      deactivated: await this.deactivateUnbound(now),
      expiredLogs: await this.expireLogs(now),
      expiredAttempts: await this.deps.deliveries.store.prune(
        now.getTime() - this.deps.deliveries.retentionMs,
      ),
    };
  }

  private async deactivateUnbound(now: Date): Promise<number> {
    const before = new Date(now.getTime() - HOOK_UNBOUND_LIFETIME_MS).toISOString();
    const filter: StoreFilter = {
      kind: 'and',
      children: [
        { kind: 'compare', path: 'status', op: 'ne', value: 'deactivated' },
        { kind: 'compare', path: 'unboundSince', op: 'lt', value: before },
      ],
    };
    const { items } = await this.deps.readModels.findInAllTenants(READ_MODELS.webhooks, {
      filter,
      limit: BATCH,
      withTotal: false,
    });
    let deactivated = 0;
    for (const hook of items) {
      const tenant = String(hook.tenant);
      const webhookId = Number(hook.webhookId);
      const result = await this.deps.handler.handle(
        streamName('webhook', tenant, webhookId),
        webhookDecider,
        { kind: 'DeactivateIfUnbound', now },
        bookkeepingContext(tenant, `deactivate:${webhookId}:${String(hook.unboundSince)}`),
      );
      if (result.position !== undefined) deactivated += 1;
    }
    if (deactivated > 0) this.deps.logger.info({ deactivated }, 'deactivated webhooks without a scenario');
    return deactivated;
  }

  private async expireLogs(now: Date): Promise<number> {
    const before = new Date(now.getTime() - this.deps.logRetentionMs).toISOString();
    const { items } = await this.deps.readModels.findInAllTenants(READ_MODELS.hookLogs, {
      filter: { kind: 'compare', path: 'loggedAt', op: 'lt', value: before },
      limit: BATCH,
      withTotal: false,
    });
    if (items.length === 0) return 0;
    await this.deps.readModels.expire(
      READ_MODELS.hookLogs,
      items.map((item) => item.id),
      await this.deps.events.headPosition(),
    );
    return items.length;
  }
}
