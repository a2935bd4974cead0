/**
 * The thread of a `SqliteCheckpointer` (`bin/sqlite-checkpointer.ts`): its own connection per file and a
 * PASSIVE checkpoint of each per tick, and every `truncateEveryMs` a TRUNCATE one, which empties the WAL file
 * (the frames a PASSIVE checkpoint leaves in it hold pages as they were, erased values too). Plain JavaScript, so the thread runs without the TypeScript loader,
 * which would cost about 17 MB more resident memory for these few lines. Messages: see
 * `ToCheckpointThread` and `FromCheckpointThread` there.
 */
const { existsSync } = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const Database = require('better-sqlite3');

const { paths, intervalMs, truncateEveryMs } = workerData;
let truncatedAt = Date.now();
const connections = new Map();
/** The last failure reported per file: a failure that repeats every tick is reported once. */
const reported = new Map();

function connectionTo(path) {
  let db = connections.get(path);
  if (!db && existsSync(path)) {
    db = new Database(path, { fileMustExist: true });
    connections.set(path, db);
  }
  return db;
}

function checkpointAll() {
  const truncate = Date.now() - truncatedAt >= truncateEveryMs;
  if (truncate) truncatedAt = Date.now();
  for (const path of paths) {
    try {
      connectionTo(path)?.pragma(truncate ? 'wal_checkpoint(TRUNCATE)' : 'wal_checkpoint(PASSIVE)');
      reported.delete(path);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (reported.get(path) !== message) parentPort.postMessage({ kind: 'failed', path, message });
      reported.set(path, message);
    }
  }
}

const timer = setInterval(checkpointAll, intervalMs);
parentPort.on('message', (message) => {
  if (message.kind !== 'stop') return;
  clearInterval(timer);
  for (const db of connections.values()) db.close();
  connections.clear();
  parentPort.postMessage({ kind: 'stopped' });
});
parentPort.postMessage({ kind: 'ready' });
