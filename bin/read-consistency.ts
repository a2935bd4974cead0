import { checkpointName } from '../contracts/read-models';
import type { ReadStore } from '../infra/read-store/port';
import type { Projections } from '../projections/host';
import { activeVersionOf } from '../projections/versions';
import { awaitCredentialHeads, CREDENTIAL_PROJECTIONS, type ReadConsistency } from '../query-api/consistency';
import { VECTOR_PROJECTION } from '../projections/vectors/vector-projection';
import type { Kernel } from './kernel';

/** What a service of this process reads its consistency from. */
export interface ReadSide {
  readonly consistency: ReadConsistency;
  /** Resolves once every credential write of any process acknowledged so far is visible. */
  awaitCredentialWrites(): Promise<void>;
}

/**
 * Read-your-writes for the services of this process: against the projections where they run here (then a
 * write is visible to the next read without a header), their stored checkpoints elsewhere; the vector index
 * answers for itself where semantic search runs.
 */
export function readSide(
  kernel: Kernel,
  projections: Projections | undefined,
  vectors: { waitFor(position: bigint, timeoutMs: number): Promise<boolean> } | undefined,
): ReadSide {
  const readModelsAt: ReadConsistency['waitFor'] = projections
    ? (position, names, timeoutMs) =>
        // Answered at once (no trip through the projections host) when they are there already.
        names.every((name) => projections.positionOf(name) >= position)
          ? Promise.resolve(true)
          : projections.waitFor(position, timeoutMs, names)
    : (position, names, timeoutMs) =>
        waitForCheckpoints(kernel.adapters.readStore, position, names, timeoutMs);
  const consistency: ReadConsistency = {
    timeoutMs: kernel.config.MIN_POSITION_TIMEOUT_MS,
    defaultMinPosition: projections ? () => kernel.lastPosition() : () => 0n,
    headOf: (projection) => kernel.credentialHeads.headOf(projection),
    // The vector index is no read model of the host: its projection answers for it.
    waitFor: async (position, names, timeoutMs) => {
      const others = names.filter((name) => name !== VECTOR_PROJECTION);
      const [readModelsThere, vectorsThere] = await Promise.all([
        others.length === 0 ? true : readModelsAt(position, others, timeoutMs),
        names.includes(VECTOR_PROJECTION) && vectors ? vectors.waitFor(position, timeoutMs) : true,
      ]);
      return readModelsThere && vectorsThere;
    },
  };
  return {
    consistency,
    awaitCredentialWrites: () => awaitCredentialHeads(consistency, CREDENTIAL_PROJECTIONS),
  };
}

/** The position a projection's stored checkpoint (of its active version) has reached. */
export async function checkpointOf(readStore: ReadStore, projection: string): Promise<bigint> {
  const value = await readStore.getCheckpoint(
    checkpointName(projection, await activeVersionOf(readStore, projection)),
  );
  return value === null ? 0n : BigInt(value);
}

/** Whether the named read models' stored checkpoints reach `position` within `timeoutMs` (polled). */
export async function waitForCheckpoints(
  readStore: ReadStore,
  position: bigint,
  names: readonly string[],
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let reached = true;
    for (const name of names) if ((await checkpointOf(readStore, name)) < position) reached = false;
    if (reached) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
