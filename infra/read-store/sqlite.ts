import Database from 'better-sqlite3';
import type { StoreFilter, StoreQuery } from '../../languages/filter/store-query';
import { BUSY_TIMEOUT_MS, openSqliteFile } from '../sqlite-file';
import { compileLikeMatcher, type LikeMatcher } from '../../languages/filter/like-pattern';
import { applyPatch, copiedDocument } from './patch';
import { UniqueViolationError, type Checkpoint, type FindResult, type ReadStore } from './port';
import type { PreparedChange, PreparedUpsert } from './prepared';
import {
  MAX_INDEXES_PER_COLLECTION,
  type Document,
  type IndexSpec,
  type ReadModelChange,
} from '../../contracts/read-model-changes';
import {
  LIKE_FUNCTION,
  compileFilter,
  compileOrderBy,
  indexColumns,
  valueExpression,
  type SqlFragment,
} from './sqlite-query';
import {
  INTERVAL_BOUNDS,
  intervalCountOf,
  intervalCountSql,
  intervalIndexColumns,
  type IntervalBound,
  type IntervalIndex,
} from './sqlite-intervals';
import {
  assertChange,
  assertCheckpoint,
  assertCollectionName,
  assertIndexSpec,
  assertPosition,
  orderByIds,
  readPage,
  type Page,
  totalFromShortPage,
} from './validation';

export interface SqliteReadStoreOptions {
  /** Database file; its folder is created when missing. `:memory:` for a throw-away store. */
  readonly path: string;
  /**
   * Applies made in the same event-loop turn (the projections of one thread flushing the same events)
   * share one transaction, each in a savepoint of its own so one failing apply fails only itself. Every
   * apply still resolves only after its commit.
   */
  readonly groupCommit?: boolean;
  /**
   * A read-only connection to an existing store (the read pool's threads): it can only read, so a bug there
   * cannot write, and it never waits for the write lock.
   */
  readonly readOnly?: boolean;
  /**
   * An apply that meets another connection's write lock waits by trying again every few milliseconds, for
   * at most this long, while the thread goes on with its other work, instead of sleeping in SQLite's busy
   * handler: for a thread that answers requests, which a projection's transaction (about 100 ms under a
   * bulk load) would otherwise stop whole. Unset: it sleeps, up to the connection's busy timeout.
   */
  readonly yieldForWriteLockMs?: number;
}

interface PendingApply {
  readonly changes: readonly (ReadModelChange | PreparedChange)[];
  readonly checkpoint: Checkpoint | undefined;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** Collection `x` is table `docs_x`; the prefix keeps collections apart from the store's own tables. */
const TABLE_PREFIX = 'docs_';
const CHECKPOINTS_TABLE = 'read_store_checkpoints';
/**
 * The interval indexes of each collection (`IntervalKeys`), as asked for: a count looks here for one that
 * answers it, since SQLite's schema keeps only their SQL.
 */
const INTERVAL_INDEXES_TABLE = 'read_store_interval_indexes';
/** Dynamic filters make many distinct statements; the cache is dropped whole when it grows past this. */
const STATEMENT_CACHE_LIMIT = 500;
const LIKE_CACHE_LIMIT = 200;

function tableName(collection: string): string {
  assertCollectionName(collection);
  return `"${TABLE_PREFIX}${collection}"`;
}

function sqliteIndexName(collection: string, index: string): string {
  return `${TABLE_PREFIX}${collection}__${index}`;
}

/** The SQLite index of an interval index by one of its bounds. */
function intervalIndexName(collection: string, index: string, bound: IntervalBound): string {
  return `${sqliteIndexName(collection, index)}__${bound}`;
}

function assertPreparedUpsert(change: PreparedUpsert): void {
  if (typeof change.id !== 'string' || change.id.length === 0 || typeof change.json !== 'string')
    throw new TypeError('a prepared upsert needs an id and its document as JSON');
  assertPosition(change.position);
}

function parseDocument(text: string): Document {
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null || !('id' in parsed) || typeof parsed.id !== 'string') {
    throw new Error('stored read-model document is not an object with a string id');
  }
  // Checked above, so no copy: JSON.parse made a fresh object already.
  return parsed as Document;
}

/**
 * SQLite's errors, recognised by shape: the native addon keeps the `SqliteError` class of the first
 * module instance that loaded it, so `instanceof` fails wherever modules are loaded twice (jest does).
 */
function sqliteError(error: unknown): { code: string; message: string } | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error) || !('message' in error)) {
    return undefined;
  }
  const { code, message } = error;
  return typeof code === 'string' && code.startsWith('SQLITE_') && typeof message === 'string'
    ? { code, message }
    : undefined;
}

/** Another connection holds the lock (SQLITE_BUSY, or one of its extended codes). */
function isBusy(error: unknown): boolean {
  return sqliteError(error)?.code.startsWith('SQLITE_BUSY') === true;
}

function isMissingTable(error: unknown): boolean {
  return sqliteError(error)?.message.startsWith('no such table') === true;
}

/** A UNIQUE failure on one of `collection`'s indexes, as the port's error; other errors unchanged. */
function asUniqueViolation(error: unknown, collection: string): unknown {
  const failure = sqliteError(error);
  if (failure?.code !== 'SQLITE_CONSTRAINT_UNIQUE') return error;
  const failed = /index '([^']+)'/.exec(failure.message)?.[1] ?? '';
  const prefix = sqliteIndexName(collection, '');
  return new UniqueViolationError(
    collection,
    failed.startsWith(prefix) ? failed.slice(prefix.length) : failed,
  );
}

/** The writer made the file and put it in WAL mode; a reader in WAL mode sees every commit made before it starts. */
function openReadOnly(path: string): Database.Database {
  return new Database(path, { readonly: true, fileMustExist: true });
}

/** The details of SQLite's `EXPLAIN QUERY PLAN`, one line per step. */
export interface QueryPlans {
  readonly items: string[];
  readonly count: string[];
}

export interface SqliteReadStore extends ReadStore {
  applyPrepared(changes: readonly PreparedChange[], checkpoint?: Checkpoint): Promise<void>;
  /** How SQLite runs the statements of `find` (for tests and tuning: shows which indexes serve a query). */
  explainFind(collection: string, query: StoreQuery): Promise<QueryPlans>;
}

interface CompiledFind {
  readonly filter: StoreFilter | undefined;
  readonly where: SqlFragment;
  readonly orderBy: string;
  readonly page: Page;
  readonly withTotal: boolean;
}

function compileFind(query: StoreQuery): CompiledFind {
  return {
    filter: query.filter,
    where: compileFilter(query.filter),
    orderBy: compileOrderBy(query.sort),
    page: readPage(query.offset, query.limit, query.countLimit),
    withTotal: query.withTotal !== false,
  };
}

/**
 * Limit and offset are validated integers, written into the SQL: SQLite's planner looks at a bound LIMIT,
 * so binding one expires the statement and every call would re-prepare it.
 */
function itemsSql(table: string, { where, orderBy, page }: CompiledFind): string {
  return `SELECT json(doc) FROM ${table} WHERE ${where.sql} ORDER BY ${orderBy} LIMIT ${page.limit ?? -1} OFFSET ${page.offset}`;
}

/** As `itemsSql`, a limit is written into the SQL: counting stops there. */
function countSql(table: string, where: SqlFragment, countLimit?: number): string {
  return countLimit === undefined
    ? `SELECT COUNT(*) FROM ${table} WHERE ${where.sql}`
    : `SELECT COUNT(*) FROM (SELECT 1 FROM ${table} WHERE ${where.sql} LIMIT ${countLimit})`;
}

/**
 * The embedded read store: one SQLite table per collection, documents stored as JSONB (SQLite's binary
 * JSON, which `json_extract` reads without parsing: two to three times faster filters than JSON text).
 * Writes of one `apply` and its checkpoint share a transaction. The connection is synchronous; the async
 * methods only satisfy the port.
 */
export function createSqliteReadStore(options: SqliteReadStoreOptions): SqliteReadStore {
  const db = options.readOnly ? openReadOnly(options.path) : openSqliteFile(options.path);

  const likeMatchers = new Map<string, LikeMatcher>();
  db.function(
    LIKE_FUNCTION,
    { deterministic: true, directOnly: true },
    (value: unknown, pattern: unknown) => {
      if (typeof value !== 'string' || typeof pattern !== 'string') return 0;
      let matches = likeMatchers.get(pattern);
      if (!matches) {
        if (likeMatchers.size >= LIKE_CACHE_LIMIT) likeMatchers.clear();
        matches = compileLikeMatcher(pattern);
        likeMatchers.set(pattern, matches);
      }
      return matches(value) ? 1 : 0;
    },
  );

  if (!options.readOnly) {
    db.exec(`CREATE TABLE IF NOT EXISTS ${CHECKPOINTS_TABLE} (name TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${INTERVAL_INDEXES_TABLE} ` +
        `(collection TEXT NOT NULL, name TEXT NOT NULL, spec TEXT NOT NULL, PRIMARY KEY (collection, name))`,
    );
  }

  const statements = new Map<string, Database.Statement<unknown[]>>();
  /** Prepared once per collection: writes are the hot path of every projection. */
  const writeStatements = new Map<string, WriteStatements>();
  /**
   * `get`'s statement of each collection, found by the collection's name: looking it up by its SQL meant
   * building and hashing that string on every read.
   */
  const getStatements = new Map<string, Database.Statement<[string], string>>();
  /** Statements die with their table: forgotten whenever a table may have gone. */
  function forgetStatements(): void {
    statements.clear();
    writeStatements.clear();
    getStatements.clear();
  }
  function getStatementOf(collection: string, table: string): Database.Statement<[string], string> {
    let prepared = getStatements.get(collection);
    if (!prepared) {
      prepared = db.prepare<[string], string>(`SELECT json(doc) FROM ${table} WHERE id = ?`).pluck();
      getStatements.set(collection, prepared);
    }
    return prepared;
  }
  function statement(sql: string): Database.Statement<unknown[]> {
    let prepared = statements.get(sql);
    if (!prepared) {
      if (statements.size >= STATEMENT_CACHE_LIMIT) statements.clear();
      prepared = db.prepare<unknown[]>(sql);
      statements.set(sql, prepared);
    }
    return prepared;
  }

  /** Collections known to have a table; another connection may add (looked up) or drop (see `read`) them. */
  const knownCollections = new Set<string>();

  function collectionExists(collection: string): boolean {
    if (knownCollections.has(collection)) return true;
    const found =
      statement(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`).get(
        TABLE_PREFIX + collection,
      ) !== undefined;
    if (found) knownCollections.add(collection);
    return found;
  }

  /** Creates the collection's table if needed; returns whether it did (so a rollback can forget it). */
  function createCollection(collection: string): boolean {
    if (collectionExists(collection)) return false;
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${tableName(collection)} ` +
        `(id TEXT PRIMARY KEY NOT NULL, doc BLOB NOT NULL, pos INTEGER NOT NULL)`,
    );
    knownCollections.add(collection);
    return true;
  }

  /** Runs a read; a collection that does not exist (or was just dropped elsewhere) reads as empty. */
  function read<T>(collection: string, whenMissing: T, query: (table: string) => T): T {
    const table = tableName(collection);
    if (!collectionExists(collection)) return whenMissing;
    try {
      return query(table);
    } catch (error) {
      if (!isMissingTable(error)) throw error;
      knownCollections.delete(collection);
      forgetStatements();
      return whenMissing;
    }
  }

  interface WriteStatements {
    readonly upsert: Database.Statement<[string, string, bigint]>;
    readonly storedBefore: Database.Statement<[string, bigint], string>;
    readonly update: Database.Statement<[string, bigint, string]>;
    readonly delete: Database.Statement<[string, bigint]>;
  }
  function writeStatementsOf(collection: string): WriteStatements {
    let prepared = writeStatements.get(collection);
    if (!prepared) {
      const table = tableName(collection);
      prepared = {
        upsert: db.prepare(
          `INSERT INTO ${table} (id, doc, pos) VALUES (?, jsonb(?), ?) ` +
            `ON CONFLICT (id) DO UPDATE SET doc = excluded.doc, pos = excluded.pos WHERE excluded.pos > ${table}.pos`,
        ),
        storedBefore: db
          .prepare<[string, bigint], string>(`SELECT json(doc) FROM ${table} WHERE id = ? AND pos < ?`)
          .pluck(),
        update: db.prepare(`UPDATE ${table} SET doc = jsonb(?), pos = ? WHERE id = ?`),
        delete: db.prepare(`DELETE FROM ${table} WHERE id = ? AND pos < ?`),
      };
      writeStatements.set(collection, prepared);
    }
    return prepared;
  }

  /** Creates a SQLite index unless one of its name exists, which must then have the same definition. */
  function createIndex(collection: string, index: IndexSpec, name: string, columns: string): void {
    const create = `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX`;
    const target = `"${name}" ON ${tableName(collection)} (${columns})`;
    // SQLite stores the statement's text without "IF NOT EXISTS": the check below compares with it.
    const definition = `${create} ${target}`;
    try {
      db.exec(`${create} IF NOT EXISTS ${target}`);
    } catch (error) {
      throw asUniqueViolation(error, collection);
    }
    const stored = statement(`SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?`)
      .pluck()
      .get(name);
    if (stored !== definition) {
      throw new Error(`index ${index.name} of ${collection} already exists with a different definition`);
    }
  }

  /** An interval index: its two SQLite indexes and its entry in the registry, together. */
  const ensureIntervalIndex = db.transaction((collection: string, index: IntervalIndex): void => {
    for (const bound of INTERVAL_BOUNDS)
      createIndex(
        collection,
        index,
        intervalIndexName(collection, index.name, bound),
        intervalIndexColumns(index, bound),
      );
    statement(
      `INSERT OR REPLACE INTO ${INTERVAL_INDEXES_TABLE} (collection, name, spec) VALUES (?, ?, ?)`,
    ).run(collection, index.name, JSON.stringify(index));
  });

  function ensureIndexNow(collection: string, index: IndexSpec): void {
    assertIndexSpec(index);
    createCollection(collection);
    if (index.interval) {
      ensureIntervalIndex(collection, { ...index, interval: index.interval });
      return;
    }
    const columns = indexColumns(index.paths, index.unique === true);
    createIndex(collection, index, sqliteIndexName(collection, index.name), columns);
  }

  /** An `index` change: `ensureIndexNow` unless the collection already has its most indexes (port.ts). */
  function ensureIndexWithin(collection: string, index: IndexSpec): void {
    createCollection(collection);
    const counted = statement(
      `SELECT count(*) AS secondary, count(*) FILTER (WHERE name = ?) AS named FROM sqlite_schema ` +
        `WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`,
    ).get(
      index.interval
        ? intervalIndexName(collection, index.name, 'from')
        : sqliteIndexName(collection, index.name),
      `${TABLE_PREFIX}${collection}`,
    ) as {
      secondary: number;
      named: number;
    };
    const added = index.interval ? INTERVAL_BOUNDS.length : 1;
    if (counted.named > 0 || counted.secondary + added <= MAX_INDEXES_PER_COLLECTION)
      ensureIndexNow(collection, index);
  }

  function applyChange(change: ReadModelChange | PreparedChange): void {
    if (change.op === 'index') {
      ensureIndexWithin(change.collection, change.index);
      return;
    }
    const write = writeStatementsOf(change.collection);
    switch (change.op) {
      case 'upsert':
        write.upsert.run(change.doc.id, JSON.stringify(change.doc), change.position);
        return;
      case 'upsertJson':
        write.upsert.run(change.id, change.json, change.position);
        return;
      case 'patch': {
        const stored = write.storedBefore.get(change.id, change.position);
        if (typeof stored !== 'string') return;
        write.update.run(
          JSON.stringify(applyPatch(parseDocument(stored), change)),
          change.position,
          change.id,
        );
        return;
      }
      case 'delete':
        write.delete.run(change.id, change.position);
        return;
      case 'patchWhere': {
        const entries = Object.entries(change.where);
        const rows = db
          .prepare<unknown[], { id: string; doc: string }>(
            `SELECT id, json(doc) AS doc FROM ${tableName(change.collection)} WHERE ` +
              [...entries.map(([key]) => `${valueExpression(key)} = ?`), 'pos <= ?'].join(' AND '),
          )
          .all(...entries.map(([, value]) => value), change.position);
        for (const row of rows)
          write.update.run(
            JSON.stringify(applyPatch(parseDocument(row.doc), change)),
            change.position,
            row.id,
          );
        return;
      }
      case 'copy': {
        // Read in this transaction, so the source is as the changes before this one left it.
        const source = read(change.from.collection, null, (table) =>
          getStatementOf(change.from.collection, table).get(change.from.id),
        );
        if (typeof source !== 'string') return;
        const copy = copiedDocument(parseDocument(source), change);
        write.upsert.run(copy.id, JSON.stringify(copy), change.position);
        return;
      }
    }
  }

  const applyInTransaction = db.transaction(
    (
      changes: readonly (ReadModelChange | PreparedChange)[],
      checkpoint: Checkpoint | undefined,
      created: string[],
    ) => {
      for (const change of changes) {
        if (createCollection(change.collection)) created.push(change.collection);
        try {
          applyChange(change);
        } catch (error) {
          throw asUniqueViolation(error, change.collection);
        }
      }
      if (checkpoint) {
        statement(
          `INSERT INTO ${CHECKPOINTS_TABLE} (name, value) VALUES (?, ?) ` +
            `ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
        ).run(checkpoint.name, checkpoint.value);
      }
    },
  );

  /** One apply; on failure the tables it created are forgotten (the rollback removed them). */
  function applyOne(
    { changes, checkpoint }: PendingApply,
    transaction: typeof applyInTransaction | typeof applyInTransaction.immediate,
  ): unknown {
    const created: string[] = [];
    try {
      transaction(changes, checkpoint, created);
      return undefined;
    } catch (error) {
      for (const collection of created) knownCollections.delete(collection);
      if (created.length > 0) forgetStatements();
      return error ?? new Error('apply failed');
    }
  }

  const groupTransaction = db.transaction((run: () => void) => run());
  let pendingApplies: PendingApply[] = [];
  /** While applies wait for another connection's write lock (`yieldForWriteLockMs`): since when, and the retry. */
  let lockWaitSince: number | undefined;
  let lockRetry: NodeJS.Timeout | undefined;
  /** Closing: the last applies wait for the lock as SQLite does, since no retry can follow. */
  let closing = false;
  const yieldsForLock = (): boolean => options.yieldForWriteLockMs !== undefined && !closing;

  /** Runs `transaction`, which begins IMMEDIATE, without sleeping for the lock when applies yield for it. */
  function withoutLockSleep(transaction: () => void): void {
    if (!yieldsForLock()) return transaction();
    db.pragma('busy_timeout = 0');
    try {
      transaction();
    } finally {
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /** Puts the batch back to be tried again shortly, unless applies do not yield or have waited long enough. */
  function waitsForLock(batch: readonly PendingApply[], error: unknown): boolean {
    const limit = options.yieldForWriteLockMs;
    if (limit === undefined || closing || !isBusy(error)) return false;
    lockWaitSince ??= performance.now();
    const waited = performance.now() - lockWaitSince;
    if (waited >= limit) return false;
    pendingApplies = [...batch, ...pendingApplies];
    // 1, 2, 4 … ms, at most 16: a projection's transaction takes tens of milliseconds.
    lockRetry = setTimeout(commitPendingApplies, Math.min(16, Math.max(1, waited / 2)));
    return true;
  }

  function commitPendingApplies(): void {
    lockRetry = undefined;
    const batch = pendingApplies;
    pendingApplies = [];
    if (batch.length === 0) return;
    const failures: unknown[] = [];
    try {
      // IMMEDIATE takes the write lock first, so another connection cannot interleave.
      withoutLockSleep(() => {
        // Alone, an apply begins its own transaction, and `applyOne` answers what fails there as its
        // failure: a store that yields begins it here, so that a taken lock is caught below.
        if (batch.length === 1 && !yieldsForLock())
          failures.push(applyOne(batch[0]!, applyInTransaction.immediate));
        else
          groupTransaction.immediate(() => {
            for (const apply of batch) failures.push(applyOne(apply, applyInTransaction));
          });
      });
    } catch (error) {
      if (waitsForLock(batch, error)) return;
      lockWaitSince = undefined;
      for (const apply of batch) apply.reject(error);
      return;
    }
    lockWaitSince = undefined;
    batch.forEach((apply, index) => {
      const failure = failures[index];
      if (failure === undefined) apply.resolve();
      else apply.reject(failure);
    });
  }

  function enqueueApply(
    changes: readonly (ReadModelChange | PreparedChange)[],
    checkpoint: Checkpoint | undefined,
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      pendingApplies.push({ changes, checkpoint, resolve, reject });
      // Waiting for the write lock: the retry applies it after those before it.
      if (lockRetry !== undefined) return;
      if (!options.groupCommit) commitPendingApplies();
      else if (pendingApplies.length === 1) setImmediate(commitPendingApplies);
    });
  }

  /** The collection's interval indexes; none on a store from before them (a read-only one has no table). */
  function intervalIndexesOf(collection: string): IntervalIndex[] {
    try {
      return statement(`SELECT spec FROM ${INTERVAL_INDEXES_TABLE} WHERE collection = ?`)
        .pluck()
        .all(collection)
        .map((spec) => JSON.parse(String(spec)) as IntervalIndex);
    } catch (error) {
      if (isMissingTable(error)) return [];
      throw error;
    }
  }

  /** How to count the matches of a filter: with an interval index where one answers it, else plainly. */
  function countStatement(
    collection: string,
    table: string,
    filter: StoreFilter | undefined,
    where: SqlFragment,
    countLimit?: number,
  ): SqlFragment {
    const byInterval = intervalCountOf(filter, () => intervalIndexesOf(collection));
    if (byInterval === undefined) return { sql: countSql(table, where, countLimit), params: where.params };
    const indexName = (bound: IntervalBound) => intervalIndexName(collection, byInterval.index.name, bound);
    return intervalCountSql(table, byInterval, indexName, countLimit);
  }

  function countMatches(
    collection: string,
    table: string,
    filter: StoreFilter | undefined,
    where: SqlFragment,
    countLimit?: number,
  ): number {
    const { sql, params } = countStatement(collection, table, filter, where, countLimit);
    return Number(
      statement(sql)
        .pluck()
        .get(...params),
    );
  }

  const findInSnapshot = db.transaction(
    (collection: string, table: string, compiled: CompiledFind): FindResult => {
      const { filter, where, page, withTotal } = compiled;
      const rows =
        page.limit === 0
          ? []
          : statement(itemsSql(table, compiled))
              .pluck()
              .all(...where.params);
      const items = rows.map((row) => parseDocument(String(row)));
      if (!withTotal) return { items };
      return {
        items,
        total:
          totalFromShortPage(page, items.length) ??
          countMatches(collection, table, filter, where, page.countLimit),
      };
    },
  );

  return {
    ensureIndex(collection: string, index: IndexSpec): Promise<void> {
      try {
        ensureIndexNow(collection, index);
        return Promise.resolve();
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    },

    apply(changes: readonly ReadModelChange[], checkpoint?: Checkpoint): Promise<void> {
      try {
        changes.forEach(assertChange);
        if (checkpoint) assertCheckpoint(checkpoint);
      } catch (error) {
        return Promise.reject(error);
      }
      return enqueueApply(changes, checkpoint);
    },

    applyPrepared(changes: readonly PreparedChange[], checkpoint?: Checkpoint): Promise<void> {
      try {
        // Checked where they were prepared; what the SQL binds still is here.
        for (const change of changes) {
          assertCollectionName(change.collection);
          if (change.op === 'upsertJson') assertPreparedUpsert(change);
        }
        if (checkpoint) assertCheckpoint(checkpoint);
      } catch (error) {
        return Promise.reject(error);
      }
      return enqueueApply(changes, checkpoint);
    },

    async get(collection: string, id: string): Promise<Document | null> {
      return read(collection, null, (table) => {
        const stored = getStatementOf(collection, table).get(id);
        return typeof stored === 'string' ? parseDocument(stored) : null;
      });
    },

    async getMany(collection: string, ids: readonly string[]): Promise<Document[]> {
      if (ids.length === 0) return [];
      return read(collection, [], (table) => {
        const rows = statement(`SELECT json(doc) FROM ${table} WHERE id IN (SELECT value FROM json_each(?))`)
          .pluck()
          .all(JSON.stringify(ids));
        return orderByIds(
          ids,
          rows.map((row) => parseDocument(String(row))),
        );
      });
    },

    async find(collection: string, query: StoreQuery): Promise<FindResult> {
      // Compiled first so that a bad query fails the same way whether or not the collection exists.
      const compiled = compileFind(query);
      const emptyResult: FindResult = compiled.withTotal ? { items: [], total: 0 } : { items: [] };
      return read(collection, emptyResult, (table) => findInSnapshot(collection, table, compiled));
    },

    async count(collection: string, query: Pick<StoreQuery, 'filter'> = {}): Promise<number> {
      const where = compileFilter(query.filter);
      return read(collection, 0, (table) => countMatches(collection, table, query.filter, where));
    },

    async getCheckpoint(name: string): Promise<string | null> {
      const value = statement(`SELECT value FROM ${CHECKPOINTS_TABLE} WHERE name = ?`).pluck().get(name);
      return typeof value === 'string' ? value : null;
    },

    async deleteCheckpoint(name: string): Promise<void> {
      statement(`DELETE FROM ${CHECKPOINTS_TABLE} WHERE name = ?`).run(name);
    },

    async dropCollection(collection: string): Promise<void> {
      db.exec(`DROP TABLE IF EXISTS ${tableName(collection)}`);
      statement(`DELETE FROM ${INTERVAL_INDEXES_TABLE} WHERE collection = ?`).run(collection);
      knownCollections.delete(collection);
      forgetStatements();
    },

    async listCollections(): Promise<string[]> {
      const tables = statement(
        `SELECT name FROM sqlite_schema WHERE type = 'table' AND substr(name, 1, ${TABLE_PREFIX.length}) = ? ORDER BY name`,
      )
        .pluck()
        .all(TABLE_PREFIX);
      return tables.map((name) => String(name).slice(TABLE_PREFIX.length));
    },

    async close(): Promise<void> {
      if (!db.open) return;
      clearTimeout(lockRetry);
      closing = true;
      commitPendingApplies();
      db.close();
    },

    async explainFind(collection: string, query: StoreQuery): Promise<QueryPlans> {
      const compiled = compileFind(query);
      const table = tableName(collection);
      const plan = ({ sql, params }: SqlFragment): string[] =>
        db
          .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
          .all(...params)
          .map((row) => row.detail);
      const { filter, where, page } = compiled;
      return {
        items: plan({ sql: itemsSql(table, compiled), params: where.params }),
        count: plan(countStatement(collection, table, filter, where, page.countLimit)),
      };
    },
  };
}
