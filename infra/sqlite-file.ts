import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

/**
 * Opens a SQLite file as the embedded adapters share theirs: the folder made when missing (`:memory:`: a
 * throw-away database), WAL, `synchronous` as asked, and a busy timeout, since other processes (separate
 * services on the same files) may hold the write lock for a moment.
 */
export function openSqliteFile(path: string, synchronous: 'NORMAL' | 'FULL' = 'NORMAL'): Database.Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${synchronous}`);
    db.pragma('busy_timeout = 5000');
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
