/**
 * Append throughput of the SQLite event store against raw better-sqlite3 on the same schema, in the same run:
 * one event per transaction (with the optimistic revision check) and 100 events per transaction, for
 * `synchronous=NORMAL` and `FULL`. Run with `npx tsx bench/event-store-append.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExpectedRevision } from '../infra/event-store/port';
import { createSqliteEventStore } from '../infra/event-store/sqlite';
import {
  buildWorkload,
  openRaw,
  STREAM_COUNT,
  type Contender,
  type Scenario,
  type Workload,
} from './raw-append';
import { machineConditions, printFigure } from './report';

const EVENTS_PER_CHUNK = 1000;
const RATIO_TARGET = 0.8;

const SCENARIOS: readonly Scenario[] = [
  { name: 'normal.1_per_tx', synchronous: 'NORMAL', eventsPerAppend: 1, totalEvents: 30_000 },
  { name: 'normal.100_per_tx', synchronous: 'NORMAL', eventsPerAppend: 100, totalEvents: 60_000 },
  { name: 'full.1_per_tx', synchronous: 'FULL', eventsPerAppend: 1, totalEvents: 8_000 },
  { name: 'full.100_per_tx', synchronous: 'FULL', eventsPerAppend: 100, totalEvents: 60_000 },
];

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
