import { PlatformError } from '../../contracts/errors';
import { FairSlots } from '../../infra/fair-slots';

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

/**
 * One model call of a request (a preview, a generation) in a slot of its credential and system. Someone waits
 * on it: a slot not free within `maxWaitMs` is a 503 (the place in the queue is let go when its turn comes).
 */
export async function inSlot<T>(
  slots: AiSlots,
  tenant: string,
  credential: string,
  maxWaitMs: number,
  call: () => Promise<T>,
): Promise<T> {
  const acquiring = slots.acquire(tenant, credential);
  let timer: NodeJS.Timeout | undefined;
  const release = await Promise.race([
    acquiring,
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), maxWaitMs);
    }),
  ]).finally(() => clearTimeout(timer));
  if (release === null) {
    void acquiring.then((late) => late());
    throw new PlatformError(
      'unavailable',
      'every model call this system or credential may make at once is under way; retry shortly',
      { retryAfterMs: 1_000 },
    );
  }
  try {
    return await call();
  } finally {
    release();
  }
}
