import { MongoClient, ObjectId, type Collection } from 'mongodb';
import { PlatformError } from '../../contracts/errors';
import { withinTimeLimit } from '../mongodb-time-limit';
import { assertAttempt, type AttemptLog } from './port';

export interface MongoAttemptLogOptions {
  readonly url: string;
  readonly database: string;
  /** Default `login_attempts`. */
  readonly collection?: string;
  /** The longest one read may run (QUERY_BUDGET_MS), sent as its `maxTimeMS`. */
  readonly queryBudgetMs: number;
}

interface StoredAttempt {
  readonly key: string;
  readonly at: number;
  readonly expiresAt: number;
}

/**
 * Attempts in a MongoDB collection, one document each: an add is an insert (never a read-modify-write, so
 * concurrent adds from any number of processes all count), then a read of the key. Only inserts, finds with
 * sort, and deletes: FerretDB serves all of it. Expired documents go at `sweep` (no TTL index: FerretDB has
 * none, and a sweep keeps the adapters alike).
 */
export async function createMongoAttemptLog(options: MongoAttemptLogOptions): Promise<AttemptLog> {
  const client = new MongoClient(options.url, { ignoreUndefined: true });
  await client.connect();
  const attempts: Collection<StoredAttempt> = client
    .db(options.database)
    .collection<StoredAttempt>(options.collection ?? 'login_attempts');
  await attempts.createIndex({ key: 1, expiresAt: 1 }, { name: 'key_expiry' });
  await attempts.createIndex({ expiresAt: 1 }, { name: 'expiry' });

  const maxTimeMS = options.queryBudgetMs;
  const timesOf = async (key: string, now: number): Promise<number[]> =>
    (
      await withinTimeLimit(
        attempts
          .find({ key, expiresAt: { $gt: now } }, { projection: { _id: 0, at: 1 }, maxTimeMS })
          .sort({ at: 1, _id: 1 })
          .toArray(),
        () => new PlatformError('unavailable', `the attempt log did not answer within ${maxTimeMS} ms`),
      )
    ).map((attempt) => attempt.at);

  return {
    async add(key, at, expiresAt) {
      assertAttempt(key, at, expiresAt);
      const { insertedId } = await attempts.insertOne({ key, at, expiresAt });
      return { id: insertedId.toHexString(), times: await timesOf(key, at) };
    },
    async remove(key, id) {
      assertAttempt(key);
      if (ObjectId.isValid(id) && /^[0-9a-f]{24}$/.test(id))
        await attempts.deleteOne({ _id: new ObjectId(id), key });
    },
    async list(key, now) {
      assertAttempt(key, now);
      return timesOf(key, now);
    },
    async clear(key) {
      assertAttempt(key);
      await attempts.deleteMany({ key });
    },
    async sweep(now) {
      assertAttempt(null, now);
      return (await attempts.deleteMany({ expiresAt: { $lte: now } })).deletedCount;
    },
    async close() {
      await client.close();
    },
  };
}
