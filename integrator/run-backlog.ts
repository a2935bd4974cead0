import type { RunParkedData } from '../contracts/events/integrator';
import { PlatformError } from '../contracts/errors';
import { upcast } from '../contracts/events/registry';
import { eventIdFor, newId } from '../contracts/ids';
import { READ_MODELS } from '../contracts/read-models';
import { hookRequestValues, RECEIVED_REQUEST_PATHS } from '../contracts/personal-data';
import { withPersonalValues } from '../command-api/kit/decider';
import {
  runBacklogDrainDecider,
  runBacklogStreams,
  type RunBacklogDrainCommand,
  type RunBacklogDrainState,
} from '../command-api/scenarios/domain/run-backlog';
import { bookkeepingContext, toNewEvent, type CommandHandler } from '../command-api/kit/handler';
import type { EventStore } from '../infra/event-store/port';
import type { Logger } from '../infra/logging';
import type { ReadModels } from '../infra/read-store/read-models';
import { retryDelayMs, type RetryBackoff } from '../infra/stream/backoff';

export interface RunBacklogDeps {
  readonly events: Pick<EventStore, 'append' | 'readStream'>;
  readonly handler: Pick<CommandHandler, 'handle'>;
  readonly readModels: Pick<ReadModels, 'findInAllTenants'>;
  readonly logger: Logger;
  readonly now: () => Date;
  /** This integrator, as the drains it holds name it (unique per process). */
  readonly holder: string;
  /** How long a hold lasts unless renewed; it is renewed (with the drain's progress) every third of it. */
  readonly leaseMs: number;
  /** Items of one system's backlog in hand at once (running, or waiting for an earlier one of their key). */
  readonly window: number;
  /** Runs one parked request to its end; a rejection is an error to try again after a back-off. */
  readonly run: (tenant: string, parked: RunParkedData) => Promise<void>;
  readonly retry?: RetryBackoff;
}

/** Backlog documents read per page by a sweep. */
const SWEEP_PAGE = 500;
const RUN_RETRY: RetryBackoff = { initialMs: 1_000, maxMs: 30_000 };

/**
 * The integrator's run backlogs: where a system's requests go when the system already has as many runs in
 * hand as it may hold, so that its excess waits in the event store, not in the stream's window in front of
 * other systems' requests. Each backlog is drained by one integrator at a time (a hold it renews, recorded
 * with its progress, so another takes over after a crash), a window of items at once, in order per order key
 * (a sequential scenario's requests run one after another, in arrival order). An item is run again after a
 * crash or a change of holder; runs are idempotent by run id, so it has its effects once.
 */
export class RunBacklog {
  /** Per system with parked requests not known to have run: the revision of the newest one known. */
  private readonly open = new Map<string, number>();
  private readonly drains = new Map<string, Promise<void>>();
  /** Systems parked into since their drain here last looked for items: it looks again when it ends. */
  private readonly again = new Set<string>();
  private stopping = false;
  private parkedTotal = 0;

  constructor(private readonly deps: RunBacklogDeps) {}

  /** Whether the system has requests waiting in its backlog: its new requests then wait behind them. */
  hasBacklog(tenant: string): boolean {
    return this.open.has(tenant);
  }

  /** Requests parked by this integrator since it started. */
  get parked(): number {
    return this.parkedTotal;
  }

  /** Systems whose backlogs this integrator drains now. */
  get draining(): number {
    return this.drains.size;
  }

  /** Keeps a request in its system's backlog (once, however often it is parked) and sees that it is drained. */
  async park(tenant: string, parked: RunParkedData): Promise<void> {
    const context = bookkeepingContext(tenant, `park:${parked.runId}`);
    const event = toNewEvent(
      withPersonalValues(
        { type: 'ScenarioRunParked', data: parked },
        hookRequestValues(
          parked.request.requestId,
          RECEIVED_REQUEST_PATHS.map((path) => ['request', ...path]),
        ),
      ),
      eventIdFor(tenant, context.commandId, 0),
      context,
    );
    const { nextExpectedRevision } = await this.deps.events.append(runBacklogStreams(tenant).requests, [
      event,
    ]);
    this.parkedTotal += 1;
    this.remember(tenant, Number(nextExpectedRevision));
    this.drain(tenant);
  }

  /** Starts draining the system's backlog here, unless a drain here is already at it (it then looks again). */
  drain(tenant: string): void {
    if (this.stopping) return;
    if (this.drains.has(tenant)) {
      this.again.add(tenant);
      return;
    }
    const drain = this.drainWhileHeld(tenant)
      .catch((error: unknown) => this.deps.logger.error({ err: error, tenant }, 'a run backlog drain failed'))
      .finally(() => {
        this.drains.delete(tenant);
        if (this.again.delete(tenant)) this.drain(tenant);
      });
    this.drains.set(tenant, drain);
  }

  /**
   * Finds the backlogs with waiting items (after a restart, or parked by another integrator that let them go)
   * and drains each one nobody holds; how many systems' backlogs have waiting items.
   */
  async sweep(): Promise<number> {
    let waiting = 0;
    for (let offset = 0; ; offset += SWEEP_PAGE) {
      const { items } = await this.deps.readModels.findInAllTenants(READ_MODELS.runBacklogs, {
        offset,
        limit: SWEEP_PAGE,
        withTotal: false,
      });
      for (const doc of items) {
        const tenant = String(doc.tenant);
        const parked = Number(doc.parked);
        const next = Number(doc.next);
        if (parked > next) {
          waiting += 1;
          this.remember(tenant, parked - 1);
          this.drain(tenant);
        } else if (!this.drains.has(tenant)) this.forgetThrough(tenant, next);
      }
      if (items.length < SWEEP_PAGE) return waiting;
    }
  }

  /** Stops taking items; the runs in hand end, and each hold is let go with how far it got. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.drains.values());
  }

  private remember(tenant: string, revision: number): void {
    if (revision > (this.open.get(tenant) ?? -1)) this.open.set(tenant, revision);
  }

  /** Every item before `next` has run: the system has no backlog unless something newer was parked. */
  private forgetThrough(tenant: string, next: number): void {
    if (next > (this.open.get(tenant) ?? Number.POSITIVE_INFINITY)) this.open.delete(tenant);
  }

  private async drainWhileHeld(tenant: string): Promise<void> {
    const { requests } = runBacklogStreams(tenant);
    let hold = await this.hold(tenant, { kind: 'Take' });
    if (hold === null) return;
    let next = hold.next;
    let readFrom = next;
    let keptAt = Date.now();
    let lost = false;
    const renewEveryMs = Math.max(1, Math.floor(this.deps.leaseMs / 3));
    const finished = new Set<number>();
    const inHand = new Map<number, Promise<void>>();
    const lastOfKey = new Map<string, Promise<void>>();
    const start = (revision: number, parked: RunParkedData): void => {
      const key = parked.orderKey;
      const item: Promise<void> = (lastOfKey.get(key) ?? Promise.resolve())
        .then(() => this.runToEnd(tenant, parked, () => lost || this.stopping))
        .then((ran) => {
          if (ran) finished.add(revision);
          inHand.delete(revision);
          if (lastOfKey.get(key) === item) lastOfKey.delete(key);
        });
      lastOfKey.set(key, item);
      inHand.set(revision, item);
    };
    try {
      for (;;) {
        while (finished.delete(next)) next += 1;
        if (!lost && !this.stopping && inHand.size < this.deps.window) {
          this.again.delete(tenant);
          const page = await this.read(requests, readFrom, this.deps.window - inHand.size);
          for (const { revision, parked } of page) start(revision, parked);
          readFrom += page.length;
        }
        if (inHand.size === 0) {
          while (finished.delete(next)) next += 1;
          if (lost) return;
          // Caught up (or stopping): let go with how far the drain got, then look once more for an item parked
          // while it let go (its parker found the drain held, so nobody else took it).
          await this.hold(tenant, { kind: 'Release', next });
          if (next === readFrom) this.forgetThrough(tenant, next);
          if (this.stopping || (await this.read(requests, next, 1)).length === 0) return;
          hold = await this.hold(tenant, { kind: 'Take' });
          if (hold === null) return;
          next = readFrom = hold.next;
          keptAt = Date.now();
          continue;
        }
        await settledOrAfter([...inHand.values()], renewEveryMs - (Date.now() - keptAt));
        if (Date.now() - keptAt >= renewEveryMs) {
          keptAt = Date.now();
          lost = !(await this.keep(tenant, next));
        }
      }
    } catch (error) {
      // The drain cannot go on (the store refused a read): the runs in hand end, and the hold runs out.
      lost = true;
      throw error;
    } finally {
      await Promise.allSettled(inHand.values());
    }
  }

  /**
   * Renews the hold with the drain's progress; false once another integrator took the drain. A renewal the
   * store refuses is tried at the next one (the hold may run out meanwhile: whoever takes it goes on from the
   * progress recorded, and this drain learns it at its next renewal).
   */
  private async keep(tenant: string, next: number): Promise<boolean> {
    try {
      if ((await this.hold(tenant, { kind: 'Keep', next })) !== null) return true;
      this.deps.logger.warn({ tenant }, 'another integrator took over a run backlog drain');
      return false;
    } catch (error) {
      this.deps.logger.warn({ err: error, tenant }, 'a run backlog hold could not be renewed');
      return true;
    }
  }

  /** Runs a parked request until it has run, or the drain ends (then false: it stays for the next holder). */
  private async runToEnd(tenant: string, parked: RunParkedData, ended: () => boolean): Promise<boolean> {
    for (let attempt = 1; ; attempt += 1) {
      if (ended()) return false;
      try {
        await this.deps.run(tenant, parked);
        return true;
      } catch (error) {
        this.deps.logger.warn(
          { err: error, tenant, runId: parked.runId, attempt },
          'a parked run will be tried again',
        );
        await new Promise((resolve) =>
          setTimeout(resolve, retryDelayMs(attempt, this.deps.retry ?? RUN_RETRY)),
        );
      }
    }
  }

  private async read(
    streamId: string,
    from: number,
    count: number,
  ): Promise<Array<{ revision: number; parked: RunParkedData }>> {
    const page: Array<{ revision: number; parked: RunParkedData }> = [];
    for await (const event of this.deps.events.readStream(streamId, {
      fromRevision: BigInt(from),
      maxCount: count,
    }))
      page.push({ revision: Number(event.revision), parked: upcast(event).data as RunParkedData });
    return page;
  }

  /** Takes, keeps or lets go of the system's drain; null when another integrator holds it. */
  private async hold(
    tenant: string,
    command:
      | { readonly kind: 'Take' }
      | { readonly kind: 'Keep'; readonly next: number }
      | { readonly kind: 'Release'; readonly next: number },
  ): Promise<RunBacklogDrainState | null> {
    const { holder, leaseMs } = this.deps;
    const now = this.deps.now();
    const full: RunBacklogDrainCommand =
      command.kind === 'Release'
        ? { kind: 'Release', holder, now, next: command.next }
        : command.kind === 'Keep'
          ? { kind: 'Keep', holder, now, leaseMs, next: command.next }
          : { kind: 'Take', holder, now, leaseMs };
    try {
      const result = await this.deps.handler.handle(
        runBacklogStreams(tenant).drain,
        runBacklogDrainDecider,
        full,
        bookkeepingContext(tenant, `drain:${newId()}`),
      );
      return result.state;
    } catch (error) {
      if (error instanceof PlatformError && error.kind === 'conflict') return null;
      throw error;
    }
  }
}

/** Resolves when one of `pending` settles, or after `ms` (whichever is first), leaving no timer behind. */
async function settledOrAfter(pending: readonly Promise<unknown>[], ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      ...pending,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms)))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
