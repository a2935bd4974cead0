import type { HookResponse } from '../../contracts/integrator';
import type { EventStore, Subscription } from '../../infra/event-store/port';
import type { Logger } from '../../infra/logging';
import type { RunOutcome } from './domain/intake';

/** Requests one process may hold open waiting for a response; past it they are answered `Accepted` at once. */
const MAX_WAITERS = 20_000;

/**
 * The receiver's side of a Webhook response: it waits for the first of `WebhookResponseReady`,
 * `ScenarioRunFailed` or `ScenarioRunSucceeded` of a run, from a subscription to the run streams (so the
 * integrator may run anywhere). A waiter is registered before its request is appended, so no outcome can pass
 * unseen.
 */
export class HookResponses {
  private readonly waiters = new Map<string, (outcome: RunOutcome) => void>();
  private subscription: Subscription | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly events: EventStore,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const head = await this.events.headPosition();
    this.loop = this.follow(head);
  }

  private async follow(after: bigint): Promise<void> {
    let position = after;
    while (!this.stopped) {
      this.subscription = this.events.subscribeToAll({
        after: position,
        filter: { categories: ['scenarioRun'] },
      });
      try {
        for await (const item of this.subscription) {
          if (item.kind !== 'event') {
            position = item.position;
            continue;
          }
          position = item.event.position;
          const data = item.event.data as { runId?: string; response?: HookResponse };
          const runId = data.runId;
          if (runId === undefined || !this.waiters.has(runId)) continue;
          if (item.event.type === 'WebhookResponseReady' && data.response)
            this.settle(runId, { kind: 'response', response: data.response });
          else if (item.event.type === 'ScenarioRunFailed') this.settle(runId, { kind: 'failed' });
          else if (item.event.type === 'ScenarioRunSucceeded') this.settle(runId, { kind: 'finished' });
        }
      } catch (error) {
        if (this.stopped) return;
        this.logger.error({ err: error }, 'following scenario runs failed; following again');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  private settle(runId: string, outcome: RunOutcome): void {
    const resolve = this.waiters.get(runId);
    this.waiters.delete(runId);
    resolve?.(outcome);
  }

  /**
   * Starts waiting for run `runId` (call it before the request is appended); `wait` then gives the outcome
   * within `timeoutMs`. Null when too many requests wait already: answer at once.
   */
  expect(runId: string, timeoutMs: number): { wait(): Promise<RunOutcome>; cancel(): void } | null {
    if (this.waiters.size >= MAX_WAITERS || this.stopped) return null;
    let timer: NodeJS.Timeout | undefined;
    const outcome = new Promise<RunOutcome>((resolve) => {
      this.waiters.set(runId, resolve);
      timer = setTimeout(() => this.settle(runId, { kind: 'timeout' }), timeoutMs);
      timer.unref();
    });
    return {
      wait: () => outcome.finally(() => clearTimeout(timer)),
      cancel: () => {
        clearTimeout(timer);
        this.waiters.delete(runId);
      },
    };
  }

  /** Answers every waiting request as timed out (`Accepted`) and stops following; once, however often called. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.stopped = true;
      for (const runId of [...this.waiters.keys()]) this.settle(runId, { kind: 'timeout' });
      await this.subscription?.close();
      await this.loop;
    })();
    return this.stopping;
  }
}
