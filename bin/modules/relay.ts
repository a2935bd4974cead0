import type { Config } from '../../infra/config';
import type { Logger } from '../../infra/logging';
import { Relay } from '../../projections/relay';
import type { Adapters } from '../adapters';
import type { Kernel } from '../kernel';
import type { ServiceModule } from '../service-module';

export interface RelayService extends ServiceModule {
  readonly relay: Relay;
}

/** The relay of events to the stream, on this thread. */
export async function relayService(kernel: Kernel): Promise<RelayService> {
  const relay = await relayOf(kernel.config, kernel.adapters, kernel.logger);
  return {
    relay,
    start: () => relay.start(),
    stop: () => relay.stop(),
  };
}

/** The relay on these adapters, not started. */
export async function relayOf(
  config: Config,
  adapters: Adapters,
  logger: Logger,
  onPublished?: (topic: string) => void,
): Promise<Relay> {
  return new Relay(
    {
      // The stream carries events as stored: personal values sealed, opened by each consumer.
      events: adapters.events.sealed,
      readStore: adapters.readStore,
      stream: await adapters.stream(),
      logger: logger.child({ component: 'relay' }),
      ...(onPublished && { onPublished }),
    },
    config.EVENTS_TOPIC,
  );
}
