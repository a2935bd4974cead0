import { ProjectionHost, type Projections } from '../../projections/host';
import { READ_MODEL_PROJECTIONS } from '../../projections/read-models/catalogue';
import { ThreadedProjections } from '../../projections/threaded-host';
import type { Kernel } from '../kernel';
import type { ServiceModule } from '../service-module';
import { PROJECTIONS_THREAD_ENTRY, type ProjectionsThreadData } from '../threads';

export interface ProjectionsService extends ServiceModule {
  readonly host: Projections;
  /** Whether the relay runs beside the projections, on their thread. */
  readonly relays: boolean;
}

/**
 * The read-model projections: on a worker thread of their own (PROJECTIONS_THREAD), with the relay when
 * `relay`, or on this thread.
 */
export function projectionsService(kernel: Kernel, options: { relay: boolean }): ProjectionsService {
  const { config, adapters, metrics } = kernel;
  const threaded = config.PROJECTIONS_THREAD
    ? new ThreadedProjections(
        PROJECTIONS_THREAD_ENTRY,
        { config, relay: options.relay } satisfies ProjectionsThreadData,
        (projection, lagMs) => metrics.observeVisibleLag(projection, lagMs),
        (topic) => adapters.wakeStream(topic),
      )
    : undefined;
  const host: Projections =
    threaded ??
    new ProjectionHost(READ_MODEL_PROJECTIONS, {
      events: adapters.events,
      readStore: adapters.readStore,
      logger: kernel.logger.child({ component: 'projections' }),
      onVisible: (projection, lagMs) => metrics.observeVisibleLag(projection, lagMs),
    });
  let stopWaking = (): void => undefined;
  return {
    host,
    relays: threaded !== undefined && options.relay,
    metrics: {
      projectionLag: (head) =>
        host.status().map((status) => ({
          projection: status.name,
          version: status.version,
          lagPositions: Number(head - status.position),
          caughtUp: status.caughtUp,
        })),
      // The dead letters are in the read store, shared by every process: counted where the projections run.
      deadLetters: () => kernel.deadLetters.countsByProjection(),
    },
    async start() {
      // The thread reads the store on its own connection: each append here wakes it at once.
      if (threaded) stopWaking = adapters.events.onAfterCommit(() => threaded.notifyAppended());
      await host.start();
    },
    async stop() {
      stopWaking();
      await host.stop();
    },
  };
}
