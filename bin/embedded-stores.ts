import { join, resolve } from 'node:path';
import type { Config } from '../infra/config';
import { createSqliteEventStore, type SqliteEventStoreHandle } from '../infra/event-store/sqlite';

/** The embedded adapters' SQLite files, under `DATA_DIR`. */
export const EMBEDDED_FILES = {
  events: 'events.db',
  readModels: 'read-models.db',
  stream: 'stream.db',
  attempts: 'attempts.db',
  deliveries: 'deliveries.db',
  vectors: 'vectors.db',
  dataKeys: 'data-keys.db',
} as const;

export function embeddedFile(config: Config, file: keyof typeof EMBEDDED_FILES): string {
  return join(resolve(config.DATA_DIR), EMBEDDED_FILES[file]);
}

/** The SQLite files the configured adapters use (none when every store is a server). */
export function embeddedSqliteFiles(config: Config): string[] {
  const used: Array<keyof typeof EMBEDDED_FILES> = [];
  if (config.EVENT_STORE === 'sqlite') used.push('events');
  if (config.READ_STORE === 'sqlite') used.push('readModels', 'attempts', 'deliveries', 'dataKeys');
  if (config.STREAM === 'in-process') used.push('stream');
  if (config.SEMANTIC_SEARCH && config.VECTOR_INDEX === 'embedded') used.push('vectors');
  return used.map((file) => embeddedFile(config, file));
}

/** The embedded event store under `DATA_DIR`; light to import, for threads that need nothing else. */
export function openSqliteEventStore(config: Config): SqliteEventStoreHandle {
  return createSqliteEventStore({
    path: embeddedFile(config, 'events'),
    synchronous: config.SQLITE_SYNCHRONOUS,
    groupCommit: true,
  });
}
