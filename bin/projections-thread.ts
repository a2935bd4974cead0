import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../infra/logging';
import { ProjectionHost } from '../projections/host';
import type { FromProjectionsThread, ToProjectionsThread } from '../projections/thread-protocol';
import { READ_MODEL_PROJECTIONS } from '../projections/read-models/catalogue';
import { openAdapters } from './adapters';
import { relayOf } from './modules/relay';
import type { ProjectionsThreadData } from './threads';

/**
 * The projections thread of the one-process platform (see `ThreadedProjections`): its own connections to
 * the stores, the read-model projections and the relay; progress reported to the main thread.
 */
async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('projections-thread must run as a worker thread');
  const post = (message: FromProjectionsThread): void => port.postMessage(message);
  const { config, relay: withRelay } = workerData as ProjectionsThreadData;
  const logger = createLogger(config.LOG_LEVEL).child({ thread: 'projections' });
  try {
    const adapters = await openAdapters(config, logger);
    let reportPending = false;
    let visible: Array<[string, number]> = [];
    const report = (): void => {
      if (reportPending) return;
      reportPending = true;
      setImmediate(() => {
        reportPending = false;
        post({ kind: 'progress', statuses: host.status(), visible });
        visible = [];
      });
    };
    const host: ProjectionHost = new ProjectionHost(READ_MODEL_PROJECTIONS, {
      events: adapters.events,
      readStore: adapters.readStore,
      logger,
      onProgress: report,
      onVisible: (projection, lagMs) => {
        visible.push([projection, lagMs]);
        report();
      },
    });
    await host.start();
    const relay = withRelay
      ? await relayOf(config, adapters, logger, (topic) => post({ kind: 'published', topic }))
      : undefined;
    await relay?.start();
    let wakeFlag: Int32Array | undefined;
    port.on('message', (message: ToProjectionsThread) => {
      if (message.kind === 'wake-flag') wakeFlag = new Int32Array(message.flag);
      if (message.kind === 'appended') {
        // Cleared before the read: an append from now on sends the next wake-up.
        if (wakeFlag) Atomics.store(wakeFlag, 0, 0);
        adapters.wakeEvents();
      }
      if (message.kind === 'stop') {
        void (async () => {
          await relay?.stop();
          await host.stop();
          await adapters.close();
          post({ kind: 'stopped' });
        })();
      }
    });
    post({ kind: 'started', statuses: host.status() });
  } catch (error) {
    post({
      kind: 'failed',
      message: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
  }
}

void main();
