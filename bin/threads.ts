import { extname, join } from 'node:path';
import type { ResourceLimits } from 'node:worker_threads';
import type { Config } from '../infra/config';
import type { Logger } from '../infra/logging';
import { SqliteReadPool, type ReadThreadData } from '../infra/read-store/sqlite-read-pool';
import { startTypeScriptWorker } from '../infra/worker-thread';
import { ThreadedWindowDecoder } from '../projections/threaded-decoder';
import type { DecoderThreadData } from '../projections/thread-protocol';
import type { WindowDecoder } from '../projections/window-decoder';
import { embeddedFile } from './embedded-stores';

/*
 * The entries of the platform's worker threads and processes: a `.ts` source when the platform runs from
 * sources (tsx), the compiled `.js` beside this file in a build.
 */

/** The worker-thread side of `ThreadedProjections`. */
export const PROJECTIONS_THREAD_ENTRY = join(__dirname, `projections-thread${extname(__filename)}`);

export interface ProjectionsThreadData {
  readonly config: Config;
  readonly relay: boolean;
}

/** The worker-thread side of `SqliteReadPool`. */
export const READ_THREAD_ENTRY = join(__dirname, `read-thread${extname(__filename)}`);

/** The worker-thread side of `ThreadedWindowDecoder`. */
export const DECODER_THREAD_ENTRY = join(__dirname, `decoder-thread${extname(__filename)}`);

/** The expression processes' entry (see `ExpressionPool`). */
export const EXPRESSION_PROCESS_ENTRY = join(__dirname, `expression-process${extname(__filename)}`);

/** The pool of read threads for the query API on the embedded read store (MongoDB bounds reads itself). */
export async function startReadPool(config: Config, logger: Logger): Promise<SqliteReadPool | undefined> {
  if (config.READ_STORE !== 'sqlite') return undefined;
  const data: ReadThreadData = { path: embeddedFile(config, 'readModels') };
  const poolLogger = logger.child({ component: 'read-pool' });
  return SqliteReadPool.start({
    size: config.READ_THREADS,
    budgetMs: config.QUERY_BUDGET_MS,
    queuePerLane: config.READ_QUEUE_PER_SYSTEM,
    startWorker: () => startTypeScriptWorker(READ_THREAD_ENTRY, data),
    onThreadExit: (code) => poolLogger.error({ code }, 'a read thread stopped; started another'),
  });
}

/**
 * A decoder thread's young generation may grow to 64 MB semi-spaces (192 MB; V8's default is 16 MB ones): what
 * a thread keeps for a window until it is sent outlives small semi-spaces and is copied by scavenge after
 * scavenge. Decoding a log took 4 to 7% fewer instructions (cachegrind), for 60 to 80 MB more per thread
 * while a rebuild runs (`npm run replay`, the only user).
 */
const DECODER_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 192 };

/**
 * Decoder threads for a rebuild of `projection` into `version`, or none where the log cannot be split into
 * windows (EventStoreDB) or only one core would do the work.
 */
export async function startRebuildDecoders(
  config: Config,
  projection: string,
  version: number,
): Promise<WindowDecoder[]> {
  if (config.EVENT_STORE !== 'sqlite' || config.REBUILD_THREADS === 0) return [];
  const data: DecoderThreadData = { config, projection, version };
  const started = await Promise.allSettled(
    Array.from({ length: config.REBUILD_THREADS }, () =>
      ThreadedWindowDecoder.start(DECODER_THREAD_ENTRY, data, DECODER_LIMITS),
    ),
  );
  const decoders = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failure = started.find((result) => result.status === 'rejected');
  if (failure) {
    // One thread failed to start: stop the others rather than leave them running.
    await Promise.all(decoders.map((decoder) => decoder.close()));
    throw failure.reason;
  }
  return decoders;
}
