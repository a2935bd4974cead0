import { FairSlots } from './fair-slots';

/**
 * Slots for every model call of this process (a job's records, previews, generations): at most `total` at once,
 * at most `perSystem` for one system and `perCredential` for one credential of it, the waiting taking turns.
 * So neither one system nor one token of it can take every slot, and a flood of previews waits its turn.
 */
export class AiSlots {
  private readonly systems: FairSlots;
  private readonly credentials: FairSlots;

  constructor(total: number, perSystem: number, perCredential: number) {
    this.systems = new FairSlots(total, perSystem);
    // The process's total is the systems' to keep: a credential's shares only bound each credential.
    this.credentials = new FairSlots(Number.POSITIVE_INFINITY, perCredential);
  }

  /**
   * Resolves when `credential` of `tenant` may make one more call; the slot is held until the returned release.
   * The credential's share is taken first: a credential at its share holds none of its system's slots waiting.
   */
  async acquire(tenant: string, credential: string): Promise<() => void> {
    const releaseCredential = await this.credentials.acquire(`${tenant} ${credential}`);
    let releaseSystem: () => void;
    try {
      releaseSystem = await this.systems.acquire(tenant);
    } catch (error) {
      releaseCredential();
      throw error;
    }
    return () => {
      releaseSystem();
      releaseCredential();
    };
  }

  /** Calls under way, for metrics and tests. */
  get inUse(): number {
    return this.systems.inUse;
  }
}

/** One model call of a request (a preview, a generation) in a slot of its credential and system. */
export async function inSlot<T>(
  slots: AiSlots,
  tenant: string,
  credential: string,
  call: () => Promise<T>,
): Promise<T> {
  const release = await slots.acquire(tenant, credential);
  try {
    return await call();
  } finally {
    release();
  }
}
