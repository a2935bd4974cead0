import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Config } from '../infra/config';
import type { Logger } from '../infra/logging';
import { embeddedSqliteFiles } from './embedded-stores';

/**
 * How often the checkpointer copies the WAL files into their databases. Small copies often: each ends in an
 * fsync that can hold up the writers' commits. Under a POST load, the write-to-visible lag p99 was 21–23 ms
 * at 50 ms (and at 20 ms) against 32–48 ms at 200 ms and 60–70 ms at 1 s.
 */
export const CHECKPOINT_INTERVAL_MS = 50;

/**
 * How often the WAL files are emptied (a TRUNCATE checkpoint, which waits for readers of old pages): what a
 * PASSIVE checkpoint leaves in them is the pages' earlier versions, so an erased value is gone from every
 * file at most this long after its erasure was projected.
 */
export const WAL_TRUNCATE_INTERVAL_MS = 30_000;

export interface CheckpointThreadData {
  readonly paths: readonly string[];
  readonly intervalMs: number;
  readonly truncateEveryMs: number;
}

export type ToCheckpointThread = { readonly kind: 'stop' };

export type FromCheckpointThread =
  | { readonly kind: 'ready' }
  | { readonly kind: 'failed'; readonly path: string; readonly message: string }
  | { readonly kind: 'stopped' };

const CHECKPOINT_THREAD_ENTRY = join(__dirname, 'checkpoint-thread.js');

/**
 * Checkpoints the process's SQLite files on a thread of its own (`bin/checkpoint-thread.js`), so no commit of
 * an append or a projection waits for the copy and fsync SQLite would otherwise do inline (see
 * `WAL_AUTOCHECKPOINT_PAGES`). Files that do not exist yet are checkpointed once they do.
 */
export class SqliteCheckpointer {
  private stopping: Promise<void> | undefined;

  private constructor(private readonly worker: Worker) {}

  static start(
    paths: readonly string[],
    logger: Logger,
    intervalMs = CHECKPOINT_INTERVAL_MS,
    truncateEveryMs = WAL_TRUNCATE_INTERVAL_MS,
  ): Promise<SqliteCheckpointer> {
    const data: CheckpointThreadData = { paths, intervalMs, truncateEveryMs };
    const worker = new Worker(CHECKPOINT_THREAD_ENTRY, { workerData: data });
    const checkpointer = new SqliteCheckpointer(worker);
    let ready = false;
    return new Promise((resolve, reject) => {
      worker.once('error', reject);
      worker.once('exit', (code) => {
        if (ready && !checkpointer.stopping) {
          logger.error({ code }, 'sqlite checkpointer thread exited; commits checkpoint inline from now on');
        }
        reject(new Error(`sqlite checkpointer thread exited with code ${code}`));
      });
      worker.on('message', (message: FromCheckpointThread) => {
        if (message.kind === 'ready') {
          ready = true;
          resolve(checkpointer);
        }
        if (message.kind === 'failed') {
          logger.warn({ path: message.path, err: message.message }, 'sqlite checkpoint failed');
        }
      });
    });
  }

  stop(): Promise<void> {
    this.stopping ??= new Promise<void>((resolve) => {
      const done = (): void => {
        void this.worker.terminate().then(() => resolve());
      };
      this.worker.on('message', (message: FromCheckpointThread) => {
        if (message.kind === 'stopped') done();
      });
      this.worker.once('exit', () => resolve());
      const stop: ToCheckpointThread = { kind: 'stop' };
      this.worker.postMessage(stop);
    });
    return this.stopping;
  }
}

/** A checkpointer for the SQLite files `config`'s adapters use; none when every store is a server. */
export async function startCheckpointerFor(
  config: Config,
  logger: Logger,
): Promise<SqliteCheckpointer | undefined> {
  const files = embeddedSqliteFiles(config);
  if (files.length === 0) return undefined;
  return SqliteCheckpointer.start(files, logger.child({ component: 'sqlite-checkpointer' }));
}
