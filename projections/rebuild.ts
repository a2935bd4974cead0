import { checkpointName, versionedCollection } from '../contracts/read-models';
import type { Projection } from './projection';
import type { EventStore } from '../infra/event-store/port';
import { catchUpInParallel, catchUpUntilStopped, type CatchUpMeanwhile } from './parallel-catch-up';
import { ProjectionRunner, type RunnerDeps } from './runner';
import { activeVersionOf, switchActiveVersion } from './versions';
import { decodeWindow, type WindowDecoder } from './window-decoder';

export interface RebuildProgress {
  readonly events: number;
  readonly position: bigint;
  readonly head: bigint;
  readonly elapsedMs: number;
}

export interface RebuildResult {
  readonly fromVersion: number;
  readonly toVersion: number;
  readonly events: number;
  readonly elapsedMs: number;
}

export interface RebuildOptions {
  /**
   * Starts decoder threads for the target version: the catch-up to the head then decodes on them while this
   * thread writes. Without (or when it starts none), one thread does both.
   */
  readonly startDecoders?: (version: number) => Promise<readonly WindowDecoder[]>;
  readonly progressIntervalMs?: number;
}

function inThisThread(events: EventStore, projection: Projection, version: number): WindowDecoder {
  return {
    decode: (window) => decodeWindow(events, projection, version, window),
    close: () => Promise.resolve(),
  };
}

/**
 * Decoder threads take a few hundred milliseconds to start (each loads the projections and the event
 * schemas): this thread decodes and writes the first windows meanwhile, rather than wait. Threads that are not
 * started at all (none asked, or a store that cannot be split into windows) say so within the turn they were
 * asked in, before the first window (`catchUpUntilStopped` asks `stop` after a turn).
 */
async function catchUpWhileStarting(
  starting: Promise<readonly WindowDecoder[]>,
  meanwhile: Omit<CatchUpMeanwhile, 'stop'>,
): Promise<{ readonly position: bigint; readonly events: number }> {
  let settled = false;
  // Its failure is the caller's to report, when it awaits it.
  starting.then(
    () => (settled = true),
    () => (settled = true),
  );
  return catchUpUntilStopped({ ...meanwhile, stop: () => settled });
}

/**
 * Rebuilds a projection from position 0 into a new version's collections while the current version keeps
 * serving, then switches reads to the new version. Readers never see a half-built model.
 */
export async function rebuildProjection(
  projection: Projection,
  deps: RunnerDeps,
  onProgress: (progress: RebuildProgress) => void,
  options: RebuildOptions = {},
): Promise<RebuildResult> {
  const fromVersion = await activeVersionOf(deps.readStore, projection.name);
  const toVersion = fromVersion + 1;
  for (const base of Object.keys(projection.collections))
    await deps.readStore.dropCollection(versionedCollection(base, toVersion));
  const checkpoint = checkpointName(projection.name, toVersion);
  await deps.readStore.deleteCheckpoint(checkpoint);

  const started = Date.now();
  let head = await deps.events.headPosition();
  let progress = { events: 0, position: 0n };
  const report = (): void => onProgress({ ...progress, head, elapsedMs: Date.now() - started });
  const ticker = setInterval(report, options.progressIntervalMs ?? 200);
  try {
    const starting = options.startDecoders?.(toVersion);
    if (starting) {
      let ahead = { position: 0n, events: 0 };
      let stopped: unknown;
      try {
        ahead = await catchUpWhileStarting(starting, {
          readStore: deps.readStore,
          checkpoint,
          decoder: inThisThread(deps.events, projection, toVersion),
          from: 0n,
          head,
          onApplied: (position, events) => (progress = { events, position }),
        });
      } catch (error) {
        stopped = error;
      }
      const decoders = await starting;
      try {
        if (stopped === undefined && decoders.length > 0)
          await catchUpInParallel({
            readStore: deps.readStore,
            checkpoint,
            decoders,
            from: ahead.position,
            head,
            onApplied: (position, events) => (progress = { events: ahead.events + events, position }),
          });
      } catch (error) {
        stopped = error;
      } finally {
        await Promise.all(decoders.map((decoder) => decoder.close()));
      }
      if (stopped !== undefined)
        // A window holding an event that cannot be applied (or a passing failure): the runner below goes on
        // from the last written window, event by event where it must, recording dead letters.
        deps.logger.warn(
          { err: stopped, projection: projection.name, version: toVersion },
          'parallel catch-up of a rebuild stopped; going on from its checkpoint on one thread',
        );
    }
    // The head moved while we built: a runner chases it from the checkpoint until it has caught up with a
    // fresh reading.
    const decodedInParallel = progress.events;
    const runner = new ProjectionRunner(projection, toVersion, {
      ...deps,
      batchSize: deps.batchSize ?? 5000,
      onProgress: (chasing) =>
        (progress = { events: decodedInParallel + chasing.applied, position: chasing.position }),
    });
    await runner.start(false);
    try {
      while (
        !(await runner.waitFor(head, 60_000)) ||
        runner.position < (head = await deps.events.headPosition())
      ) {
        if (runner.error) throw new Error(`rebuild of ${projection.name} failed: ${runner.error}`);
      }
      await runner.ensureIndexes();
    } finally {
      await runner.stop();
    }
  } finally {
    clearInterval(ticker);
  }
  report();
  await switchActiveVersion(deps.readStore, projection.name, toVersion);
  return { fromVersion, toVersion, events: progress.events, elapsedMs: Date.now() - started };
}
