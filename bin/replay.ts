import { SingleBar } from 'cli-progress';
import { loadConfig } from '../infra/config';
import { createLogger } from '../infra/logging';
import { rebuildProjection } from '../projections/rebuild';
import { projectionNamed, READ_MODEL_PROJECTIONS } from '../projections/read-models/catalogue';
import { startCheckpointerFor } from './sqlite-checkpointer';
import { ReadModels } from '../infra/read-store/read-models';
import { VECTOR_PROJECTION } from '../projections/vectors/vector-projection';
import { rebuildVectors } from './semantic';
import { openAdapters } from './adapters';
import { waitForCheckpoints } from './read-consistency';
import { startRebuildDecoders } from './threads';

/**
 * `npm run replay -- <projection>`: rebuilds a projection from position 0 into a new version while the
 * running platform keeps serving the current one, then switches reads to it (a running platform follows
 * the switch within a second and drops the old version).
 */
async function main(): Promise<void> {
  const name = process.argv[2] ?? '';
  if (name === VECTOR_PROJECTION) return replayVectors();
  const projection = projectionNamed(name);
  if (!projection) {
    process.stderr.write(
      `usage: npm run replay -- <${[...READ_MODEL_PROJECTIONS.map((p) => p.name), VECTOR_PROJECTION].join('|')}>\n`,
    );
    process.exit(2);
  }
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL);
  const adapters = await openAdapters(config, logger);
  // The rebuild writes a whole read model: checkpoints on their own thread, as in the platform.
  const checkpointer = await startCheckpointerFor(config, logger);
  const bar = new SingleBar({
    format: `${name} |{bar}| {percentage}% | position {value}/{total} | {events} events | {rate} events/s`,
    hideCursor: true,
  });
  let started = false;
  try {
    const result = await rebuildProjection(
      projection,
      { events: adapters.events, readStore: adapters.readStore, logger },
      (progress) => {
        const rate = progress.elapsedMs > 0 ? Math.round((progress.events * 1000) / progress.elapsedMs) : 0;
        const total = Number(progress.head);
        const value = Math.min(Number(progress.position), total);
        if (!started) {
          bar.start(Math.max(total, 1), value, { events: progress.events, rate });
          started = true;
        } else {
          bar.setTotal(Math.max(total, 1));
          bar.update(value, { events: progress.events, rate });
        }
      },
      { startDecoders: (version) => startRebuildDecoders(config, name, version) },
    );
    bar.stop();
    const rate = result.elapsedMs > 0 ? Math.round((result.events * 1000) / result.elapsedMs) : result.events;
    process.stdout.write(
      `rebuilt ${name} v${result.fromVersion} → v${result.toVersion}: ${result.events} events in ${(result.elapsedMs / 1000).toFixed(2)} s (${rate} events/s); reads switched to v${result.toVersion}\n`,
    );
  } finally {
    bar.stop();
    await adapters.close();
    await checkpointer?.stop();
  }
}

/** `npm run replay -- vectors`: every record embedded anew (the read models as they stand). */
async function replayVectors(): Promise<void> {
  const config = loadConfig();
  if (!config.SEMANTIC_SEARCH) {
    process.stderr.write('semantic search is switched off (SEMANTIC_SEARCH=false): no vectors to rebuild\n');
    process.exit(2);
  }
  const logger = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL);
  const adapters = await openAdapters(config, logger);
  const bar = new SingleBar({
    format: `vectors |{bar}| {percentage}% | position {value}/{total} | {seconds} s`,
    hideCursor: true,
  });
  let started = false;
  try {
    const result = await rebuildVectors(
      config,
      logger,
      {
        events: adapters.events,
        readModels: new ReadModels(adapters.readStore),
        waitForReadModels: (position) =>
          waitForCheckpoints(adapters.readStore, position, ['records', 'fields', 'labels'], 60_000),
      },
      (step) => {
        const total = Math.max(Number(step.head), 1);
        const seconds = (step.elapsedMs / 1000).toFixed(1);
        if (!started) {
          bar.start(total, Number(step.position), { seconds });
          started = true;
        } else bar.update(Math.min(Number(step.position), total), { seconds });
      },
    );
    bar.stop();
    const seconds = result.elapsedMs / 1000;
    process.stdout.write(
      `rebuilt vectors: ${result.records} records up to position ${result.head} in ${seconds.toFixed(2)} s (${Math.round(result.records / Math.max(seconds, 0.001))} records/s)\n`,
    );
  } finally {
    bar.stop();
    await adapters.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`replay failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
