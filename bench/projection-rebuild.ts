import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { streamName } from '../contracts/streams';
import { createSqliteEventStore } from '../infra/event-store/sqlite';
import { PersonalDataEventStore } from '../infra/event-store/personal-data';
import { openDataKeys } from '../bin/data-keys';
import type { EventStore } from '../infra/event-store/port';
import { loadConfig } from '../infra/config';
import { createLogger } from '../infra/logging';
import { createSqliteReadStore } from '../infra/read-store/sqlite';
import { recordsProjection } from '../projections/read-models/records';
import { rebuildProjection } from '../projections/rebuild';
import { startRebuildDecoders } from '../bin/threads';
import { startCheckpointerFor } from '../bin/sqlite-checkpointer';
import { embeddedFile } from '../bin/embedded-stores';
import { benchRecordEvents } from './events';
import { machineConditions, printFigure } from './report';

/**
 * Projection rebuild: the records projection from position 0 out of the SQLite event store into the
 * SQLite read store (target ≥ 100,000 events/s, and ≥ 0.25 of a raw catch-up read of the same log in the
 * same run). Each record stream holds a create and an update.
 */
const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
/** `BENCH_SEALED=1`: each record's name sealed, as the platform seals it (bench/personal-data.ts compares). */
const SEALED = process.env.BENCH_SEALED === '1';

/** The baseline: every event of the log from position 0, decoded, as a catch-up reads them, and nothing else. */
async function rawCatchUpRate(events: EventStore): Promise<{ events: number; rate: number }> {
  const started = performance.now();
  let read = 0;
  for await (const _event of events.readAll({ after: 0n })) read++;
  return { events: read, rate: (read * 1000) / (performance.now() - started) };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-rebuild-'));
  try {
    const config = loadConfig({ ...process.env, DATA_DIR: dir });
    // The files `npm run replay` opens under DATA_DIR, so its decoder threads and checkpointer find them.
    const stored = createSqliteEventStore({ path: embeddedFile(config, 'events') });
    // Sealed, appended and read through the decorator as the platform does (its data keys under DATA_DIR).
    const events = SEALED ? new PersonalDataEventStore(stored, await openDataKeys(config)) : stored;
    const readStore = createSqliteReadStore({ path: embeddedFile(config, 'readModels') });
    const started = Date.now();
    for (let id = 1; id <= RECORDS; id++)
      await events.append(streamName('record', 'bench', id), benchRecordEvents(id, SEALED), {
        expectedRevision: 'no_stream',
      });
    process.stderr.write(`seeded ${RECORDS * 2} events in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    const raw = await rawCatchUpRate(events);
    printFigure(
      'raw_catch_up_read_sqlite',
      Math.round(raw.rate),
      'events/s',
      undefined,
      `${raw.events} events through readAll, no projection`,
    );
    // As `npm run replay` does.
    const checkpointer = await startCheckpointerFor(config, createLogger('warn'));
    // CPU time of every thread of the process: what the rebuild costs, which other load on a shared machine
    // changes less than its wall-clock rate.
    const cpuBefore = process.cpuUsage();
    const result = await rebuildProjection(
      recordsProjection,
      { events, readStore, logger: createLogger('warn') },
      () => undefined,
      { startDecoders: (version) => startRebuildDecoders(config, recordsProjection.name, version) },
    );
    const cpu = process.cpuUsage(cpuBefore);
    const rate = (result.events * 1000) / result.elapsedMs;
    printFigure(
      'projection_rebuild_sqlite',
      Math.round(rate),
      'events/s',
      '>= 100000',
      `${result.events} events${SEALED ? ', names sealed' : ''}, records projection, ${config.REBUILD_THREADS} decoder threads, ${machineConditions()}`,
    );
    printFigure('projection_rebuild_to_raw_read', rate / raw.rate, '×', '>= 0.25');
    printFigure(
      'projection_rebuild_cpu',
      (cpu.user + cpu.system) / result.events,
      'µs/event',
      undefined,
      'user + system time of all threads',
    );
    await checkpointer?.stop();
    await readStore.close();
    await events.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
