import type { ReadStore } from '../read-store/port';

export const SESSION_ACTIVITY_COLLECTION = 'session_activity';

/**
 * When each session was last used, for the sliding idle timeout. Kept in memory and written to the read store
 * at most once per `persistEveryMs` per session, so the processes of a deployment (command and query API)
 * see each other's use of a session, and a restart does not forget it.
 */
export class SessionActivity {
  private readonly seen = new Map<string, { at: number; persistedAt: number }>();

  constructor(
    private readonly store: ReadStore,
    private readonly persistEveryMs = 60_000,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** The last use this process knows of, else the stored one; null when none is known. */
  async lastSeen(key: string): Promise<number | null> {
    const local = this.seen.get(key)?.at;
    const stored = await this.store.get(SESSION_ACTIVITY_COLLECTION, key);
    const storedAt = typeof stored?.at === 'number' ? stored.at : null;
    if (local === undefined) return storedAt;
    return storedAt === null ? local : Math.max(local, storedAt);
  }

  /** The last use this process saw, without a store read (null: none). */
  seenHere(key: string): number | null {
    return this.seen.get(key)?.at ?? null;
  }

  touch(key: string, at: number): void {
    const entry = this.seen.get(key);
    if (entry && at - entry.persistedAt < this.persistEveryMs) {
      entry.at = Math.max(entry.at, at);
      return;
    }
    this.seen.set(key, { at, persistedAt: at });
    this.store
      .apply([
        { op: 'upsert', collection: SESSION_ACTIVITY_COLLECTION, doc: { id: key, at }, position: BigInt(at) },
      ])
      .catch(this.onError);
  }

  forget(key: string): void {
    this.seen.delete(key);
  }
}
