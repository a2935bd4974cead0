import {
  Long,
  MongoBulkWriteError,
  MongoClient,
  MongoServerError,
  type AnyBulkWriteOperation,
  type Document as BsonDocument,
  type Collection,
} from 'mongodb';
import { PlatformError } from '../../contracts/errors';
import type { StoreQuery } from '../../languages/filter/store-query';
import { withinTimeLimit } from '../mongodb-time-limit';
import { compileFilter, compileSort, indexKeys, isFerretDbV1, regexEngineOf } from './mongodb-query';
import { applyPatch, copiedDocument, valueAtPath } from './patch';
import { escapeKeys, escapePath, unescapeKeys, unescapePath } from './mongodb-keys';
import { UniqueViolationError, type Checkpoint, type FindResult, type ReadStore } from './port';
import {
  MAX_INDEXES_PER_COLLECTION,
  type Document,
  type IndexSpec,
  type ReadModelChange,
} from '../../contracts/read-model-changes';
import {
  assertChange,
  assertCheckpoint,
  assertCollectionName,
  assertIndexSpec,
  isCollectionName,
  orderByIds,
  readPage,
  totalFromShortPage,
} from './validation';

export interface MongoReadStoreOptions {
  readonly url: string;
  readonly database: string;
  /**
   * The longest one read may run (QUERY_BUDGET_MS), sent as every read's `maxTimeMS`: a filter the server
   * cannot answer within it is refused with `query_too_expensive`.
   */
  readonly queryBudgetMs: number;
}

/** Not a valid collection name (see validation.ts), so it can never clash with one. */
const CHECKPOINTS_COLLECTION = '_checkpoints';
const NAMESPACE_NOT_FOUND = 26;
const DUPLICATE_KEY = 11000;
const NOT_IMPLEMENTED = 238;
/**
 * The most writes one bulk write carries on FerretDB 1.x. Its update command keeps a pooled SQLite connection
 * for each statement that matched a document until the command ends (a `defer` in a loop, msg_update.go),
 * and the pool has 100: a command of 100 matching updates waits for a connection forever, and every later
 * command with it. MongoDB takes any number (the driver splits them at the server's `maxWriteBatchSize`).
 */
const FERRETDB_WRITES_PER_BULK_WRITE = 64;
/** Older than every real position (those are >= 0): a just-inserted document is replaced at once. */
const INSERTED_POSITION = Long.fromNumber(-1);

type StoredDocument = BsonDocument & { _id: string };

function toDocument(stored: BsonDocument): Document {
  const { _id, _pos, ...fields } = stored;
  if (typeof _id !== 'string') throw new Error('stored read-model document has no string _id');
  return { ...unescapeKeys(fields), id: _id };
}

function storedPosition(stored: BsonDocument): bigint | undefined {
  const position: unknown = stored._pos;
  return typeof position === 'number' || position instanceof Long ? BigInt(position.toString()) : undefined;
}

/** Whether a write failed on a unique index; FerretDB reports some as an internal error with SQLite's text. */
function isUniqueViolation(error: unknown): error is MongoServerError {
  return (
    error instanceof MongoServerError &&
    (error.code === DUPLICATE_KEY || error.message.includes('UNIQUE constraint failed'))
  );
}

/**
 * The index named in a duplicate-key message: MongoDB says `index: <name> dup key`; FerretDB on SQLite
 * says `index '<table>_<name>'` for updates and nothing for inserts (the caller then investigates).
 */
function indexNamedInMessage(message: string, uniqueIndexNames: readonly string[]): string | undefined {
  const mongo = /index: (\S+) dup key/.exec(message)?.[1];
  if (mongo) return mongo;
  const sqlite = /UNIQUE constraint failed: index '([^']+)'/.exec(message)?.[1];
  if (!sqlite) return undefined;
  const candidates = uniqueIndexNames.filter((name) => sqlite.endsWith(`_${name}`));
  return candidates.sort((a, b) => b.length - a.length)[0];
}

/**
 * Creates the index. A unique index skips documents missing one of its paths, as SQLite's does (its
 * NULLs never collide): MongoDB needs a partial index for that; FerretDB refuses partial indexes but its
 * unique indexes skip missing values already.
 */
async function createIndex(
  target: Collection<StoredDocument>,
  keys: [string, 1][],
  index: IndexSpec,
): Promise<void> {
  if (!index.unique) {
    await target.createIndex(keys, { name: index.name });
    return;
  }
  const allPathsPresent = Object.fromEntries(keys.map(([field]) => [field, { $exists: true }]));
  try {
    await target.createIndex(keys, {
      name: index.name,
      unique: true,
      partialFilterExpression: allPathsPresent,
    });
  } catch (error) {
    if (!(error instanceof MongoServerError && error.code === NOT_IMPLEMENTED)) throw error;
    await target.createIndex(keys, { name: index.name, unique: true });
  }
}

interface UniqueIndex {
  readonly name: string;
  readonly fields: readonly string[];
}

/** The changes written as bulk writes; the others are applied alone (`runsByCollection`). */
type BulkChange = Extract<ReadModelChange, { op: 'upsert' | 'patch' | 'delete' }>;
type SoleChange = Extract<ReadModelChange, { op: 'index' | 'copy' | 'patchWhere' }>;

function toWrites(change: BulkChange): AnyBulkWriteOperation<StoredDocument>[] {
  const position = Long.fromBigInt(change.position);
  switch (change.op) {
    case 'upsert': {
      const { id: _id } = change.doc;
      const fields = { ...escapeKeys(change.doc), _pos: position };
      // A guarded upsert (filter on `_pos`, upsert: true) would collide with the existing `_id` on a stale
      // change, and the duplicate-key error would stop the ordered bulk write (FerretDB does not even say
      // which statement failed). Instead: insert the document with a position older than any if it is
      // missing, then replace it if its position is older. A stale change matches neither. The second
      // write also restores what FerretDB's $setOnInsert leaves out (top-level nulls and empty arrays).
      return [
        {
          updateOne: {
            filter: { _id },
            update: { $setOnInsert: { ...fields, _pos: INSERTED_POSITION } },
            upsert: true,
          },
        },
        { replaceOne: { filter: { _id, _pos: { $lt: position } }, replacement: fields } },
      ];
    }
    case 'patch': {
      const set = Object.fromEntries(
        Object.entries(change.set ?? {})
          .filter(([, value]) => value !== undefined)
          .map(([path, value]) => [escapePath(path), escapeKeys(value)]),
      );
      const unset = Object.fromEntries((change.unset ?? []).map((path) => [escapePath(path), '']));
      const inc = Object.fromEntries(
        Object.entries(change.inc ?? {}).map(([path, amount]) => [escapePath(path), amount]),
      );
      const update: BsonDocument = { $set: { ...set, _pos: position } };
      if (Object.keys(unset).length > 0) update.$unset = unset;
      if (Object.keys(inc).length > 0) update.$inc = inc;
      return [{ updateOne: { filter: { _id: change.id, _pos: { $lt: position } }, update } }];
    }
    case 'delete':
      return [{ deleteOne: { filter: { _id: change.id, _pos: { $lt: position } } } }];
  }
}

/**
 * Consecutive changes to one collection, written as one ordered bulk write; an index or a copy change alone:
 * an index is not a bulk write, and a copy reads its source only once the writes before it are acknowledged.
 */
function runsByCollection(changes: readonly ReadModelChange[]): (BulkChange[] | SoleChange)[] {
  const runs: (BulkChange[] | SoleChange)[] = [];
  for (const change of changes) {
    if (change.op === 'index' || change.op === 'copy' || change.op === 'patchWhere') {
      runs.push(change);
      continue;
    }
    const last = runs.at(-1);
    if (Array.isArray(last) && last[0].collection === change.collection) last.push(change);
    else runs.push([change]);
  }
  return runs;
}

/**
 * The production read store on MongoDB, restricted to what FerretDB 1.x (the CI server) supports: no
 * transactions. Each document keeps the position of its last change in `_pos` (Int64), and every write is
 * filtered on it, so replaying changes is harmless; the checkpoint is written after the changes are
 * acknowledged. Connects before resolving.
 */
export async function createMongoReadStore(options: MongoReadStoreOptions): Promise<ReadStore> {
  // `ignoreUndefined`: store documents as their JSON would be, as the SQLite adapter does.
  const client = new MongoClient(options.url, { ignoreUndefined: true });
  await client.connect();
  const db = client.db(options.database);
  const checkpoints = db.collection<{ _id: string; value: string }>(CHECKPOINTS_COLLECTION);
  const buildInfo = await client.db('admin').command({ buildInfo: 1 });
  const regexEngine = regexEngineOf(buildInfo);
  const writesPerBulkWrite = isFerretDbV1(buildInfo) ? FERRETDB_WRITES_PER_BULK_WRITE : Infinity;
  const maxTimeMS = options.queryBudgetMs;

  /** A filtered read the server ended at the budget: the filter asks for too much work. */
  const tooExpensive = (): Error =>
    new PlatformError(
      'query_too_expensive',
      `the query needs more than the ${maxTimeMS} ms one read may take: narrow the filter`,
    );
  /** A read by key cannot be too expensive: the server did not answer in time. */
  const tooSlow = (): Error =>
    new PlatformError('unavailable', `the read store did not answer within ${maxTimeMS} ms`);

  function collection(name: string): Collection<StoredDocument> {
    assertCollectionName(name);
    return db.collection<StoredDocument>(name);
  }

  async function uniqueIndexes(name: string): Promise<UniqueIndex[]> {
    const indexes = await collection(name).indexes({ maxTimeMS });
    return indexes
      .filter((index) => index.unique === true && typeof index.name === 'string')
      .map((index) => ({ name: String(index.name), fields: Object.keys(index.key) }));
  }

  /**
   * Which unique index a failed run violated, when the server did not say: the first change of the run
   * that was not applied and whose resulting document collides with another one on a unique index.
   */
  async function findViolatedIndex(
    run: readonly BulkChange[],
    indexes: readonly UniqueIndex[],
  ): Promise<string> {
    const target = collection(run[0].collection);
    for (const change of run) {
      if (change.op === 'delete') continue;
      const id = change.op === 'upsert' ? change.doc.id : change.id;
      const current = await target.findOne({ _id: id }, { maxTimeMS });
      const currentPosition = current ? storedPosition(current) : undefined;
      if (currentPosition !== undefined && currentPosition >= change.position) continue;
      let intended: Document;
      if (change.op === 'upsert') intended = change.doc;
      else if (current) intended = applyPatch(toDocument(current), change);
      else continue;
      for (const index of indexes) {
        const values = index.fields.map((field) =>
          valueAtPath(intended, field === '_id' ? 'id' : unescapePath(field)),
        );
        if (values.some((value) => value === undefined || value === null)) continue;
        const clash = await target.findOne(
          { _id: { $ne: id }, ...Object.fromEntries(index.fields.map((field, i) => [field, values[i]])) },
          { maxTimeMS },
        );
        if (clash) return index.name;
      }
    }
    return 'unknown';
  }

  async function toUniqueViolation(
    error: MongoServerError,
    run: readonly BulkChange[],
  ): Promise<UniqueViolationError> {
    const name = run[0].collection;
    const indexes = (await uniqueIndexes(name)).filter((index) => index.name !== '_id_');
    const writeErrors = error instanceof MongoBulkWriteError ? [error.writeErrors].flat() : [];
    const messages = [error.message, ...writeErrors.map((writeError) => writeError.errmsg ?? '')];
    const indexNames = indexes.map((index) => index.name);
    const named = messages.map((message) => indexNamedInMessage(message, indexNames)).find(Boolean);
    if (named) return new UniqueViolationError(name, named);
    if (indexes.length === 1) return new UniqueViolationError(name, indexes[0].name);
    return new UniqueViolationError(name, await findViolatedIndex(run, indexes));
  }

  async function indexesOf(target: Collection<StoredDocument>) {
    return target.indexes({ maxTimeMS }).catch((error: unknown) => {
      if (error instanceof MongoServerError && error.code === NAMESPACE_NOT_FOUND) return [];
      throw error;
    });
  }

  async function ensureIndex(name: string, index: IndexSpec): Promise<void> {
    assertIndexSpec(index);
    // An interval index keys documents by an expression of two values; MongoDB indexes values only.
    if (index.interval) return;
    const target = collection(name);
    const keys = indexKeys(index.paths, index.unique === true);
    const existing = (await indexesOf(target)).find((candidate) => candidate.name === index.name);
    if (existing) {
      const sameKeys = JSON.stringify(Object.entries(existing.key)) === JSON.stringify(keys);
      if (sameKeys && (existing.unique === true) === (index.unique === true)) return;
      throw new Error(`index ${index.name} of ${name} already exists with a different definition`);
    }
    try {
      await createIndex(target, keys, index);
    } catch (error) {
      if (isUniqueViolation(error)) throw new UniqueViolationError(name, index.name);
      throw error;
    }
  }

  /** An `index` change: `ensureIndex` unless the collection already has its most indexes (port.ts). */
  async function ensureIndexWithin(name: string, index: IndexSpec): Promise<void> {
    if (index.interval) return ensureIndex(name, index);
    const indexes = await indexesOf(collection(name));
    const secondary = indexes.filter((candidate) => candidate.name !== '_id_');
    const exists = secondary.some((candidate) => candidate.name === index.name);
    if (exists || secondary.length < MAX_INDEXES_PER_COLLECTION) await ensureIndex(name, index);
  }

  async function writeRun(run: readonly BulkChange[]): Promise<void> {
    try {
      const target = collection(run[0].collection);
      const writes = run.flatMap(toWrites);
      // In order, each part once the one before is acknowledged: as one ordered bulk write would.
      for (let start = 0; start < writes.length; start += writesPerBulkWrite)
        await target.bulkWrite(writes.slice(start, start + writesPerBulkWrite), { ordered: true });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const violation = await toUniqueViolation(error, run);
      // An insert whose replacement then failed (possible on FerretDB only, where the insert lacks
      // top-level nulls) must not stay behind.
      const upserted = run.flatMap((change) => (change.op === 'upsert' ? [change.doc.id] : []));
      await collection(run[0].collection).deleteMany({
        _id: { $in: upserted },
        _pos: INSERTED_POSITION,
      });
      throw violation;
    }
  }

  /**
   * A copy change: its source as the writes before it left it (they are acknowledged), written as the upsert
   * of the copied document. FerretDB 1.x has no `$merge` to copy on the server.
   */
  async function applyCopy(change: Extract<ReadModelChange, { op: 'copy' }>): Promise<void> {
    const source = await collection(change.from.collection).findOne({ _id: change.from.id });
    if (!source) return;
    const doc = copiedDocument(toDocument(source), change);
    await writeRun([{ op: 'upsert', collection: change.collection, doc, position: change.position }]);
  }

  /** A patchWhere as one update of many. */
  async function applyPatchWhere(change: Extract<ReadModelChange, { op: 'patchWhere' }>): Promise<void> {
    const set = Object.fromEntries(
      Object.entries(change.set)
        .filter(([, value]) => value !== undefined)
        .map(([path, value]) => [escapePath(path), escapeKeys(value)]),
    );
    await collection(change.collection).updateMany(
      { ...change.where, _pos: { $lte: Long.fromBigInt(change.position) } },
      { $set: { ...set, _pos: Long.fromBigInt(change.position) } },
    );
  }

  return {
    ensureIndex,

    async apply(changes: readonly ReadModelChange[], checkpoint?: Checkpoint): Promise<void> {
      changes.forEach(assertChange);
      if (checkpoint) assertCheckpoint(checkpoint);
      for (const run of runsByCollection(changes)) {
        if (Array.isArray(run)) await writeRun(run);
        else if (run.op === 'index') await ensureIndexWithin(run.collection, run.index);
        else if (run.op === 'copy') await applyCopy(run);
        else await applyPatchWhere(run);
      }
      if (checkpoint) {
        await checkpoints.updateOne(
          { _id: checkpoint.name },
          { $set: { value: checkpoint.value } },
          { upsert: true },
        );
      }
    },

    async get(name: string, id: string): Promise<Document | null> {
      const stored = await withinTimeLimit(collection(name).findOne({ _id: id }, { maxTimeMS }), tooSlow);
      return stored ? toDocument(stored) : null;
    },

    async getMany(name: string, ids: readonly string[]): Promise<Document[]> {
      if (ids.length === 0) return [];
      const stored = await withinTimeLimit(
        collection(name)
          .find({ _id: { $in: [...new Set(ids)] } }, { maxTimeMS })
          .toArray(),
        tooSlow,
      );
      return orderByIds(ids, stored.map(toDocument));
    },

    async find(name: string, query: StoreQuery): Promise<FindResult> {
      const target = collection(name);
      const filter = compileFilter(query.filter, regexEngine);
      const sort = compileSort(query.sort);
      const page = readPage(query.offset, query.limit, query.countLimit);
      // The page and the total share one budget.
      const deadline = Date.now() + maxTimeMS;
      const remaining = (): number => Math.max(1, deadline - Date.now());
      // MongoDB reads a limit of 0 as "no limit".
      const stored =
        page.limit === 0
          ? []
          : await withinTimeLimit(
              target
                .find(filter, {
                  sort,
                  skip: page.offset,
                  ...(page.limit === undefined ? {} : { limit: page.limit }),
                  maxTimeMS: remaining(),
                })
                .toArray(),
              tooExpensive,
            );
      const items = stored.map(toDocument);
      if (query.withTotal === false) return { items };
      return {
        items,
        total:
          totalFromShortPage(page, items.length) ??
          (await withinTimeLimit(
            target.countDocuments(filter, {
              maxTimeMS: remaining(),
              ...(page.countLimit !== undefined && { limit: page.countLimit }),
            }),
            tooExpensive,
          )),
      };
    },

    async count(name: string, query: Pick<StoreQuery, 'filter'> = {}): Promise<number> {
      return withinTimeLimit(
        collection(name).countDocuments(compileFilter(query.filter, regexEngine), { maxTimeMS }),
        tooExpensive,
      );
    },

    async getCheckpoint(name: string): Promise<string | null> {
      const stored = await withinTimeLimit(checkpoints.findOne({ _id: name }, { maxTimeMS }), tooSlow);
      return stored ? stored.value : null;
    },

    async deleteCheckpoint(name: string): Promise<void> {
      await checkpoints.deleteOne({ _id: name });
    },

    async dropCollection(name: string): Promise<void> {
      try {
        await collection(name).drop();
      } catch (error) {
        if (!(error instanceof MongoServerError && error.code === NAMESPACE_NOT_FOUND)) throw error;
      }
    },

    async listCollections(): Promise<string[]> {
      const collections = await withinTimeLimit(
        db.listCollections({}, { nameOnly: true, maxTimeMS }).toArray(),
        tooSlow,
      );
      return collections
        .map((info) => info.name)
        .filter(isCollectionName)
        .sort();
    },

    async close(): Promise<void> {
      await client.close();
    },
  };
}
