/**
 * The thread of a `SqliteCheckpointer` (`bin/sqlite-checkpointer.ts`): its own connection per file and a
 * PASSIVE checkpoint of each per tick, and every `truncateEveryMs` a TRUNCATE one, which empties the WAL file
 * (the frames a PASSIVE checkpoint leaves in it hold pages as they were, erased values too). The connections
 * never wait for a lock: a TRUNCATE that meets a reader or a writer gives way at once (writers are not held up
 * behind it) and is tried again at the next tick until it empties the file. Plain JavaScript, so the thread runs without the TypeScript loader,
 * which would cost about 17 MB more resident memory for these few lines. Messages: see
 * `ToCheckpointThread` and `FromCheckpointThread` there.
 */
const { existsSync } = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const Database = require('better-sqlite3');

const { paths, intervalMs, truncateEveryMs } = workerData;
let truncateDueAt = Date.now() + truncateEveryMs;
/** The files whose WAL is still to be emptied this round. */
const toTruncate = new Set();
const connections = new Map();
/** The last failure reported per file: a failure that repeats every tick is reported once. */
const reported = new Map();

/**
 * The thread's connection to the file, once the file is in WAL mode. A connection learns the mode from a read
 * only: one opened before its maker switched the file (made a moment ago) would take every checkpoint for a
 * no-op for good, the WAL growing and keeping old pages. So the mode is read first, and a file not in WAL mode
 * yet is opened again at the next tick.
 */
function connectionTo(path) {
  let db = connections.get(path);
  if (!db && existsSync(path)) {
    db = new Database(path, { fileMustExist: true, timeout: 0 });
    try {
      db.prepare('SELECT 1 FROM sqlite_schema LIMIT 1').get();
      if (db.pragma('journal_mode', { simple: true }) !== 'wal') {
        db.close();
        return undefined;
      }
    } catch (error) {
      db.close();
      throw error;
    }
    connections.set(path, db);
  }
  return db;
}

function checkpointAll() {
  if (Date.now() >= truncateDueAt) {
    truncateDueAt = Date.now() + truncateEveryMs;
    for (const path of paths) toTruncate.add(path);
  }
  for (const path of paths) {
    try {
      const db = connectionTo(path);
      if (db && toTruncate.has(path)) {
        const [result] = db.pragma('wal_checkpoint(TRUNCATE)');
        if (result && result.busy === 0) toTruncate.delete(path);
      } else db?.pragma('wal_checkpoint(PASSIVE)');
      reported.delete(path);
    } catch (error) {
      // Another connection's checkpoint or WAL recovery under way: this one gives way, and the next tick tries
      // again. SQLite names the case in an extended code (SQLITE_BUSY_RECOVERY, SQLITE_BUSY_SNAPSHOT, …).
      if (error && /^SQLITE_(BUSY|LOCKED)(_|$)/.test(String(error.code))) continue;
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
