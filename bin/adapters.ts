import { mkdirSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { join, resolve } from 'node:path';
import type { Config } from '../infra/config';
import { PersonalDataEventStore } from '../infra/event-store/personal-data';
import type { Logger } from '../infra/logging';
import type { ReadStore } from '../infra/read-store/port';
import { createSqliteReadStore } from '../infra/read-store/sqlite';
import { BUSY_TIMEOUT_MS } from '../infra/sqlite-file';
import { createInProcessStream, type InProcessStreamHandle } from '../infra/stream/in-process';
import type { Stream } from '../infra/stream/port';
import { createLocalBlobStore } from '../infra/blob-store/local-files';
import type { AttemptLog } from '../infra/attempts/port';
import { createSqliteAttemptLog } from '../infra/attempts/sqlite';
import type { BlobStore } from '../infra/blob-store/port';
import type { DeliveryStore } from '../infra/deliveries/port';
import { createSqliteDeliveryStore } from '../infra/deliveries/sqlite';
import { keyChannelName, openDataKeys } from './data-keys';
import { embeddedFile, openSqliteEventStore } from './embedded-stores';
import {
  eventStoreDbAdapter,
  mongoAttemptLogAdapter,
  mongoDeliveryStoreAdapter,
  kafkaStreamAdapter,
  gridFsBlobStoreAdapter,
  mongoReadStoreAdapter,
} from './production-adapters';

export interface Adapters {
  /** Personal values sealed on the way in and opened on the way out; `events.sealed` is the store as stored. */
  readonly events: PersonalDataEventStore;
  readonly readStore: ReadStore;
  readonly blobs: BlobStore;
  readonly stream: () => Promise<Stream>;
  /** Tells the event store that another thread appended (embedded store only; EventStoreDB pushes). */
  readonly wakeEvents: () => void;
  /** Tells the stream's consumers that another thread published to `topic` (embedded stream only). */
  readonly wakeStream: (topic: string) => void;
  close(): Promise<void>;
}

export async function openAdapters(config: Config, logger: Logger): Promise<Adapters> {
  const dataDir = resolve(config.DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  const sqliteEvents = config.EVENT_STORE === 'sqlite' ? openSqliteEventStore(config) : undefined;
  const events = new PersonalDataEventStore(
    sqliteEvents ??
      eventStoreDbAdapter().createEventStoreDbEventStore({
        connectionString: config.ESDB_URL!,
      }),
    await openDataKeys(config),
    { keyChannel: keyChannelName(config) },
  );
  const readStore =
    config.READ_STORE === 'mongodb'
      ? await mongoReadStoreAdapter().createMongoReadStore({
          url: config.MONGO_URL!,
          database: config.MONGO_DATABASE,
          queryBudgetMs: config.QUERY_BUDGET_MS,
        })
      : await createSqliteReadStore({
          path: embeddedFile(config, 'readModels'),
          groupCommit: true,
          // The main thread answers requests: it must not sleep while the projections thread commits.
          ...(isMainThread && { yieldForWriteLockMs: BUSY_TIMEOUT_MS }),
        });
  const blobs =
    (config.BLOB_STORE ?? (config.READ_STORE === 'mongodb' ? 'gridfs' : 'local')) === 'gridfs'
      ? await gridFsBlobStoreAdapter().createGridFsBlobStore({
          url: config.MONGO_URL!,
          database: config.MONGO_DATABASE,
          queryBudgetMs: config.QUERY_BUDGET_MS,
        })
      : createLocalBlobStore(join(dataDir, 'blobs'));
  let stream: Stream | undefined;
  let embeddedStream: InProcessStreamHandle | undefined;
  const streamLogger = logger.child({ component: 'stream' });
  return {
    events,
    readStore,
    blobs,
    wakeEvents: () => sqliteEvents?.notifyExternalAppend(),
    wakeStream: (topic) => embeddedStream?.notifyExternalPublish(topic),
    stream: async () =>
      (stream ??=
        config.STREAM === 'kafka'
          ? kafkaStreamAdapter().createKafkaStream({
              brokers: config.KAFKA_BROKERS!.split(',').map((broker) => broker.trim()),
              clientId: 'records-platform',
              maxBatchBytes: config.KAFKA_MAX_BATCH_BYTES,
              logger: streamLogger,
            })
          : (embeddedStream = createInProcessStream({
              path: embeddedFile(config, 'stream'),
              logger: streamLogger,
            }))),
    async close() {
      await stream?.close();
      await blobs.close();
      await readStore.close();
      await events.close();
    },
  };
}

/**
 * The sign-in attempt log, where the read store is: a SQLite file under DATA_DIR, which the processes of one
 * host share, or a collection beside the MongoDB read models, which every replica shares.
 */
export async function openAttemptLog(config: Config): Promise<AttemptLog> {
  return config.READ_STORE === 'mongodb'
    ? mongoAttemptLogAdapter().createMongoAttemptLog({
        url: config.MONGO_URL!,
        database: config.MONGO_DATABASE,
        queryBudgetMs: config.QUERY_BUDGET_MS,
      })
    : createSqliteAttemptLog({ path: embeddedFile(config, 'attempts') });
}

/**
 * The delivery store, where the read store is: a SQLite file under DATA_DIR, which the processes of one host
 * share (as durable as SQLITE_SYNCHRONOUS makes the events it delivers), or collections beside the MongoDB
 * read models, which every integrator replica shares.
 */
export async function openDeliveryStore(config: Config): Promise<DeliveryStore> {
  return config.READ_STORE === 'mongodb'
    ? mongoDeliveryStoreAdapter().createMongoDeliveryStore({
        url: config.MONGO_URL!,
        database: config.MONGO_DATABASE,
        queryBudgetMs: config.QUERY_BUDGET_MS,
      })
    : createSqliteDeliveryStore({
        path: embeddedFile(config, 'deliveries'),
        synchronous: config.SQLITE_SYNCHRONOUS,
      });
}
