import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { embeddedSqliteFiles } from '../../bin/embedded-stores';
import { SqliteCheckpointer } from '../../bin/sqlite-checkpointer';
import { loadConfig } from '../../infra/config';
import { createLogger } from '../../infra/logging';
import { openSqliteFile, WAL_AUTOCHECKPOINT_PAGES } from '../../infra/sqlite-file';
import { startPlatform } from '../support/platform';

/** What the platform's checkpointer thread does for the commits of the embedded stores. */

const ROW_BYTES = 4000;
const ROWS = 500;

let directory: string;
const opened: Database.Database[] = [];
const started: SqliteCheckpointer[] = [];

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'sqlite-checkpointer-'));
});

afterEach(async () => {
  await Promise.all(started.splice(0).map((checkpointer) => checkpointer.stop()));
  for (const db of opened.splice(0)) db.close();
  rmSync(directory, { recursive: true, force: true });
});

/** About 2 MB in 50 commits, far below the inline checkpoint's threshold. */
function writeRows(path: string): void {
  const db = openSqliteFile(path);
  opened.push(db);
  db.exec('CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO rows (body) VALUES (?)');
  const commit = db.transaction((count: number) => {
    for (let row = 0; row < count; row++) insert.run('x'.repeat(ROW_BYTES));
  });
  for (let batch = 0; batch < ROWS / 10; batch++) commit(10);
}

const bytesOf = (path: string): number => statSync(path).size;

async function eventually(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function startCheckpointer(
  paths: string[],
  logger = createLogger('silent'),
): Promise<SqliteCheckpointer> {
  const checkpointer = await SqliteCheckpointer.start(paths, logger, 20);
  started.push(checkpointer);
  return checkpointer;
}

test('commits below the threshold leave their pages in the WAL: no commit pays for a checkpoint', () => {
  const path = join(directory, 'a.db');
  writeRows(path);
  expect(ROWS * ROW_BYTES).toBeLessThan(WAL_AUTOCHECKPOINT_PAGES * 4096);
  expect(bytesOf(`${path}-wal`)).toBeGreaterThan(ROWS * ROW_BYTES);
  expect(bytesOf(path)).toBeLessThan(100_000);
});

test('the checkpointer copies the WAL into the database file, on its own thread', async () => {
  const path = join(directory, 'a.db');
  writeRows(path);
  await startCheckpointer([path]);
  await eventually(() => bytesOf(path) > ROWS * ROW_BYTES);
});

test('commits after a complete checkpoint are copied by a later tick', async () => {
  const path = join(directory, 'a.db');
  writeRows(path);
  await startCheckpointer([path]);
  await eventually(() => bytesOf(path) > ROWS * ROW_BYTES);
  // Several ticks with nothing to copy come first.
  await new Promise((resolve) => setTimeout(resolve, 100));
  writeRows(path);
  await eventually(() => bytesOf(path) > 2 * ROWS * ROW_BYTES);
});

test('the WAL file is emptied every so often; a reader in the way only delays it, and holds no writer up', async () => {
  const path = join(directory, 'a.db');
  writeRows(path);
  const reader = openSqliteFile(path);
  opened.push(reader);
  // A read transaction open on the old pages: a TRUNCATE checkpoint cannot empty the file while it lasts.
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM rows').get();
  started.push(await SqliteCheckpointer.start([path], createLogger('silent'), 10, 50));
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(bytesOf(`${path}-wal`)).toBeGreaterThan(0);
  // The writer is not held behind the waiting checkpoint: this commit goes without a busy wait.
  const writer = openSqliteFile(path);
  opened.push(writer);
  writer.pragma('busy_timeout = 0');
  writer.prepare('INSERT INTO rows (body) VALUES (?)').run('after');
  reader.exec('COMMIT');
  await eventually(() => bytesOf(`${path}-wal`) === 0);
});

test('a file made after the start is checkpointed once it exists', async () => {
  const path = join(directory, 'later.db');
  await startCheckpointer([path]);
  writeRows(path);
  await eventually(() => bytesOf(path) > ROWS * ROW_BYTES);
});

test('a file that exists before it is in WAL mode (its maker a moment from switching it) is checkpointed once it is', async () => {
  const path = join(directory, 'not-wal-yet.db');
  writeFileSync(path, '');
  const logger = createLogger('silent');
  const warn = jest.spyOn(logger, 'warn');
  started.push(await SqliteCheckpointer.start([path], logger, 5));
  // Ticks on the empty file before anyone makes it a WAL database.
  await new Promise((resolve) => setTimeout(resolve, 50));
  writeRows(path);
  await eventually(() => bytesOf(path) > ROWS * ROW_BYTES);
  expect(warn).not.toHaveBeenCalled();
});

test('a file it cannot checkpoint is reported once, and the other files are still checkpointed', async () => {
  const broken = join(directory, 'broken.db');
  writeFileSync(broken, 'not a database, but long enough to have a header of one '.repeat(20));
  const good = join(directory, 'good.db');
  writeRows(good);
  const logger = createLogger('silent');
  const warn = jest.spyOn(logger, 'warn');
  await startCheckpointer([broken, good], logger);
  await eventually(() => bytesOf(good) > ROWS * ROW_BYTES);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(warn).toHaveBeenCalledTimes(1);
  expect(warn.mock.calls[0]?.[0]).toMatchObject({
    path: broken,
    err: expect.stringMatching(/not a database/),
  });
});

test('checkpointers on one file (one per process in split mode) take turns without reporting each other as failures', async () => {
  const path = join(directory, 'shared.db');
  const logger = createLogger('silent');
  const warn = jest.spyOn(logger, 'warn');
  for (let n = 0; n < 3; n++) started.push(await SqliteCheckpointer.start([path], logger, 1));
  for (let round = 0; round < 5; round++) {
    writeRows(path);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await eventually(() => bytesOf(path) > 5 * ROWS * ROW_BYTES);
  expect(warn).not.toHaveBeenCalled();
});

test('stop ends the thread, and a second stop is the same stop', async () => {
  const path = join(directory, 'a.db');
  const checkpointer = await SqliteCheckpointer.start([path], createLogger('silent'), 20);
  const stopping = checkpointer.stop();
  expect(checkpointer.stop()).toBe(stopping);
  await stopping;
  writeRows(path);
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(bytesOf(path)).toBeLessThan(100_000);
});

test('the platform checkpoints every SQLite file its embedded adapters write, and none of a server setup', async () => {
  const platform = await startPlatform({ DATA_DIR: directory });
  try {
    const space = await platform.call('POST', '/space', { body: { name: 'Checkpointed' } });
    expect(space.status).toBe(201);
    const written = readdirSync(directory)
      .filter((name) => name.endsWith('.db'))
      .map((name) => join(directory, name));
    expect(embeddedSqliteFiles(platform.running.config).sort()).toEqual(written.sort());
    // Far below the inline threshold, new writes reach the database files all the same.
    const readModels = join(directory, 'read-models.db');
    const before = bytesOf(readModels);
    for (let n = 0; n < 50; n++) {
      const created = await platform.call('POST', '/space', {
        body: { name: `${'Long name '.repeat(9)}${n}` },
      });
      expect(created.status).toBe(201);
    }
    await eventually(() => bytesOf(readModels) > before + 50 * 100);
  } finally {
    await platform.stop();
  }
  const serverEnv = {
    EVENT_STORE: 'eventstoredb',
    ESDB_URL: 'esdb://127.0.0.1:2113?tls=false',
    READ_STORE: 'mongodb',
    MONGO_URL: 'mongodb://127.0.0.1:27017',
    STREAM: 'kafka',
    KAFKA_BROKERS: '127.0.0.1:9092',
    VECTOR_INDEX: 'qdrant',
    QDRANT_URL: 'http://127.0.0.1:6333',
  };
  expect(embeddedSqliteFiles(loadConfig(serverEnv))).toEqual([]);
  // The vector index is embedded unless it is Qdrant's.
  expect(embeddedSqliteFiles(loadConfig({ ...serverEnv, VECTOR_INDEX: 'embedded' }))).toEqual([
    join(resolve('./data'), 'vectors.db'),
  ]);
});
