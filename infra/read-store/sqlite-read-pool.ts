import type { Worker } from 'node:worker_threads';
import type { StoreQuery } from '../../languages/filter/store-query';
import { PlatformError } from '../../contracts/errors';
import type { FindResult, QueryOptions, ReadStore } from './port';

/** What a read thread (`bin/read-thread.ts`) is started with. */
export interface ReadThreadData {
  /** The SQLite read store's file, opened read-only. */
  readonly path: string;
}

export type ReadRequest =
  | { readonly kind: 'find'; readonly collection: string; readonly query: StoreQuery }
  | { readonly kind: 'count'; readonly collection: string; readonly query: Pick<StoreQuery, 'filter'> };

export type ToReadThread = ({ readonly id: number } & ReadRequest) | { readonly kind: 'stop' };

export type FromReadThread =
  | { readonly kind: 'ready' }
  | { readonly kind: 'failed'; readonly message: string }
  | { readonly kind: 'result'; readonly id: number; readonly value: FindResult | number }
  | { readonly kind: 'error'; readonly id: number; readonly name: string; readonly message: string }
  | { readonly kind: 'stopped' };

export interface SqliteReadPoolOptions {
  /** Read threads; each runs one query at a time. */
  readonly size: number;
  /** A query still running after this long is refused (422 E4220) and its thread replaced. */
  readonly budgetMs: number;
  /** Queries one lane may have waiting; more are refused (429 E4290). */
  readonly queuePerLane: number;
  /** Starts one read thread (`bin/read-thread.ts` with `ReadThreadData`). */
  readonly startWorker: () => Worker;
  readonly onThreadExit?: (code: number) => void;
}

interface Job {
  readonly lane: string;
  readonly request: ReadRequest;
  readonly resolve: (value: FindResult | number) => void;
  readonly reject: (error: unknown) => void;
}

interface Running {
  readonly job: Job;
  readonly id: number;
  readonly timer: NodeJS.Timeout;
}

interface Slot {
  worker: Worker | undefined;
  ready: boolean;
  running: Running | undefined;
}

/** Idle lanes whose last turn is remembered, at most (one entry per tenant). */
const LANES_REMEMBERED = 1000;

/** The pause before another try when a read thread failed to start. */
const RESTART_DELAY_MS = 1000;

/** A stopped thread's or a failed start's answer: the caller may retry. */
function threadStopped(): PlatformError {
  return new PlatformError('unavailable', 'the read thread serving this query stopped; retry the request');
}

function rebuiltError(name: string, message: string): Error {
  const error =
    name === 'TypeError'
      ? new TypeError(message)
      : name === 'RangeError'
        ? new RangeError(message)
        : new Error(message);
  error.name = name;
  return error;
}

/**
 * Runs list and count queries of the SQLite read store on a few worker threads, each with its own read-only
 * connection, so that a heavy query neither holds up the main thread (which answers every other request)
 * nor runs unbounded:
 *
 * - Budget: better-sqlite3 cannot interrupt a statement, so a query still running after `budgetMs` is
 *   answered with 422 E4220 at once and its thread terminated and replaced. Termination stops a statement
 *   at its next call into JavaScript (the `like` function: about 10 ms, measured); a statement that makes
 *   none finishes first, so at most `size` such terminated threads may linger before replacements wait.
 * - Fairness: each lane (tenant) has its own queue and a free thread takes the first query of the lane
 *   served longest ago, so one lane's waiting queries delay another's by at most the queries already running. A lane may have at most
 *   `queuePerLane` queries waiting; past that a query is refused with 429 and `Retry-After`.
 */
export class SqliteReadPool {
  private readonly slots: Slot[] = [];
  /** Waiting jobs per lane (only lanes with some). */
  private readonly lanes = new Map<string, Job[]>();
  /** When each lane last had a job started (a count of started jobs): the lane served longest ago goes next. */
  private readonly lastServed = new Map<string, number>();
  private served = 0;
  private nextId = 1;
  private lingering = 0;
  private closing: Promise<void> | undefined;

  private constructor(private readonly options: SqliteReadPoolOptions) {}

  /** Starts `size` threads; resolves once every one has opened its connection. */
  static async start(options: SqliteReadPoolOptions): Promise<SqliteReadPool> {
    const pool = new SqliteReadPool(options);
    const started = await Promise.allSettled(
      Array.from({ length: options.size }, () => {
        const slot: Slot = { worker: undefined, ready: false, running: undefined };
        pool.slots.push(slot);
        return pool.startThread(slot);
      }),
    );
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) {
      await pool.close();
      throw failure.reason;
    }
    return pool;
  }

  find(lane: string, collection: string, query: StoreQuery): Promise<FindResult> {
    return this.submit(lane, { kind: 'find', collection, query }) as Promise<FindResult>;
  }

  count(lane: string, collection: string, query: Pick<StoreQuery, 'filter'>): Promise<number> {
    return this.submit(lane, { kind: 'count', collection, query }) as Promise<number>;
  }

  /** Waiting (not yet running) queries of a lane. */
  waiting(lane: string): number {
    return this.lanes.get(lane)?.length ?? 0;
  }

  /** Refuses waiting queries, stops every thread (its connection closed) and waits for them to exit. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const jobs of this.lanes.values()) for (const job of jobs) job.reject(threadStopped());
      this.lanes.clear();
      await Promise.all(this.slots.map((slot) => this.stopThread(slot)));
    })();
    return this.closing;
  }

  private submit(lane: string, request: ReadRequest): Promise<FindResult | number> {
    if (this.closing) return Promise.reject(threadStopped());
    const queue = this.lanes.get(lane) ?? [];
    if (queue.length >= this.options.queuePerLane) {
      return Promise.reject(
        new PlatformError(
          'rate_limited',
          `this system already has ${queue.length} list queries waiting for the read threads; retry shortly`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      queue.push({ lane, request, resolve, reject });
      this.lanes.set(lane, queue);
      this.dispatch();
    });
  }

  /** Gives waiting jobs to idle threads, one lane after another. */
  private dispatch(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.running || !slot.worker) continue;
      const job = this.takeNext();
      if (!job) return;
      this.run(slot, slot.worker, job);
    }
  }

  /** The first job of the lane served least recently (never served: first). */
  private takeNext(): Job | undefined {
    let next: string | undefined;
    for (const lane of this.lanes.keys()) {
      if (next === undefined || (this.lastServed.get(lane) ?? 0) < (this.lastServed.get(next) ?? 0))
        next = lane;
    }
    if (next === undefined) return undefined;
    const jobs = this.lanes.get(next)!;
    const job = jobs.shift();
    if (jobs.length === 0) this.lanes.delete(next);
    this.lastServed.set(next, ++this.served);
    // Forgetting an idle lane only moves it to the front of the turns, as a new lane would be.
    if (this.lastServed.size > LANES_REMEMBERED) {
      for (const lane of this.lastServed.keys()) if (!this.lanes.has(lane)) this.lastServed.delete(lane);
    }
    return job;
  }

  private run(slot: Slot, worker: Worker, job: Job): void {
    const id = this.nextId++;
    const timer = setTimeout(() => {
      if (slot.running?.id !== id) return;
      slot.running = undefined;
      job.reject(
        new PlatformError(
          'query_too_expensive',
          `the query ran longer than the ${this.options.budgetMs} ms one query may take; narrow the filter ` +
            `(fewer or longer "~" pieces, more exact conditions), order by an indexed field or page with a smaller offset`,
        ),
      );
      this.replaceThread(slot);
    }, this.options.budgetMs);
    slot.running = { job, id, timer };
    const message: ToReadThread = { id, ...job.request };
    worker.postMessage(message);
  }

  private finish(slot: Slot, id: number, settle: (job: Job) => void): void {
    const running = slot.running;
    if (running?.id !== id) return;
    clearTimeout(running.timer);
    slot.running = undefined;
    settle(running.job);
    this.dispatch();
  }

  /** Starts a thread in `slot`; resolves when it is ready, rejects when it fails to start. */
  private startThread(slot: Slot): Promise<void> {
    const worker = this.options.startWorker();
    slot.worker = worker;
    slot.ready = false;
    return new Promise((resolve, reject) => {
      worker.on('message', (message: FromReadThread) => {
        switch (message.kind) {
          case 'ready':
            slot.ready = true;
            resolve();
            this.dispatch();
            return;
          case 'failed':
            reject(new Error(`read thread failed to start: ${message.message}`));
            return;
          case 'result':
            this.finish(slot, message.id, (job) => job.resolve(message.value));
            return;
          case 'error':
            this.finish(slot, message.id, (job) => job.reject(rebuiltError(message.name, message.message)));
            return;
          case 'stopped':
            return;
        }
      });
      worker.on('error', reject);
      worker.once('exit', (code) => {
        reject(new Error(`read thread exited with code ${code} before it was ready`));
        if (slot.worker !== worker) return;
        const wasReady = slot.ready;
        slot.worker = undefined;
        slot.ready = false;
        // Exited before it was ready: `restart` (or `start`) handles the failed start.
        if (!wasReady) return;
        // A crash: the running query is answered and the thread replaced.
        this.options.onThreadExit?.(code);
        const running = slot.running;
        slot.running = undefined;
        if (running) {
          clearTimeout(running.timer);
          running.job.reject(threadStopped());
        }
        this.restart(slot);
      });
    });
  }

  /** Ends the thread of `slot` (a query past its budget) and starts another in its place. */
  private replaceThread(slot: Slot): void {
    const worker = slot.worker;
    slot.worker = undefined;
    slot.ready = false;
    if (worker) {
      this.lingering++;
      void worker.terminate().finally(() => {
        this.lingering--;
        for (const vacant of this.slots) if (!vacant.worker && !this.closing) this.restart(vacant);
      });
    }
    if (this.lingering <= this.options.size) this.restart(slot);
  }

  private restart(slot: Slot): void {
    if (this.closing || slot.worker) return;
    this.startThread(slot).catch(() => {
      // A thread that cannot start: refuse what waits rather than let it wait forever; try again shortly.
      if (this.slots.every((other) => !other.ready)) {
        for (const jobs of this.lanes.values()) for (const job of jobs) job.reject(threadStopped());
        this.lanes.clear();
      }
      void slot.worker?.terminate();
      slot.worker = undefined;
      setTimeout(() => this.restart(slot), RESTART_DELAY_MS).unref();
    });
  }

  private async stopThread(slot: Slot): Promise<void> {
    const worker = slot.worker;
    slot.worker = undefined;
    slot.ready = false;
    if (slot.running) {
      clearTimeout(slot.running.timer);
      slot.running.job.reject(threadStopped());
      slot.running = undefined;
    }
    if (!worker) return;
    await new Promise<void>((resolve) => {
      worker.on('message', (message: FromReadThread) => {
        if (message.kind === 'stopped') resolve();
      });
      worker.once('exit', () => resolve());
      const stop: ToReadThread = { kind: 'stop' };
      worker.postMessage(stop);
    });
    await worker.terminate();
  }
}

/**
 * `store` with its tenants' list and count queries (those with a lane) on `pool`; point reads, writes and
 * the platform's own queries (no lane: small lookups such as projection versions) stay on `store`'s
 * connection, where a point read costs no message between threads.
 */
export function pooledReadStore(store: ReadStore, pool: SqliteReadPool): ReadStore {
  const pooled: ReadStore = Object.create(store) as ReadStore;
  pooled.find = (collection: string, query: StoreQuery, options?: QueryOptions) =>
    options?.lane === undefined ? store.find(collection, query) : pool.find(options.lane, collection, query);
  pooled.count = (collection: string, query: Pick<StoreQuery, 'filter'> = {}, options?: QueryOptions) =>
    options?.lane === undefined
      ? store.count(collection, query)
      : pool.count(options.lane, collection, query);
  return pooled;
}
