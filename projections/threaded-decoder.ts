import type { ResourceLimits, Worker } from 'node:worker_threads';
import type { FromDecoderThread, ToDecoderThread } from './thread-protocol';
import type { DecodedWindow, PositionWindow, WindowDecoder } from './window-decoder';
import { startTypeScriptWorker } from '../infra/worker-thread';

interface Waiter {
  resolve(window: DecodedWindow): void;
  reject(error: Error): void;
}

/** A window decoder on a worker thread of its own (`bin/decoder-thread.ts`), with its own event-store connection. */
export class ThreadedWindowDecoder implements WindowDecoder {
  private readonly waiters = new Map<number, Waiter>();
  private nextId = 0;
  private failure: Error | undefined;

  private constructor(private readonly worker: Worker) {}

  /** Resolves once the thread has opened its event store. */
  static start(
    entry: string,
    workerData: unknown,
    resourceLimits?: ResourceLimits,
  ): Promise<ThreadedWindowDecoder> {
    const decoder = new ThreadedWindowDecoder(startTypeScriptWorker(entry, workerData, resourceLimits));
    return decoder.started();
  }

  decode(window: PositionWindow): Promise<DecodedWindow> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiters.set(id, { resolve, reject });
      const message: ToDecoderThread = { id, after: window.after, upTo: window.upTo };
      this.worker.postMessage(message);
    });
  }

  async close(): Promise<void> {
    this.fail(new Error('decoder closed'));
    await this.worker.terminate();
  }

  private started(): Promise<ThreadedWindowDecoder> {
    return new Promise((resolve, reject) => {
      this.worker.once('error', (error) => {
        this.fail(error);
        reject(error);
      });
      this.worker.once('exit', (code) => {
        const error = new Error(`decoder thread exited with code ${code}`);
        this.fail(error);
        reject(error);
      });
      this.worker.on('message', (message: FromDecoderThread) => {
        if (message.kind === 'ready') resolve(this);
        else if (message.kind === 'decoded') this.settle(message.id)?.resolve(message.window);
        else if (message.id === undefined) {
          reject(new Error(`decoder thread failed: ${message.message}`));
          void this.worker.terminate();
        } else this.settle(message.id)?.reject(new Error(message.message));
      });
    });
  }

  private settle(id: number): Waiter | undefined {
    const waiter = this.waiters.get(id);
    this.waiters.delete(id);
    return waiter;
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiter of this.waiters.values()) waiter.reject(error);
    this.waiters.clear();
  }
}
