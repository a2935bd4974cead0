import { openSqliteFile } from '../sqlite-file';
import { assertAttempt, type AttemptLog } from './port';

export interface SqliteAttemptLogOptions {
  /** Database file; its folder is created when missing. `:memory:` for a throw-away log. */
  readonly path: string;
}

/**
 * Attempts in a SQLite file, one row each. Processes of one host share the file (WAL, busy timeout); an add
 * and the read of its key run in one immediate transaction, and drop the key's expired rows on the way.
 */
export function createSqliteAttemptLog(options: SqliteAttemptLogOptions): AttemptLog {
  const db = openSqliteFile(options.path);
  db.exec(`
    CREATE TABLE IF NOT EXISTS attempts (
      seq INTEGER PRIMARY KEY,
      key TEXT NOT NULL,
      at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS attempts_key ON attempts (key, expires_at);
    CREATE INDEX IF NOT EXISTS attempts_expiry ON attempts (expires_at);
  `);
  const insert = db.prepare('INSERT INTO attempts (key, at, expires_at) VALUES (?, ?, ?)');
  const dropExpired = db.prepare('DELETE FROM attempts WHERE key = ? AND expires_at <= ?');
  const select = db
    .prepare<[string, number], number>(
      'SELECT at FROM attempts WHERE key = ? AND expires_at > ? ORDER BY at, seq',
    )
    .pluck();
  const clear = db.prepare('DELETE FROM attempts WHERE key = ?');
  const remove = db.prepare('DELETE FROM attempts WHERE key = ? AND seq = ?');
  const sweep = db.prepare('DELETE FROM attempts WHERE expires_at <= ?');
  const add = db.transaction((key: string, at: number, expiresAt: number) => {
    dropExpired.run(key, at);
    const { lastInsertRowid } = insert.run(key, at, expiresAt);
    return { id: String(lastInsertRowid), times: select.all(key, at) };
  });

  return {
    async add(key, at, expiresAt) {
      assertAttempt(key, at, expiresAt);
      return add.immediate(key, at, expiresAt);
    },
    async list(key, now) {
      assertAttempt(key, now);
      return select.all(key, now);
    },
    async remove(key, id) {
      assertAttempt(key);
      if (/^[1-9][0-9]{0,15}$/.test(id)) remove.run(key, Number(id));
    },
    async clear(key) {
      assertAttempt(key);
      clear.run(key);
    },
    async sweep(now) {
      assertAttempt(null, now);
      return sweep.run(now).changes;
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
