/**
 * Append throughput of the SQLite event store against raw better-sqlite3 on the same schema, in the same run:
 * one event per transaction (with the optimistic revision check) and 100 events per transaction, for
 * `synchronous=NORMAL` and `FULL`. Run with `npx tsx bench/event-store-append.ts`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventMetadata, NewEvent } from '../contracts/events/envelope';
import { categoryOf, streamName } from '../contracts/streams';
import type { ExpectedRevision } from '../infra/event-store/port';
import { createSqliteEventStore } from '../infra/event-store/sqlite';
import { openEventStoreDatabase, type SynchronousMode } from '../infra/event-store/sqlite-schema';
import { machineConditions, printFigure } from './report';

const STREAM_COUNT = 10_000;
const EVENTS_PER_CHUNK = 1000;
const RATIO_TARGET = 0.8;

interface Scenario {
  readonly name: string;
  readonly synchronous: SynchronousMode;
  readonly eventsPerAppend: number;
  /** Sized so each side runs for two to three seconds on a 2-core VM: the whole bench stays under a minute. */
  readonly totalEvents: number;
}

const SCENARIOS: readonly Scenario[] = [
  { name: 'normal.1_per_tx', synchronous: 'NORMAL', eventsPerAppend: 1, totalEvents: 30_000 },
  { name: 'normal.100_per_tx', synchronous: 'NORMAL', eventsPerAppend: 100, totalEvents: 60_000 },
  { name: 'full.1_per_tx', synchronous: 'FULL', eventsPerAppend: 1, totalEvents: 8_000 },
  { name: 'full.100_per_tx', synchronous: 'FULL', eventsPerAppend: 100, totalEvents: 60_000 },
];

interface Workload {
  readonly streams: readonly string[];
  /** Append i goes to stream `i % streams.length`. */
  readonly batches: readonly (readonly NewEvent[])[];
}

/** ~200-byte JSON payloads; the event objects are built before timing so only the store is measured. */
function buildWorkload(scenario: Scenario): Workload {
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

interface Contender {
  /** Appends the workload's batches `from` (inclusive) to `to` (exclusive). */
  appendRange(from: number, to: number): Promise<void>;
  close(): Promise<void>;
  elapsedMs: number;
}

/** The same work written directly against better-sqlite3: prepared statements, one IMMEDIATE transaction. */
function openRaw(path: string, scenario: Scenario, workload: Workload): Contender {
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

function openAdapter(path: string, scenario: Scenario, workload: Workload): Contender {
  const store = createSqliteEventStore({ path, synchronous: scenario.synchronous });
  const revisions = new Array<ExpectedRevision>(workload.streams.length).fill('no_stream');
  return {
    elapsedMs: 0,
    appendRange: async (from, to) => {
      for (let index = from; index < to; index++) {
        const streamIndex = index % workload.streams.length;
        const result = await store.append(workload.streams[streamIndex]!, workload.batches[index]!, {
          expectedRevision: revisions[streamIndex]!,
        });
        revisions[streamIndex] = result.nextExpectedRevision;
      }
    },
    close: () => store.close(),
  };
}

/**
 * Runs raw and adapter side by side on two fresh files, alternating in chunks of about
 * `EVENTS_PER_CHUNK` events (and alternating who goes first), so that the disk and CPU noise of a shared
 * machine hits both alike and the ratio stays meaningful.
 */
async function measure(directory: string, scenario: Scenario): Promise<{ raw: number; adapter: number }> {
  const workload = buildWorkload(scenario);
  const raw = openRaw(join(directory, `raw-${scenario.name}.db`), scenario, workload);
  const adapter = openAdapter(join(directory, `adapter-${scenario.name}.db`), scenario, workload);
  const appendsPerChunk = Math.max(1, Math.round(EVENTS_PER_CHUNK / scenario.eventsPerAppend));
  try {
    for (let from = 0, chunk = 0; from < workload.batches.length; from += appendsPerChunk, chunk++) {
      const to = Math.min(from + appendsPerChunk, workload.batches.length);
      for (const contender of chunk % 2 === 0 ? [raw, adapter] : [adapter, raw]) {
        const started = performance.now();
        await contender.appendRange(from, to);
        contender.elapsedMs += performance.now() - started;
      }
    }
  } finally {
    await raw.close();
    await adapter.close();
  }
  const perSecond = (contender: Contender): number => scenario.totalEvents / (contender.elapsedMs / 1000);
  return { raw: perSecond(raw), adapter: perSecond(adapter) };
}

async function main(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'bench-event-store-'));
  process.stdout.write(
    `# event store append: ${machineConditions()}, ${STREAM_COUNT} streams, ~200-byte payloads\n`,
  );
  try {
    for (const scenario of SCENARIOS) {
      const { raw, adapter } = await measure(directory, scenario);
      const notes = `${scenario.eventsPerAppend} event(s) per transaction, synchronous=${scenario.synchronous}`;
      printFigure(`event_store_append.raw.${scenario.name}`, Math.round(raw), 'events/s', undefined, notes);
      printFigure(
        `event_store_append.adapter.${scenario.name}`,
        Math.round(adapter),
        'events/s',
        undefined,
        notes,
      );
      printFigure(
        `event_store_append.adapter_to_raw.${scenario.name}`,
        adapter / raw,
        'x',
        `>= ${RATIO_TARGET}`,
      );
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

void main();
