import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../infra/config';
import { createSqliteEventStore, type SqliteEventStoreHandle } from '../infra/event-store/sqlite';

/** The embedded event store under `DATA_DIR`; light to import, for threads that need nothing else. */
export function openSqliteEventStore(config: Config): SqliteEventStoreHandle {
  const dataDir = resolve(config.DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  return createSqliteEventStore({
    path: join(dataDir, 'events.db'),
    synchronous: config.SQLITE_SYNCHRONOUS,
    groupCommit: true,
  });
}
