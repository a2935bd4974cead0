import type { Worker } from 'node:worker_threads';
import type { Projections, ProjectionStatus } from './host';
import type { FromProjectionsThread, ToProjectionsThread } from './thread-protocol';
import { startTypeScriptWorker } from '../infra/worker-thread';

/**
 * The projections thread's young generation. Left to V8 it grows larger under a write load; at 24 MB the
 * platform's peak resident memory under the HTTP benchmark was about 20 MB lower (270 MB against 290 MB),
 * with throughput and lag within the run-to-run noise. At 12 MB the bulk catch-up was about 15% slower.
 */
const YOUNG_GENERATION_MB = 24;

/**
 * Runs the projections (and the relay) on a worker thread of this process, so their reads and writes use
 * the second core instead of delaying HTTP answers. The main thread tells the worker about each commit of
 * appends at once, so live lag stays at about a millisecond when idle; the worker reports every
 * projection's position back, which drives read-your-writes, readiness and metrics here.
 */
export class ThreadedProjections implements Projections {
  private worker: Worker | undefined;
  private statuses = new Map<string, ProjectionStatus>();
  private readonly waiters = new Set<{
    position: bigint;
    names: readonly string[] | undefined;
    resolve: (reached: boolean) => void;
  }>();
  private appendPending = false;
  /** 1 while a wake-up is on its way to the worker (it clears it when it takes it). */
  private readonly wakeFlag = new Int32Array(new SharedArrayBuffer(4));
  private stopped: Promise<void> | undefined;

  /**
   * @param entry a script that starts the worker side (`bin/projections-thread.ts`), given `workerData`.
   */
  constructor(
    private readonly entry: string,
    private readonly workerData: unknown,
    private readonly onVisible: (projection: string, lagMs: number) => void = () => undefined,
    private readonly onPublished: (topic: string) => void = () => undefined,
  ) {}

  start(): Promise<void> {
    const worker = startTypeScriptWorker(this.entry, this.workerData, {
      maxYoungGenerationSizeMb: YOUNG_GENERATION_MB,
    });
    this.worker = worker;
    this.post({ kind: 'wake-flag', flag: this.wakeFlag.buffer as SharedArrayBuffer });
    worker.once('exit', (code) => {
      if (this.stopped) return;
      // The thread died: say so in every status, so readiness fails instead of serving stale data silently.
      const error = `projections thread exited with code ${code}`;
      this.update(this.status().map((status) => ({ ...status, error })));
    });
    return new Promise((resolve, reject) => {
      worker.once('error', reject);
      worker.on('message', (message: FromProjectionsThread) => {
        if (message.kind === 'started') resolve();
        if (message.kind === 'failed') reject(new Error(`projections thread failed: ${message.message}`));
        if (message.kind === 'started' || message.kind === 'progress') this.update(message.statuses);
        if (message.kind === 'progress')
          for (const [projection, lagMs] of message.visible) this.onVisible(projection, lagMs);
        if (message.kind === 'published') this.onPublished(message.topic);
      });
    });
  }

  /** Wakes the worker's subscriptions after an append here; the appends of one commit send one message. */
  notifyAppended(): void {
    if (this.appendPending || !this.worker) return;
    this.appendPending = true;
    // A microtask, not `setImmediate`: appends resolve right after their group commit, and a macrotask would
    // wait behind every request the busy loop takes in first (the lag under load doubled).
    queueMicrotask(() => {
      this.appendPending = false;
      // A wake-up the worker has not taken yet covers this commit too: it reads the store when it takes it.
      if (Atomics.compareExchange(this.wakeFlag, 0, 0, 1) === 0) this.post({ kind: 'appended' });
    });
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      const worker = this.worker;
      if (!worker) return;
      await new Promise<void>((resolve) => {
        worker.on('message', (message: FromProjectionsThread) => {
          if (message.kind === 'stopped') resolve();
        });
        worker.once('exit', () => resolve());
        this.post({ kind: 'stop' });
      });
      await worker.terminate();
      for (const waiter of this.waiters) waiter.resolve(false);
    })();
    return this.stopped;
  }

  status(): ProjectionStatus[] {
    return [...this.statuses.values()];
  }

  positionOf(name: string): bigint {
    return this.statuses.get(name)?.position ?? 0n;
  }

  waitFor(position: bigint, timeoutMs: number, names?: readonly string[]): Promise<boolean> {
    if (this.reached(position, names)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        position,
        names,
        resolve: (reached: boolean) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(reached);
        },
      };
      const timer = setTimeout(() => waiter.resolve(false), timeoutMs);
      this.waiters.add(waiter);
    });
  }

  private reached(position: bigint, names: readonly string[] | undefined): boolean {
    const relevant = [...this.statuses.values()].filter((status) => !names || names.includes(status.name));
    return relevant.length > 0 && relevant.every((status) => status.position >= position);
  }

  private update(statuses: readonly ProjectionStatus[]): void {
    for (const status of statuses) this.statuses.set(status.name, status);
    for (const waiter of this.waiters) if (this.reached(waiter.position, waiter.names)) waiter.resolve(true);
  }

  private post(message: ToProjectionsThread): void {
    this.worker?.postMessage(message);
  }
}
