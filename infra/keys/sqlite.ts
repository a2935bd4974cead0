import { PlatformError } from '../../contracts/errors';
import { openSqliteFile } from '../sqlite-file';
import {
  assertErasedAt,
  assertSubject,
  erasedSubject,
  newDataKey,
  type DataKey,
  type DataKeyStore,
  type KeyWrapper,
} from './port';

export interface SqliteDataKeyStoreOptions {
  /** Database file; its folder is created when missing. */
  readonly path: string;
  readonly wrapper: KeyWrapper;
}

/** A subject's row: a wrapped key, or (both null, `erased_at` set) its tombstone. */
interface StoredKey {
  readonly subject: string;
  readonly key_id: string | null;
  readonly wrapped: string | null;
  readonly erased_at: number | null;
}

/**
 * Data keys in a SQLite file, one row per subject, shared by the processes of a host (WAL, busy timeout).
 *
 * - `synchronous = FULL`: a key lost to a power cut after values were sealed under it loses those values, and
 *   an erasure lost so would bring a key back.
 * - Two first `keyFor`s of a subject (any handles) each insert-or-ignore their key, then read the row: both
 *   answer the one that was stored first.
 * - A destroy turns the row into a tombstone in one statement. `secure_delete` has SQLite overwrite the bytes
 *   it frees with zeros, and a TRUNCATE checkpoint afterwards copies the zeroed pages into the file and
 *   empties the WAL, which held images of the key's page from before: no file of the store keeps the key.
 */
export function createSqliteDataKeyStore(options: SqliteDataKeyStoreOptions): DataKeyStore {
  const { wrapper } = options;
  const db = openSqliteFile(options.path, 'FULL');
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
  const selectOne = db.prepare<[string], StoredKey>('SELECT * FROM data_keys WHERE subject = ?');
  // One statement for any number of subjects (a JSON array), rather than one per batch size.
  const selectMany = db.prepare<[string], StoredKey>(
    'SELECT * FROM data_keys WHERE subject IN (SELECT value FROM json_each(?))',
  );
  const insertKey = db.prepare<[string, string, string]>(
    'INSERT INTO data_keys (subject, key_id, wrapped) VALUES (?, ?, ?) ON CONFLICT (subject) DO NOTHING',
  );
  const erase = db.prepare<[string, number]>(`
    INSERT INTO data_keys (subject, erased_at) VALUES (?, ?)
    ON CONFLICT (subject) DO UPDATE SET key_id = NULL, wrapped = NULL, erased_at = excluded.erased_at
    WHERE erased_at IS NULL
  `);

  const keyOf = async (row: StoredKey): Promise<DataKey | 'erased'> =>
    row.key_id === null || row.wrapped === null
      ? 'erased'
      : { id: row.key_id, key: await wrapper.unwrap(row.wrapped, row.subject) };

  const answer = async (subject: string, row: StoredKey): Promise<DataKey> => {
    const key = await keyOf(row);
    if (key === 'erased') throw erasedSubject(subject);
    return key;
  };

  return {
    async keyFor(subject) {
      assertSubject(subject);
      const stored = selectOne.get(subject);
      if (stored) return answer(subject, stored);
      const made = newDataKey();
      const wrapped = await wrapper.wrap(made.key, subject);
      insertKey.run(subject, made.id, wrapped);
      const row = selectOne.get(subject);
      if (!row) throw new Error(`the data key of ${subject} was not stored`);
      // Ours when it is what we wrapped (a random IV in it): no need to unwrap it (with a KMS, a call saved).
      return row.wrapped === wrapped ? made : answer(subject, row);
    },
    async existing(subjects) {
      subjects.forEach(assertSubject);
      const rows = selectMany.all(JSON.stringify([...new Set(subjects)]));
      const keys = await Promise.all(rows.map(keyOf));
      return new Map(rows.map((row, index) => [row.subject, keys[index]!]));
    },
    async destroy(subject, erasedAt) {
      assertSubject(subject);
      assertErasedAt(erasedAt);
      const erased = erase.run(subject, erasedAt).changes === 1;
      // Also on a repeat: a destroy whose checkpoint could not finish is completed by the next one.
      const [checkpoint] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      if (checkpoint?.busy !== 0)
        throw new PlatformError(
          'unavailable',
          `the key of ${subject} is destroyed, but a reader kept its old bytes in the WAL: destroy it again`,
        );
      return erased;
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
