/**
 * The raw side of the append benchmarks: the event store's own schema written directly through
 * better-sqlite3, prepared statements and one IMMEDIATE transaction per append, nothing else.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { EventMetadata, NewEvent } from '../contracts/events/envelope';
import { categoryOf, streamName } from '../contracts/streams';
import { openEventStoreDatabase, type SynchronousMode } from '../infra/event-store/sqlite-schema';

export const STREAM_COUNT = 10_000;

export interface Scenario {
  readonly name: string;
  readonly synchronous: SynchronousMode;
  readonly eventsPerAppend: number;
  /** Sized so each side runs for two to three seconds on a 2-core VM: the whole bench stays under a minute. */
  readonly totalEvents: number;
}

export interface Workload {
  readonly streams: readonly string[];
  /** Append i goes to stream `i % streams.length`. */
  readonly batches: readonly (readonly NewEvent[])[];
}

/** ~200-byte JSON payloads; the event objects are built before timing so only the store is measured. */
export function buildWorkload(scenario: Scenario): Workload {
  const streams = Array.from({ length: STREAM_COUNT }, (_, index) => streamName('record', 'acme', index));
  const payloads = Array.from({ length: 256 }, (_, index) => ({
    recordId: index,
    title: `Quarterly report ${index}`,
    status: index % 3 === 0 ? 'draft' : 'published',
    tags: ['finance', 'q3', `team-${index % 7}`],
    owner: { id: `user-${index % 50}`, name: 'Ada Lovelace' },
    summary: 'Totals per region with the variance against the forecast.',
  }));
  const metadata: EventMetadata = {
    tenant: 'acme',
    actor: { userId: 'user-1', credentialId: 'token-1' },
    correlationId: randomUUID(),
    causationId: randomUUID(),
    commandId: randomUUID(),
    occurredAt: new Date().toISOString(),
  };
  const batches: NewEvent[][] = [];
  for (let first = 0; first < scenario.totalEvents; first += scenario.eventsPerAppend) {
    const batch: NewEvent[] = [];
    for (let index = first; index < first + scenario.eventsPerAppend; index++) {
      batch.push({
        id: randomUUID(),
        type: 'RecordUpdated',
        schemaVersion: 1,
        data: payloads[index % 256],
        metadata,
      });
    }
    batches.push(batch);
  }
  return { streams, batches };
}

export interface Contender {
  /** Appends the workload's batches `from` (inclusive) to `to` (exclusive). */
  appendRange(from: number, to: number): Promise<void>;
  close(): Promise<void>;
  elapsedMs: number;
}

/** The same work written directly against better-sqlite3: prepared statements, one IMMEDIATE transaction. */
export function openRaw(path: string, scenario: Scenario, workload: Workload): Contender {
  const db = openEventStoreDatabase(path, scenario.synchronous);
  const currentRevision = db
    .prepare<[string], number>(
      'SELECT revision FROM events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1',
    )
    .pluck();
  const insert = db.prepare<[string, number, string, string, number, string, string, string, string]>(
    `INSERT INTO events (stream_id, revision, event_id, type, schema_version, data, metadata, recorded_at, category)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const append = db.transaction((streamId: string, events: readonly NewEvent[], expected: number): void => {
    if ((currentRevision.get(streamId) ?? -1) !== expected) throw new Error(`conflict on ${streamId}`);
    const recordedAt = new Date().toISOString();
    const category = categoryOf(streamId);
    let revision = expected + 1;
    for (const event of events) {
      insert.run(
        streamId,
        revision++,
        event.id,
        event.type,
        event.schemaVersion,
        JSON.stringify(event.data),
        JSON.stringify(event.metadata),
        recordedAt,
        category,
      );
    }
  });
  const revisions = new Array<number>(workload.streams.length).fill(-1);
  return {
    elapsedMs: 0,
    appendRange: async (from, to) => {
      for (let index = from; index < to; index++) {
        const streamIndex = index % workload.streams.length;
        const events = workload.batches[index]!;
        append.immediate(workload.streams[streamIndex]!, events, revisions[streamIndex]!);
        revisions[streamIndex]! += events.length;
      }
    },
    close: async () => void db.close(),
  };
}

/**
 * Raw single-event appends per second (one event per transaction, `synchronous=NORMAL`, the platform's
 * default) into a fresh file under `directory`: the baseline `POST /record` is measured against.
 */
export async function rawSingleAppendRate(directory: string, totalEvents = 30_000): Promise<number> {
  const scenario: Scenario = { name: 'baseline', synchronous: 'NORMAL', eventsPerAppend: 1, totalEvents };
  const workload = buildWorkload(scenario);
  const raw = openRaw(join(directory, 'raw-append-baseline.db'), scenario, workload);
  try {
    const started = performance.now();
    await raw.appendRange(0, workload.batches.length);
    return (totalEvents * 1000) / (performance.now() - started);
  } finally {
    await raw.close();
  }
}
