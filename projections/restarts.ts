import { setTimeout as sleep } from 'node:timers/promises';

export interface RestartOptions {
  /** Runs until done (resolves) or failed (rejects). */
  readonly run: () => Promise<void>;
  readonly isStopped: () => boolean;
  /** Told of each failure before the back-off (log it, reset state to the checkpoint). */
  readonly onFailure: (error: unknown) => Promise<void> | void;
  readonly initialBackoffMs: number;
}

/** Reruns a failed subscriber from its checkpoint with a doubling back-off (at most 10 s) until it stops. */
export async function runWithRestarts(options: RestartOptions): Promise<void> {
  let backoffMs = options.initialBackoffMs;
  while (!options.isStopped()) {
    try {
      await options.run();
      return;
    } catch (error) {
      await options.onFailure(error);
      await sleep(backoffMs);
      backoffMs = Math.min(backoffMs * 2, 10_000);
    }
  }
}
