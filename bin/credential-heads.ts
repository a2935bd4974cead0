import { categoryOf } from '../contracts/streams';
import type { AfterCommitHook, EventStore } from '../infra/event-store/port';
import type { ReadStore } from '../infra/read-store/port';

/**
 * Where the last event each credential projection reads is, as every process of a deployment sees it
 * (DESIGN §6: an answer about a credential sees every credential write acknowledged before it was asked).
 *
 * An event store that finds the last event of some categories by an index seek (SQLite) is asked directly.
 * Elsewhere (EventStoreDB, where it would take a scan of $all) each process records the position of every
 * credential event it appends in a shared read-store document, before the write is acknowledged; the
 * store's position guard keeps the highest.
 */
export interface CredentialHeads {
  headOf(projection: string): Promise<bigint>;
  /** Called once an append to `streamId` at `position` is stored, before it is acknowledged. */
  appended(streamId: string, position: bigint): Promise<void>;
}

export const CREDENTIAL_HEADS_COLLECTION = 'credential_heads';

/** The event store's after-commit hook that tells `heads` of each append, before it is acknowledged. */
export function recordCredentialHeads(heads: Pick<CredentialHeads, 'appended'>): AfterCommitHook {
  return async (commits) => {
    for (const { streamId, position } of commits) await heads.appended(streamId, position);
  };
}

export function credentialHeads(
  events: EventStore,
  readStore: ReadStore,
  projections: readonly { readonly name: string; readonly categories: readonly string[] }[],
): CredentialHeads {
  const categoriesOf = new Map(projections.map(({ name, categories }) => [name, categories]));
  const categoryHead = events.categoryHead?.bind(events);
  if (categoryHead)
    return {
      headOf: (projection) => categoryHead(categoriesOf.get(projection) ?? []),
      appended: async () => undefined,
    };
  const readerOf = new Map<string, string[]>();
  for (const { name, categories } of projections)
    for (const category of categories) readerOf.set(category, [...(readerOf.get(category) ?? []), name]);
  return {
    async headOf(projection) {
      const doc = await readStore.get(CREDENTIAL_HEADS_COLLECTION, projection);
      return typeof doc?.position === 'string' ? BigInt(doc.position) : 0n;
    },
    async appended(streamId, position) {
      const readers = readerOf.get(categoryOf(streamId));
      if (!readers) return;
      await readStore.apply(
        readers.map((name) => ({
          op: 'upsert' as const,
          collection: CREDENTIAL_HEADS_COLLECTION,
          doc: { id: name, position: position.toString() },
          position,
        })),
      );
    },
  };
}
