import { open, type FileHandle } from 'node:fs/promises';
import { PlatformError } from '../../contracts/errors';
import { openSqliteFile } from '../sqlite-file';
import {
  assertErasedAt,
  assertSubject,
  newDataKey,
  type DataKey,
  type DataKeyStore,
  type KeyWrapper,
} from './port';

export interface SqliteDataKeyStoreOptions {
  /** Database file; its folder is created when missing. */
  readonly path: string;
  readonly wrapper: KeyWrapper;
  /**
   * How durable a new key is when it is answered: `FULL` (the default), on disk, as an event appended under
   * `SQLITE_SYNCHRONOUS=FULL`; `NORMAL`, committed, as such an event under `NORMAL` (a process crash loses
   * neither, a power cut may lose the last of both). An erasure is always on disk before it is answered.
   */
  readonly synchronous?: 'NORMAL' | 'FULL';
}

/**
 * A subject's row as read: a wrapped key, or (both null) its tombstone. Read as an array (`raw`), not an object
 * with a property per column: a rebuild reads a row for every record, and making the objects took about a
 * quarter of the query.
 */
type StoredKey = readonly [subject: string, keyId: string | null, wrapped: string | null];

/**
 * A function whose promise resolves once the commits made before it was called are on disk: it fsyncs the
 * WAL file of the database at `path`, at most one fsync at a time, the calls made during one sharing the next.
 */
function walSync(path: string): (() => Promise<void>) & { close(): Promise<void> } {
  if (path === ':memory:') return Object.assign(() => Promise.resolve(), { close: () => Promise.resolve() });
  const wal = `${path}-wal`;
  // Opened once: the WAL file stays the same file while a connection (the store's own) is open.
  let handle: Promise<FileHandle> | undefined;
  const fsyncWal = async (): Promise<void> => {
    handle ??= open(wal, 'r');
    try {
      await (await handle).sync();
    } catch (error) {
      handle = undefined;
      throw error;
    }
  };
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const durable = (): Promise<void> => {
    if (running === undefined) {
      running = fsyncWal().finally(() => (running = undefined));
      return running;
    }
    // The fsync under way may have begun before the caller's commit: the one after it covers that commit.
    next ??= running
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return durable();
      });
    return next;
  };
  durable.close = async (): Promise<void> => {
    const open = handle;
    handle = undefined;
    await (await open?.catch(() => undefined))?.close();
  };
  return durable;
}

/** A new key to store. */
interface NewKey {
  readonly subject: string;
  readonly id: string;
  readonly wrapped: string;
}

/** A call's new keys waiting for their turn's transaction. */
interface PendingKeys {
  readonly keys: readonly NewKey[];
  readonly settle: (outcome: { rows: (StoredKey | undefined)[] } | { error: unknown }) => void;
}

/**
 * Data keys in a SQLite file, one row per subject, shared by the processes of a host (WAL, busy timeout).
 *
 * - Durable before it is answered (`synchronous: 'FULL'`; with `NORMAL` a new key is as durable as an event
 *   appended under `NORMAL`): a key lost to a power cut after values were sealed under it loses those
 *   values, and an erasure lost so would bring a key back (an erasure is always made durable). Rather than `synchronous = FULL`, whose fsync at
 *   every commit blocks the event loop (a millisecond or more on a busy disk, per record created), commits
 *   are `NORMAL` and the store then fsyncs the WAL file itself, on libuv's thread pool; a new key or an
 *   erasure is answered once an fsync begun after its commit has finished, and one fsync serves every commit
 *   made while the one before it ran. (What FULL does, minus the blocking: the WAL holds the commit, and a
 *   checkpoint syncs the WAL before copying it and the database file before resetting it.)
 * - Two first `keysFor`s of a subject (any handles) each insert-or-ignore their key, then read the row: both
 *   answer the one that was stored first.
 * - The new keys of one event-loop turn are stored in one transaction (group commit): each costs a commit's
 *   fsync otherwise, which concurrent requests would pay once per record. Every `keysFor` still answers only
 *   once its keys are durably stored.
 * - A destroy turns the row into a tombstone in one statement. `secure_delete` has SQLite overwrite the bytes
 *   it frees with zeros, and a TRUNCATE checkpoint afterwards copies the zeroed pages into the file and
 *   empties the WAL, which held images of the key's page from before: no file of the store keeps the key.
 */
/** How often a destroy tries to empty the WAL, and how long it waits between tries, while readers hold it. */
const CHECKPOINT_ATTEMPTS = 20;
const CHECKPOINT_RETRY_MS = 25;

export function createSqliteDataKeyStore(options: SqliteDataKeyStoreOptions): DataKeyStore {
  const { wrapper } = options;
  const db = openSqliteFile(options.path, 'NORMAL');
  try {
    db.pragma('secure_delete = ON');
    db.exec(`
      CREATE TABLE IF NOT EXISTS data_keys (
        subject TEXT PRIMARY KEY,
        key_id TEXT,
        wrapped TEXT,
        erased_at INTEGER,
        CHECK ((wrapped IS NULL) = (erased_at IS NOT NULL) AND (key_id IS NULL) = (wrapped IS NULL))
      ) WITHOUT ROWID;
    `);
  } catch (error) {
    db.close();
    throw error;
  }
  const selectOne = db
    .prepare<[string], StoredKey>('SELECT subject, key_id, wrapped FROM data_keys WHERE subject = ?')
    .raw();
  // One statement for any number of subjects (a JSON array), rather than one per batch size.
  const selectMany = db
    .prepare<[string], StoredKey>(
      'SELECT subject, key_id, wrapped FROM data_keys WHERE subject IN (SELECT value FROM json_each(?))',
    )
    .raw();
  const insertKey = db.prepare<[string, string, string]>(
    'INSERT INTO data_keys (subject, key_id, wrapped) VALUES (?, ?, ?) ON CONFLICT (subject) DO NOTHING',
  );
  /** Whether each call's keys were stored (false: a subject had a row already). */
  const insertKeys = db.transaction((calls: readonly PendingKeys[]): boolean[][] =>
    calls.map((call) =>
      call.keys.map((key) => insertKey.run(key.subject, key.id, key.wrapped).changes === 1),
    ),
  );
  const erase = db.prepare<[string, number]>(`
    INSERT INTO data_keys (subject, erased_at) VALUES (?, ?)
    ON CONFLICT (subject) DO UPDATE SET key_id = NULL, wrapped = NULL, erased_at = excluded.erased_at
    WHERE erased_at IS NULL
  `);

  const durable = walSync(options.path);
  const truncated = (): boolean => {
    const [checkpoint] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    return checkpoint?.busy === 0;
  };
  let pending: PendingKeys[] = [];
  /** Stores the turn's new keys in one transaction, then answers each the row its subject holds (ours, or the one before it). */
  const storePending = (): void => {
    const calls = pending;
    pending = [];
    if (calls.length === 0) return;
    let stored: boolean[][];
    try {
      stored = insertKeys.immediate(calls);
    } catch (error) {
      for (const call of calls) call.settle({ error });
      return;
    }
    calls.forEach((call, index) =>
      call.settle({
        rows: call.keys.map((key, at) =>
          stored[index]![at] ? [key.subject, key.id, key.wrapped] : selectOne.get(key.subject),
        ),
      }),
    );
  };
  /** Inserts-or-ignores the keys with the others of this turn: each subject's row once that commit is done. */
  const store = (keys: readonly NewKey[]): Promise<(StoredKey | undefined)[]> =>
    new Promise((resolve, reject) => {
      if (pending.length === 0) setImmediate(storePending);
      pending.push({
        keys,
        settle: (outcome) => ('error' in outcome ? reject(outcome.error) : resolve(outcome.rows)),
      });
    });

  /** The rows the subjects hold, by subject (none for a subject without one). */
  const rowsOf = (subjects: readonly string[]): Map<string, StoredKey> => {
    const unique = [...new Set(subjects)];
    const rows =
      unique.length === 1
        ? [selectOne.get(unique[0]!)].filter((row) => row !== undefined)
        : selectMany.all(JSON.stringify(unique));
    return new Map(rows.map((row) => [row[0], row]));
  };

  /** The keys the rows hold, by subject. */
  const keysOf = async (rows: Map<string, StoredKey>): Promise<Map<string, DataKey | 'erased'>> => {
    const keys = new Map<string, DataKey | 'erased'>();
    const unwrapping: Promise<void>[] = [];
    for (const [subject, id, wrapped] of rows.values()) {
      if (id === null || wrapped === null) keys.set(subject, 'erased');
      else if (wrapper.unwrapNow) keys.set(subject, { id, key: wrapper.unwrapNow(wrapped, subject) });
      else
        unwrapping.push(wrapper.unwrap(wrapped, subject).then((key) => void keys.set(subject, { id, key })));
    }
    await Promise.all(unwrapping);
    return keys;
  };

  return {
    async keysFor(subjects) {
      subjects.forEach(assertSubject);
      const rows = rowsOf(subjects);
      const made = [...new Set(subjects)]
        .filter((subject) => !rows.has(subject))
        .map((subject) => ({ subject, key: newDataKey() }));
      const answer = new Map<string, DataKey | 'erased'>();
      if (made.length > 0) {
        const wrapped = await Promise.all(made.map(({ subject, key }) => wrapper.wrap(key.key, subject)));
        const stored = await store(
          made.map(({ subject, key }, index) => ({ subject, id: key.id, wrapped: wrapped[index]! })),
        );
        if (options.synchronous !== 'NORMAL') await durable();
        made.forEach(({ subject, key }, index) => {
          const row = stored[index];
          if (!row) throw new Error(`the data key of ${subject} was not stored`);
          // Ours when it is what we wrapped (a random nonce in it): no need to unwrap it (with a KMS, a call saved).
          if (row[2] === wrapped[index]) answer.set(subject, key);
          else rows.set(subject, row);
        });
      }
      for (const [subject, key] of await keysOf(rows)) answer.set(subject, key);
      return answer;
    },
    async existing(subjects) {
      subjects.forEach(assertSubject);
      return keysOf(rowsOf(subjects));
    },
    async destroy(subject, erasedAt) {
      assertSubject(subject);
      assertErasedAt(erasedAt);
      const erased = erase.run(subject, erasedAt).changes === 1;
      await durable();
      // Also on a repeat: a destroy whose checkpoint could not finish is completed by the next one. A reader
      // (another thread's projection) holds the WAL for a moment only: waited for a little before giving up.
      for (let attempt = 1; attempt < CHECKPOINT_ATTEMPTS; attempt++) {
        if (truncated()) return erased;
        await new Promise((resolve) => setTimeout(resolve, CHECKPOINT_RETRY_MS));
      }
      if (!truncated())
        throw new PlatformError(
          'unavailable',
          `the key of ${subject} is destroyed, but a reader kept its old bytes in the WAL: destroy it again`,
        );
      return erased;
    },
    async close() {
      if (pending.length > 0 && db.open) storePending();
      if (db.open) db.close();
      await durable.close();
    },
  };
}
