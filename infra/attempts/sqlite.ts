import { openSqliteFile } from '../sqlite-file';
import { assertAttempt, type AddedAttempt, type AttemptLog } from './port';

interface PendingAdd {
  readonly key: string;
  readonly at: number;
  readonly expiresAt: number;
  resolve(added: AddedAttempt): void;
  reject(error: unknown): void;
}

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
  const addOne = (key: string, at: number, expiresAt: number) => {
    dropExpired.run(key, at);
    const { lastInsertRowid } = insert.run(key, at, expiresAt);
    return { id: String(lastInsertRowid), times: select.all(key, at) };
  };
  const addAll = db.transaction((adds: readonly PendingAdd[]) =>
    adds.map((pending) => addOne(pending.key, pending.at, pending.expiresAt)),
  );
  // Adds of one turn of the event loop share one transaction: a commit per add was most of their cost (a
  // webhook receiver adds one per request). Each still sees every add before it, in order.
  let pending: PendingAdd[] = [];
  const flush = (): void => {
    const adds = pending;
    pending = [];
    try {
      addAll.immediate(adds).forEach((added, index) => adds[index]!.resolve(added));
    } catch (error) {
      for (const add of adds) add.reject(error);
    }
  };

  return {
    async add(key, at, expiresAt) {
      assertAttempt(key, at, expiresAt);
      return new Promise<AddedAttempt>((resolve, reject) => {
        pending.push({ key, at, expiresAt, resolve, reject });
        if (pending.length === 1) setImmediate(flush);
      });
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
