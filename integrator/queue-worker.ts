import type { WebhookRequestReceivedData } from '../contracts/events/integrator';
import { PlatformError } from '../contracts/errors';
import { newId } from '../contracts/ids';
import type { StoreFilter } from '../languages/filter/store-query';
import { READ_MODELS } from '../contracts/read-models';
import { streamName } from '../contracts/streams';
import { hookQueueDecider, queuedRunId, type HookQueueState } from '../command-api/hooks/domain/hook-queue';
import { scenarioDecider, slotOf } from '../command-api/scenarios/domain/scenario';
import { webhookDecider } from '../command-api/hooks/domain/webhook';
import { bookkeepingContext, type CommandHandler } from '../command-api/kit/handler';
import type { Logger } from '../infra/logging';
import type { ReadModels } from '../infra/read-store/read-models';
import type { ScenarioRunner } from './runner';

export interface QueueWorkerDeps {
  readonly handler: CommandHandler;
  readonly readModels: ReadModels;
  readonly runner: Pick<ScenarioRunner, 'run'>;
  readonly logger: Logger;
  readonly now: () => Date;
  /** How long a pass waits for a queued request's payload to reach the read model before it stops. */
  readonly payloadWaitMs?: number;
}

/** What one pass over a hook's queue did. */
export interface QueuePass {
  readonly processed: number;
  /** The run that failed and stopped the pass (a scheduled pass leaves its item queued). */
  readonly failure: { readonly runId: string; readonly requestId: string; readonly message: string } | null;
}

/** Scheduled scenarios read per page when looking for due ones. */
const PAGE = 500;
/** Items an instant scenario's drain takes per pass. */
const DRAIN_BATCH = 100;

const SCHEDULED_ACTIVE: StoreFilter = {
  kind: 'and',
  children: [
    { kind: 'compare', path: 'status', op: 'eq', value: 'active' },
    { kind: 'compare', path: 'schedule.kind', op: 'eq', value: 'interval' },
  ],
};

/**
 * Works hooks' queues, in arrival order. A scheduled scenario's run (one per interval slot, claimed with a
 * command so a second integrator does not run it too) takes up to the hook's Maximum number of results;
 * each item is removed once its run succeeded, and a failed run stops the pass and leaves its item queued
 * for the next slot (three failed slots in a row deactivate the scenario). An instant scenario that is
 * activated or bound takes what its hook queued while it was not running, each item once, removed whatever
 * its run's outcome (as an instant run is never repeated).
 */
export class QueueWorker {
  constructor(private readonly deps: QueueWorkerDeps) {}

  /** Runs every scheduled scenario whose slot has not run yet; how many ran. */
  async runDue(now = this.deps.now()): Promise<number> {
    let ran = 0;
    for (let offset = 0; ; offset += PAGE) {
      const { items } = await this.deps.readModels.findInAllTenants(READ_MODELS.scenarios, {
        filter: SCHEDULED_ACTIVE,
        offset,
        limit: PAGE,
        withTotal: false,
      });
      // Systems side by side, each system's due scenarios one after another: one system's long queues do not
      // hold back another's scheduled runs.
      const bySystem = new Map<string, typeof items>();
      for (const doc of items) {
        const minutes = (doc.schedule as { minutes: number }).minutes;
        const slot = slotOf(now, minutes);
        const last = typeof doc.lastScheduledRunAt === 'string' ? new Date(doc.lastScheduledRunAt) : null;
        if (last !== null && slotOf(last, minutes) >= slot) continue;
        const tenant = String(doc.tenant);
        const due = bySystem.get(tenant);
        if (due) due.push(doc);
        else bySystem.set(tenant, [doc]);
      }
      await Promise.all(
        [...bySystem].map(async ([tenant, due]) => {
          for (const doc of due) {
            const slot = slotOf(now, (doc.schedule as { minutes: number }).minutes);
            try {
              if (await this.runScheduled(tenant, Number(doc.scenarioId), slot, now)) ran += 1;
            } catch (error) {
              this.deps.logger.error(
                { err: error, scenarioId: doc.scenarioId },
                'scheduled run failed to run',
              );
            }
          }
        }),
      );
      if (items.length < PAGE) return ran;
    }
  }

  /** The scheduled run of `slot`, if it is due and has something to do; whether it ran. */
  async runScheduled(tenant: string, scenarioId: number, slot: number, now: Date): Promise<boolean> {
    const scenarioStream = streamName('scenario', tenant, scenarioId);
    const scenario = (await this.deps.handler.load(scenarioStream, scenarioDecider)).state;
    const webhookId = scenario.settings.webhookId;
    if (scenario.status !== 'active' || scenario.settings.schedule.kind !== 'interval' || webhookId === null)
      return false;
    if (slot <= scenario.lastSlot) return false;
    const queue = await this.queueOf(tenant, webhookId);
    if (queue.requestIds.length === 0) return false;
    try {
      // A command id of its own: a second integrator claiming the same slot is refused by the decider.
      await this.deps.handler.handle(
        scenarioStream,
        scenarioDecider,
        { kind: 'StartScheduledRun', slot, now },
        bookkeepingContext(tenant, newId()),
      );
    } catch (error) {
      if (error instanceof PlatformError && error.kind === 'conflict') return false;
      throw error;
    }
    const hook = (await this.deps.handler.load(streamName('webhook', tenant, webhookId), webhookDecider))
      .state;
    const pass = await this.process(
      tenant,
      scenarioId,
      webhookId,
      queue,
      hook.settings.maxResults,
      'scheduled',
    );
    await this.deps.handler.handle(
      scenarioStream,
      scenarioDecider,
      { kind: 'EndScheduledRun', slot, processed: pass.processed, failure: pass.failure },
      bookkeepingContext(tenant, `scheduled:${scenarioId}:${slot}:end`),
    );
    this.deps.logger.info({ tenant, scenarioId, slot, ...pass }, 'scheduled run');
    return true;
  }

  /** An active instant scenario runs what its hook queued before; how many it took. */
  async drain(tenant: string, scenarioId: number): Promise<number> {
    let taken = 0;
    for (;;) {
      const scenario = (
        await this.deps.handler.load(streamName('scenario', tenant, scenarioId), scenarioDecider)
      ).state;
      const webhookId = scenario.settings.webhookId;
      if (scenario.status !== 'active' || scenario.settings.schedule.kind !== 'instant' || webhookId === null)
        return taken;
      const queue = await this.queueOf(tenant, webhookId);
      if (queue.requestIds.length === 0) return taken;
      const pass = await this.process(tenant, scenarioId, webhookId, queue, DRAIN_BATCH, 'instant');
      if (pass.processed === 0) return taken;
      taken += pass.processed;
    }
  }

  private async queueOf(tenant: string, webhookId: number): Promise<HookQueueState> {
    return (await this.deps.handler.load(streamName('hookQueue', tenant, webhookId), hookQueueDecider)).state;
  }

  private async process(
    tenant: string,
    scenarioId: number,
    webhookId: number,
    queue: HookQueueState,
    limit: number,
    trigger: 'instant' | 'scheduled',
  ): Promise<QueuePass> {
    const head = queue.requestIds.slice(0, limit);
    const payloads = await this.payloadsOf(tenant, head);
    const queueStream = streamName('hookQueue', tenant, webhookId);
    let processed = 0;
    for (const requestId of head) {
      const payload = payloads.get(requestId);
      // Not in the read model yet: this item and those after it wait for the next pass, in order.
      if (payload === undefined) break;
      const { runId, attempt } = queuedRunId(queue, requestId);
      const outcome = await this.deps.runner.run(
        { tenant, runId, attempt, data: { ...payload, scenarioId } },
        trigger,
      );
      if (outcome.status === 'failed' && trigger === 'scheduled') {
        const message = outcome.error ?? 'the run failed';
        await this.deps.handler.handle(
          queueStream,
          hookQueueDecider,
          { kind: 'RecordFailure', webhookId, requestId, runId, message },
          bookkeepingContext(tenant, `failed:${runId}`),
        );
        return { processed, failure: { runId, requestId, message } };
      }
      await this.deps.handler.handle(
        queueStream,
        hookQueueDecider,
        { kind: 'RemoveItems', webhookId, requestIds: [requestId], reason: 'processed' },
        bookkeepingContext(tenant, `processed:${runId}`),
      );
      processed += 1;
    }
    return { processed, failure: null };
  }

  /** The stored requests of `requestIds`, waiting briefly for the projection of the newest ones. */
  private async payloadsOf(
    tenant: string,
    requestIds: readonly string[],
  ): Promise<Map<string, WebhookRequestReceivedData>> {
    const deadline = Date.now() + (this.deps.payloadWaitMs ?? 5_000);
    for (;;) {
      const { items } = await this.deps.readModels.find(tenant, READ_MODELS.hookQueue, {
        filter: { kind: 'in', path: 'requestId', values: [...requestIds] },
        limit: requestIds.length,
        withTotal: false,
      });
      const payloads = new Map(
        items.map((doc) => [String(doc.requestId), doc.payload as WebhookRequestReceivedData]),
      );
      if (payloads.has(requestIds[0]!) || Date.now() > deadline) return payloads;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
