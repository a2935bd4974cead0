import { checkpointName, versionedCollection } from '../contracts/read-models';
import type { Projection } from './projection';
import { ProjectionRunner, type RunnerDeps } from './runner';
import { activeVersionOf, switchActiveVersion } from './versions';

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

/**
 * Rebuilds a projection from position 0 into a new version's collections while the current version keeps
 * serving, then switches reads to the new version. Readers never see a half-built model.
 */
export async function rebuildProjection(
  projection: Projection,
  deps: RunnerDeps,
  onProgress: (progress: RebuildProgress) => void,
  progressIntervalMs = 200,
): Promise<RebuildResult> {
  const fromVersion = await activeVersionOf(deps.readStore, projection.name);
  const toVersion = fromVersion + 1;
  for (const base of Object.keys(projection.collections))
    await deps.readStore.dropCollection(versionedCollection(base, toVersion));
  await deps.readStore.deleteCheckpoint(checkpointName(projection.name, toVersion));

  const started = Date.now();
  const runner = new ProjectionRunner(projection, toVersion, { ...deps, batchSize: deps.batchSize ?? 5000 });
  await runner.start(false);
  const report = (head: bigint): void =>
    onProgress({ events: runner.applied, position: runner.position, head, elapsedMs: Date.now() - started });
  let head = await deps.events.headPosition();
  const ticker = setInterval(() => report(head), progressIntervalMs);
  try {
    // The head moves while we build; chase it until the runner has caught up with a fresh reading.
    while (
      !(await runner.waitFor(head, 60_000)) ||
      runner.position < (head = await deps.events.headPosition())
    ) {
      if (runner.error) throw new Error(`rebuild of ${projection.name} failed: ${runner.error}`);
    }
    await runner.ensureIndexes();
  } finally {
    clearInterval(ticker);
    await runner.stop();
  }
  report(head);
  await switchActiveVersion(deps.readStore, projection.name, toVersion);
  return { fromVersion, toVersion, events: runner.applied, elapsedMs: Date.now() - started };
}
