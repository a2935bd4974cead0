import { versionedCollection } from '../contracts/read-models';
import type { Projection } from './projection';
import { ProjectionRunner, type RunnerDeps } from './runner';
import { activeVersionOf } from './versions';

/** What the rest of the platform needs from whoever runs the projections (in this thread or another). */
export interface Projections {
  start(): Promise<void>;
  stop(): Promise<void>;
  status(): ProjectionStatus[];
  positionOf(name: string): bigint;
  waitFor(position: bigint, timeoutMs: number, names?: readonly string[]): Promise<boolean>;
}

export interface ProjectionStatus {
  readonly name: string;
  readonly version: number;
  readonly position: bigint;
  readonly caughtUp: boolean;
  readonly error?: string;
}

/**
 * Runs the active version of every projection and follows version switches made by a rebuild
 * (`bin/replay`): it starts the new version from its checkpoint, stops the old one, and drops the old
 * collections after a grace period so reads in flight finish.
 */
export class ProjectionHost implements Projections {
  private readonly runners = new Map<string, ProjectionRunner>();
  private watchTimer: NodeJS.Timeout | undefined;
  private switching = Promise.resolve();

  constructor(
    private readonly projections: readonly Projection[],
    private readonly deps: RunnerDeps,
    private readonly options: { watchIntervalMs?: number; dropGraceMs?: number } = {},
  ) {}

  async start(): Promise<void> {
    for (const projection of this.projections) {
      const version = await activeVersionOf(this.deps.readStore, projection.name);
      await this.dropVersionsBelow(projection, version);
      const runner = new ProjectionRunner(projection, version, this.deps);
      await runner.start();
      this.runners.set(projection.name, runner);
    }
    this.watchTimer = setInterval(() => {
      this.switching = this.switching
        .then(() => this.followSwitches())
        .catch((error: unknown) => {
          this.deps.logger.error({ err: error }, 'checking projection versions failed');
        });
    }, this.options.watchIntervalMs ?? 1000);
    this.watchTimer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.watchTimer);
    await this.switching;
    await Promise.all([...this.runners.values()].map((runner) => runner.stop()));
  }

  status(): ProjectionStatus[] {
    return [...this.runners.values()].map((runner) => ({
      name: runner.projection.name,
      version: runner.version,
      position: runner.position,
      caughtUp: runner.isCaughtUp,
      ...(runner.error !== undefined && { error: runner.error }),
    }));
  }

  /** The position the active version of a projection has applied (0n when unknown). */
  positionOf(name: string): bigint {
    return this.runners.get(name)?.position ?? 0n;
  }

  /** Waits until the named projections (all when omitted) have applied every event up to `position`. */
  async waitFor(position: bigint, timeoutMs: number, names?: readonly string[]): Promise<boolean> {
    const runners = [...this.runners.values()].filter(
      (runner) => !names || names.includes(runner.projection.name),
    );
    const results = await Promise.all(runners.map((runner) => runner.waitFor(position, timeoutMs)));
    return results.every(Boolean);
  }

  private async followSwitches(): Promise<void> {
    for (const projection of this.projections) {
      const current = this.runners.get(projection.name);
      const active = await activeVersionOf(this.deps.readStore, projection.name);
      if (!current || current.version === active) continue;
      const next = new ProjectionRunner(projection, active, this.deps);
      await next.start();
      this.runners.set(projection.name, next);
      await current.stop();
      this.deps.logger.info(
        { projection: projection.name, from: current.version, to: active },
        'projection switched to a rebuilt version',
      );
      const grace = setTimeout(() => {
        this.dropVersion(projection, current.version).catch((error: unknown) => {
          this.deps.logger.error(
            { err: error, projection: projection.name },
            'dropping an old projection version failed',
          );
        });
      }, this.options.dropGraceMs ?? 10_000);
      grace.unref();
    }
  }

  private async dropVersionsBelow(projection: Projection, version: number): Promise<void> {
    const existing = new Set(await this.deps.readStore.listCollections());
    for (let old = 1; old < version; old++) {
      if (Object.keys(projection.collections).some((base) => existing.has(versionedCollection(base, old)))) {
        await this.dropVersion(projection, old);
      }
    }
  }

  private async dropVersion(projection: Projection, version: number): Promise<void> {
    for (const base of Object.keys(projection.collections))
      await this.deps.readStore.dropCollection(versionedCollection(base, version));
  }
}
