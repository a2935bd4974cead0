import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

/** Waits this long for another process's write lock instead of failing at once with SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * The WAL size (pages of 4 KiB) past which the committing writer checkpoints inline. SQLite's default, 1,000,
 * made about one commit in a hundred wait for a checkpoint's copy and fsync (the p99 of write-to-visible
 * lag); the platform's background checkpointer (`bin/sqlite-checkpointer.ts`) keeps the WAL well below this,
 * which stays as the bound where none runs (the tests).
 */
export const WAL_AUTOCHECKPOINT_PAGES = 10_000;

/**
 * Opens a SQLite file as the embedded adapters share theirs: the folder made when missing (`:memory:`: a
 * throw-away database), WAL, `synchronous` as asked, a busy timeout, since other processes (separate
 * services on the same files) may hold the write lock for a moment, and deleted content zeroed.
 */
export function openSqliteFile(path: string, synchronous: 'NORMAL' | 'FULL' = 'NORMAL'): Database.Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${synchronous}`);
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    // What a write replaces or deletes is overwritten with zeros, not left in free space: an erased person's
    // values, scrubbed from the read models, must not stay readable in the file's free pages.
    db.pragma('secure_delete = ON');
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
