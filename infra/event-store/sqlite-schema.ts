import type Database from 'better-sqlite3';
import { openSqliteFile } from '../sqlite-file';

/**
 * One table. The current revision of a stream is read from the `(stream_id, revision)` unique index, so no
 * separate streams table has to be written on every append. `position` is the rowid: dense and increasing,
 * because SQLite serialises writers and we never delete.
 */
export const EVENT_STORE_SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position INTEGER PRIMARY KEY,
  stream_id TEXT NOT NULL,
  revision INTEGER NOT NULL,
  event_id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  schema_version INTEGER NOT NULL,
  data TEXT NOT NULL,
  metadata TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  category TEXT NOT NULL,
  UNIQUE (stream_id, revision)
);
CREATE INDEX IF NOT EXISTS events_by_category ON events (category, position);
`;

export type SynchronousMode = 'NORMAL' | 'FULL';

export function openEventStoreDatabase(path: string, synchronous: SynchronousMode): Database.Database {
  const db = openSqliteFile(path, synchronous);
  try {
    db.exec(EVENT_STORE_SCHEMA);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/**
 * An event as the reading statements return it: raw rows (arrays), which better-sqlite3 builds about twice as
 * fast as row objects; reads are the hot path of every projection and rebuild.
 */
export type EventRow = readonly [
  position: number,
  streamId: string,
  revision: number,
  eventId: string,
  type: string,
  schemaVersion: number,
  data: string,
  metadata: string,
  recordedAt: string,
];
export const ROW_POSITION = 0;
export const ROW_STREAM_ID = 1;
export const ROW_REVISION = 2;

export interface StoredEventId {
  readonly stream_id: string;
  readonly revision: number;
  readonly position: number;
}

const EVENT_COLUMNS =
  'position, stream_id, revision, event_id, type, schema_version, data, metadata, recorded_at';
/** `?` bound to a JSON array of category names. */
const IN_CATEGORIES = 'category IN (SELECT value FROM json_each(?))';

/**
 * Rows per read. A literal in the SQL, not a bound `LIMIT ?`: SQLite's planner looks at a bound LIMIT, so
 * binding it expires the statement and every call re-prepares it (measured: 25 µs instead of 5 per read).
 */
export const PAGE_SIZE = 500;

export function prepareEventStoreStatements(db: Database.Database) {
  return {
    currentRevision: db
      .prepare<[string], number>(
        'SELECT revision FROM events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1',
      )
      .pluck(),
    insert: db.prepare<[string, number, string, string, number, string, string, string, string]>(
      `INSERT INTO events (stream_id, revision, event_id, type, schema_version, data, metadata, recorded_at, category)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    findEventId: db.prepare<[string], StoredEventId>(
      'SELECT stream_id, revision, position FROM events WHERE event_id = ?',
    ),
    headPosition: db.prepare<[], number | null>('SELECT MAX(position) FROM events').pluck(),
    /** One category's last position: a seek at the end of its range of the (category, position) index. */
    categoryHead: db
      .prepare<[string], number | null>('SELECT MAX(position) FROM events WHERE category = ?')
      .pluck(),
    /** Changes when another connection (another thread, another process) commits to the file. */
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    streamForwards: db
      .prepare<[string, number], EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision LIMIT ${PAGE_SIZE}`,
      )
      .raw(),
    /** The first event of a stream from a revision on: `LIMIT 1` for the many one-event reads. */
    streamForwardsOne: db
      .prepare<[string, number], EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision LIMIT 1`,
      )
      .raw(),
    streamBackwardsOne: db
      .prepare<[string, number], EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = ? AND revision <= ? ORDER BY revision DESC LIMIT 1`,
      )
      .raw(),
    streamBackwards: db
      .prepare<[string, number], EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = ? AND revision <= ? ORDER BY revision DESC LIMIT ${PAGE_SIZE}`,
      )
      .raw(),
    allForwards: db
      .prepare<[number], EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ${PAGE_SIZE}`,
      )
      .raw(),
    allBackwards: db
      .prepare<[number], EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE position < ? ORDER BY position DESC LIMIT ${PAGE_SIZE}`,
      )
      .raw(),
    /** One event of the log: a search by time reads a few dozen single events (position-at-time.ts). */
    allForwardsOne: db
      .prepare<[number], EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT 1`,
      )
      .raw(),
    allBackwardsOne: db
      .prepare<[number], EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE position < ? ORDER BY position DESC LIMIT 1`,
      )
      .raw(),
    /**
     * Events of one category in the position window (after, upTo]: the `(category, position)` index yields
     * them in order, sparse or dense. Several categories (below) need a sort of the window.
     */
    categoryForwards: db
      .prepare<[number, number, string], EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE position > ? AND position <= ? AND category = ?
       ORDER BY position LIMIT ${PAGE_SIZE}`,
      )
      .raw(),
    categoryBackwards: db
      .prepare<[number, number, string], EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE position < ? AND position >= ? AND category = ?
       ORDER BY position DESC LIMIT ${PAGE_SIZE}`,
      )
      .raw(),
    /**
     * Events of the categories in the position window (after, upTo]. The page's positions are chosen and
     * sorted on the covering `(category, position)` index first, then only those rows read: sorting whole rows
     * read each page's window again, every event's data with it (twice the cost of a dense read).
     */
    categoriesForwards: db
      .prepare<[number, number, string], EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE position IN (SELECT position FROM events
       WHERE position > ? AND position <= ? AND ${IN_CATEGORIES} ORDER BY position LIMIT ${PAGE_SIZE})
       ORDER BY position`,
      )
      .raw(),
    /** Events of the categories in the position window [downTo, before), as above. */
    categoriesBackwards: db
      .prepare<[number, number, string], EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE position IN (SELECT position FROM events
       WHERE position < ? AND position >= ? AND ${IN_CATEGORIES} ORDER BY position DESC LIMIT ${PAGE_SIZE})
       ORDER BY position DESC`,
      )
      .raw(),
  };
}

export type EventStoreStatements = ReturnType<typeof prepareEventStoreStatements>;
