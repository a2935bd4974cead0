import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { checkEmbedInput, type TextEmbedder } from './port';

export interface PacingOptions {
  /**
   * The most of a core background embedding may take while the API is busy (0 < share ≤ 1): after a call
   * that took `t` ms, the next waits `t × (1 / share − 1)` ms. 1 does not pace.
   */
  readonly busyShare: number;
  /** How busy the API is now, 0 to 1 (by default `otherWorkShare`: the process's CPU besides the model). */
  readonly busy?: () => number;
  /**
   * Busier than this, the API counts as busy (default 0.25: the rest of the process takes more than a quarter
   * of the cores; on two cores, half of one, where a loaded main thread alone is a half).
   */
  readonly busyAbove?: number;
  /**
   * Texts a call takes at most while the API is busy (default 4): a query embedding waits behind at most
   * one such call on the model's thread, some 40 ms of the embedded model.
   */
  readonly busyBatch?: number;
  /** Texts a call takes at most otherwise (default 32, some 300 ms of the embedded model): load is looked at between calls. */
  readonly idleBatch?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
}

/**
 * The longest pause after a call: a call that took long (the first, which loads the model) does not hold the
 * projection back for long.
 */
const MAX_PAUSE_MS = 1000;

/**
 * How much of the machine the rest of the process used lately, 0 to 1: the process's CPU time (every thread)
 * less the model's (`modelMs`, its calls' time so far), over the wall time × the cores, sampled at most every
 * `windowMs`. Not this thread's event-loop use: a request waiting for the index would count, and the
 * projection's own work.
 */
export function otherWorkShare(
  modelMs: () => number,
  windowMs = 250,
  cores = availableParallelism(),
): () => number {
  let lastCpu = process.cpuUsage();
  let lastModelMs = modelMs();
  let lastAt = performance.now();
  let share = 0;
  return () => {
    const now = performance.now();
    if (now - lastAt >= windowMs) {
      const cpu = process.cpuUsage(lastCpu);
      const model = modelMs();
      share = Math.max(0, (cpu.user + cpu.system) / 1000 - (model - lastModelMs)) / ((now - lastAt) * cores);
      lastCpu = process.cpuUsage();
      lastModelMs = model;
      lastAt = now;
    }
    return share;
  };
}

/**
 * An embedder for background work (the vector projection) that leaves the API its cores: while the rest of
 * the process is busy (more than `busyAbove` of the cores), calls go in small slices and each is followed by
 * a pause long enough to keep the model's thread within `busyShare` of a core; idle, it embeds at full speed
 * and the projection catches up. What it paces is the model's CPU, which on the embedded model (8–11 ms of a
 * core per record) would otherwise take a core from a loaded API. Searches' query embeddings use the model
 * unpaced.
 */
export class PacedEmbedder implements TextEmbedder {
  private readonly busy: () => number;
  private readonly busyAbove: number;
  private readonly busyBatch: number;
  private readonly idleBatch: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;
  /** When the next call may begin. */
  private notBefore = 0;
  /** The time the model spent on this embedder's calls so far. */
  private modelMs = 0;

  constructor(
    private readonly inner: TextEmbedder,
    private readonly options: PacingOptions,
  ) {
    if (!(options.busyShare > 0 && options.busyShare <= 1))
      throw new RangeError(`busyShare must be above 0 and at most 1, got ${options.busyShare}`);
    this.busy = options.busy ?? otherWorkShare(() => this.modelMs);
    this.busyAbove = options.busyAbove ?? 0.25;
    this.busyBatch = options.busyBatch ?? 4;
    this.idleBatch = options.idleBatch ?? 32;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.now = options.now ?? (() => performance.now());
  }

  get model(): string {
    return this.inner.model;
  }

  get dimension(): number {
    return this.inner.dimension;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    checkEmbedInput(texts);
    const vectors: Float32Array[] = [];
    while (vectors.length < texts.length) {
      const wait = this.notBefore - this.now();
      if (wait > 0) await this.sleep(wait);
      const busy = this.options.busyShare < 1 && this.busy() > this.busyAbove;
      const slice = texts.slice(vectors.length, vectors.length + (busy ? this.busyBatch : this.idleBatch));
      const started = this.now();
      vectors.push(...(await this.inner.embed(slice)));
      const took = this.now() - started;
      this.modelMs += took;
      const pause = Math.min(took * (1 / this.options.busyShare - 1), MAX_PAUSE_MS);
      this.notBefore = busy ? this.now() + pause : 0;
    }
    return vectors;
  }

  /** Closes the embedder it paces. */
  close(): Promise<void> {
    return this.inner.close();
  }
}
