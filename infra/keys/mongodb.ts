import { MongoClient, MongoServerError, type Collection } from 'mongodb';
import { PlatformError } from '../../contracts/errors';
import { withinTimeLimit } from '../mongodb-time-limit';
import {
  assertErasedAt,
  assertSubject,
  newDataKey,
  type DataKey,
  type DataKeyStore,
  type KeyWrapper,
} from './port';

export interface MongoDataKeyStoreOptions {
  readonly url: string;
  readonly database: string;
  /** The longest one read may run (QUERY_BUDGET_MS), sent as its `maxTimeMS`. */
  readonly queryBudgetMs: number;
  readonly wrapper: KeyWrapper;
}

const DUPLICATE_KEY = 11000;
/** Subjects per `$in` read of `existing`: a reader's batch of events may name thousands. */
const READ_BATCH = 1000;

interface StoredKey {
  /** The subject. */
  readonly _id: string;
  readonly keyId: string;
  readonly wrapped: string;
}

interface StoredTombstone {
  /** The subject. */
  readonly _id: string;
  readonly erasedAt: number;
}

/** A write that failed on a unique index; FerretDB reports some as an internal error with SQLite's text. */
function isDuplicate(error: unknown): boolean {
  return (
    error instanceof MongoServerError &&
    (error.code === DUPLICATE_KEY || error.message.includes('UNIQUE constraint failed'))
  );
}

/**
 * Data keys in MongoDB, shared by every process, using only what FerretDB also makes atomic: an insert
 * against a unique index (`_id`) and a delete. Keys and tombstones are documents of two collections, both
 * named by subject.
 *
 * - Two first `keyFor`s of a subject each insert their key; the second insert fails on `_id`, and both read
 *   the one stored.
 * - A destroy inserts the tombstone first, then deletes the key: from the insert on, every read answers
 *   `erased`, since reads treat a tombstone as winning over a key, so no order of steps leaves a usable key.
 *   Reads look at keys first, then at tombstones: a key that a destroy deleted in between is seen erased.
 * - A key stored after its tombstone (a `keyFor` that looked before the destroy, inserted after it) or left
 *   by a destroy that died after its insert is deleted by the next read or destroy that sees both.
 *
 * Deleting a document does not make its bytes physically gone on MongoDB: they stay in the collection's data
 * files until the storage engine reuses the space, in the oplog of a replica set until it rolls over, and in
 * backups. An operator who must prove an erasure runs `compact` on `_data_keys` (every member of a replica
 * set), waits out the oplog window (or resyncs members), and expires older backups; on FerretDB the same
 * holds for its backend (PostgreSQL: `VACUUM FULL` of the collection's table). The keys there are wrapped:
 * what remains is readable only with the key-encryption key too.
 */
export async function createMongoDataKeyStore(options: MongoDataKeyStoreOptions): Promise<DataKeyStore> {
  const { wrapper } = options;
  const client = new MongoClient(options.url, { ignoreUndefined: true });
  await client.connect();
  const db = client.db(options.database);
  const keys: Collection<StoredKey> = db.collection<StoredKey>('_data_keys');
  const tombstones: Collection<StoredTombstone> = db.collection<StoredTombstone>('_data_key_tombstones');

  const maxTimeMS = options.queryBudgetMs;
  const read = <T>(query: Promise<T>): Promise<T> =>
    withinTimeLimit(
      query,
      () => new PlatformError('unavailable', `the data key store did not answer within ${maxTimeMS} ms`),
    );

  /** The stored state of a few subjects: keys read first, then tombstones (see above). */
  const lookup = async (subjects: readonly string[]): Promise<Map<string, DataKey | 'erased'>> => {
    const found = await read(keys.find({ _id: { $in: [...subjects] } }, { maxTimeMS }).toArray());
    const erased = await read(
      tombstones.find({ _id: { $in: [...subjects] } }, { maxTimeMS, projection: { _id: 1 } }).toArray(),
    );
    const answer = new Map<string, DataKey | 'erased'>(erased.map(({ _id }) => [_id, 'erased']));
    const shadowed = found.filter(({ _id }) => answer.has(_id)).map(({ _id }) => _id);
    if (shadowed.length > 0) await keys.deleteMany({ _id: { $in: shadowed } });
    const live = found.filter(({ _id }) => !answer.has(_id));
    const unwrapped = await Promise.all(live.map((stored) => wrapper.unwrap(stored.wrapped, stored._id)));
    live.forEach((stored, index) => answer.set(stored._id, { id: stored.keyId, key: unwrapped[index]! }));
    return answer;
  };

  /** `lookup` in reads of up to `READ_BATCH` subjects. */
  const lookupInBatches = async (subjects: readonly string[]): Promise<Map<string, DataKey | 'erased'>> => {
    const distinct = [...new Set(subjects)];
    const answer = new Map<string, DataKey | 'erased'>();
    for (let start = 0; start < distinct.length; start += READ_BATCH)
      for (const [subject, key] of await lookup(distinct.slice(start, start + READ_BATCH)))
        answer.set(subject, key);
    return answer;
  };

  return {
    async keysFor(subjects) {
      subjects.forEach(assertSubject);
      const answer = await lookupInBatches(subjects);
      const missing = [...new Set(subjects)].filter((subject) => !answer.has(subject));
      if (missing.length === 0) return answer;
      await Promise.all(
        missing.map(async (subject) => {
          const made = newDataKey();
          try {
            await keys.insertOne({
              _id: subject,
              keyId: made.id,
              wrapped: await wrapper.wrap(made.key, subject),
            });
          } catch (error) {
            if (!isDuplicate(error)) throw error;
          }
        }),
      );
      // Whoever inserted first, and erased if a destroy came in between (our key, inserted after the
      // destroy's delete, is deleted here).
      for (const [subject, key] of await lookupInBatches(missing)) answer.set(subject, key);
      const lost = missing.find((subject) => !answer.has(subject));
      if (lost !== undefined) throw new Error(`the data key of ${lost} was not stored`);
      return answer;
    },
    async existing(subjects) {
      subjects.forEach(assertSubject);
      return lookupInBatches(subjects);
    },
    async destroy(subject, erasedAt) {
      assertSubject(subject);
      assertErasedAt(erasedAt);
      let erased = true;
      try {
        await tombstones.insertOne({ _id: subject, erasedAt });
      } catch (error) {
        if (!isDuplicate(error)) throw error;
        erased = false;
      }
      // Also on a repeat: it finishes a destroy that died between its two steps.
      await keys.deleteOne({ _id: subject });
      return erased;
    },
    async close() {
      await client.close();
    },
  };
}
