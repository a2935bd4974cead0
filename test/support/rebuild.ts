import { join } from 'node:path';
import { openAdapters } from '../../bin/adapters';
import { startRebuildDecoders } from '../../bin/threads';
import { versionedCollection } from '../../contracts/read-models';
import { loadConfig } from '../../infra/config';
import { createSqliteEventStore } from '../../infra/event-store/sqlite';
import { createLogger } from '../../infra/logging';
import type { ReadStore } from '../../infra/read-store/port';
import type { Document } from '../../contracts/read-model-changes';
import { READ_MODEL_PROJECTIONS } from '../../projections/read-models/catalogue';
import { rebuildProjection } from '../../projections/rebuild';
import type { TestPlatform } from './platform';

/** One read model's documents as the live projection wrote them and as a rebuild from position 0 did. */
export interface RebuiltCollection {
  readonly projection: string;
  readonly collection: string;
  readonly live: Document[];
  readonly rebuilt: Document[];
}

/** Waits until every projection of the running platform has applied every event its store holds. */
export async function waitForAllProjections(platform: TestPlatform): Promise<void> {
  const events = createSqliteEventStore({ path: join(platform.dataDir, 'events.db') });
  const head = await events.headPosition().finally(() => events.close());
  if (!(await platform.running.services.host!.waitFor(head, 60_000)))
    throw new Error(`the projections did not reach position ${head}`);
}

async function allDocuments(readStore: ReadStore, collection: string): Promise<Document[]> {
  const documents: Document[] = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await readStore.find(collection, { limit: 1000, offset, withTotal: false });
    documents.push(...page.items);
    if (page.items.length < 1000) return documents;
  }
}

/**
 * Rebuilds projections (`names`, or all) of a stopped platform's data directory from position 0 into a new
 * version, as `npm run replay` does (on the SQLite store the log is decoded on a worker thread), and reads
 * every collection in the version that was live and in the rebuilt one, documents in id order.
 */
export async function rebuildProjections(
  dataDir: string,
  names?: readonly string[],
): Promise<RebuiltCollection[]> {
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const logger = createLogger('silent');
  const adapters = await openAdapters(config, logger);
  try {
    const collections: RebuiltCollection[] = [];
    for (const projection of READ_MODEL_PROJECTIONS) {
      if (names && !names.includes(projection.name)) continue;
      const { fromVersion, toVersion } = await rebuildProjection(
        projection,
        { events: adapters.events, readStore: adapters.readStore, logger },
        () => undefined,
        { startDecoders: (version) => startRebuildDecoders(config, projection.name, version) },
      );
      for (const base of Object.keys(projection.collections))
        collections.push({
          projection: projection.name,
          collection: base,
          live: await allDocuments(adapters.readStore, versionedCollection(base, fromVersion)),
          rebuilt: await allDocuments(adapters.readStore, versionedCollection(base, toVersion)),
        });
    }
    return collections;
  } finally {
    await adapters.close();
  }
}
