import { parentPort, workerData } from 'node:worker_threads';
import { projectionNamed } from '../projections/read-models/catalogue';
import type { DecoderThreadData, FromDecoderThread, ToDecoderThread } from '../projections/thread-protocol';
import { decodeWindow, type DecodedWindow, type ProjectedWindow } from '../projections/window-decoder';
import { prepareChanges } from '../infra/read-store/prepared';
import { PersonalDataEventStore, READ_AHEAD } from '../infra/event-store/personal-data';
import { openDataKeys } from './data-keys';
import { openSqliteEventStore } from './embedded-stores';

/** Keys a decoder thread keeps: the subjects of its last two read-ahead batches at most. */
const DECODER_CACHED_KEYS = 2 * READ_AHEAD;

/**
 * A decoder thread of a rebuild (see `ThreadedWindowDecoder`): reads windows of the log through its own
 * event-store connection and sends back the changes they make.
 */
async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('decoder-thread must run as a worker thread');
  const post = (message: FromDecoderThread): void => port.postMessage(message);
  const { config, projection: name, version } = workerData as DecoderThreadData;
  const projection = projectionNamed(name);
  if (!projection) {
    post({ kind: 'failed', message: `unknown projection ${name}` });
    return;
  }
  // Projections see personal values opened, as everywhere. A rebuild meets a subject's events mostly together
  // (a record's create and its first changes): a cache of every key met (50,000) keeps each past a few garbage
  // collections into the old generation, about 4% more instructions an event than this one (cachegrind).
  const events = new PersonalDataEventStore(openSqliteEventStore(config), await openDataKeys(config), {
    maxCachedKeys: DECODER_CACHED_KEYS,
  });
  // The SQLite read store takes documents as JSON: written here, each crosses as one string.
  const forReadStore = (window: ProjectedWindow): DecodedWindow =>
    config.READ_STORE === 'sqlite'
      ? { events: window.events, prepared: prepareChanges(window.changes) }
      : window;
  port.on('message', (request: ToDecoderThread) => {
    decodeWindow(events, projection, version, request).then(
      (window) => post({ kind: 'decoded', id: request.id, window: forReadStore(window) }),
      (error: unknown) =>
        post({
          kind: 'failed',
          id: request.id,
          message: error instanceof Error ? error.message : String(error),
        }),
    );
  });
  post({ kind: 'ready' });
}

main().catch((error: unknown) =>
  parentPort?.postMessage({
    kind: 'failed',
    message: error instanceof Error ? error.message : String(error),
  } satisfies FromDecoderThread),
);
