import { PROJECTION_VERSIONS_COLLECTION, type ProjectionVersionDoc } from '../contracts/read-models';
import type { ReadStore } from '../infra/read-store/port';

export async function activeVersionOf(readStore: ReadStore, projection: string): Promise<number> {
  const doc = (await readStore.get(
    PROJECTION_VERSIONS_COLLECTION,
    projection,
  )) as ProjectionVersionDoc | null;
  return doc?.activeVersion ?? 1;
}

/** Switches the query side to another version; the version number doubles as the document's position. */
export async function switchActiveVersion(
  readStore: ReadStore,
  projection: string,
  version: number,
): Promise<void> {
  const doc: ProjectionVersionDoc = {
    id: projection,
    activeVersion: version,
    switchedAt: new Date().toISOString(),
  };
  await readStore.apply([
    { op: 'upsert', collection: PROJECTION_VERSIONS_COLLECTION, doc: { ...doc }, position: BigInt(version) },
  ]);
}
