import { HOOK_UNBOUND_LIFETIME_MS } from '../contracts/integrator';
import type { StoreFilter } from '../contracts/query/store-query';
import { READ_MODELS } from '../contracts/read-models';
import { streamName } from '../contracts/streams';
import { webhookDecider } from '../command-api/domain/webhook';
import { bookkeepingContext, type CommandHandler } from '../command-api/kit/handler';
import type { EventStore } from '../infra/event-store/port';
import type { Logger } from '../infra/logging';
import type { ReadModels } from '../infra/read-store/read-models';

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
}

/** Documents one sweep handles per rule: a backlog is worked off over several sweeps. */
const BATCH = 500;

/**
 * The integrator's time-driven rules, as commands: hooks without a scenario for more than 120 hours are
 * deactivated, and webhook log entries older than the retention are removed. Every integrator process may
 * sweep: a deactivation is a command with an id of its own (a second one appends nothing), a removal of a
 * removed entry changes nothing.
 */
export class IntegratorScheduler {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<unknown> | undefined;

  constructor(private readonly deps: SchedulerDeps) {}

  start(): void {
    this.timer = setInterval(() => {
      this.sweeping ??= this.sweep()
        .catch((error: unknown) => this.deps.logger.error({ err: error }, 'integrator sweep failed'))
        .finally(() => (this.sweeping = undefined));
    }, this.deps.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** One sweep of every rule; what it did. */
  async sweep(): Promise<{ deactivated: number; expiredLogs: number }> {
    return { deactivated: await this.deactivateUnbound(), expiredLogs: await this.expireLogs() };
  }

  private async deactivateUnbound(): Promise<number> {
    const now = this.deps.now();
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

  private async expireLogs(): Promise<number> {
    const before = new Date(this.deps.now().getTime() - this.deps.logRetentionMs).toISOString();
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
