/**
 * Attempt logs: times of attempts (failed sign-ins, second-factor codes) per key, shared by every process of a
 * deployment so that a limit on them holds however many processes answer. Each attempt is its own entry, so
 * concurrent adds never overwrite each other. Keys are opaque (callers hash what they count); times are
 * milliseconds since the epoch. An entry counts until its `expiresAt` and is deleted by a later `sweep`.
 */
export interface AttemptLog {
  /**
   * Adds an attempt at `at` to `key`. Its answer's `times` are the key's attempt times not expired at `at`,
   * this one included, oldest first; every add that finished before this one began is among them.
   */
  add(key: string, at: number, expiresAt: number): Promise<AddedAttempt>;
  /** Forgets one attempt that `add` answered (nothing when there is no such attempt of the key). */
  remove(key: string, id: string): Promise<void>;
  /** The key's attempt times not expired at `now`, oldest first. */
  list(key: string, now: number): Promise<number[]>;
  /** Forgets every attempt of the key. */
  clear(key: string): Promise<void>;
  /** Deletes the attempts (of every key) expired at `now`; answers how many. */
  sweep(now: number): Promise<number>;
  close(): Promise<void>;
}

export interface AddedAttempt {
  /** Names the attempt for `remove`. */
  readonly id: string;
  readonly times: number[];
}

/** Keys the adapters accept: what callers make (hashes, short prefixes), never free text from a request. */
export const ATTEMPT_KEY = /^[A-Za-z0-9:._-]{1,200}$/;

/** Throws unless `key` (when given) is a valid key and every time whole milliseconds. */
export function assertAttempt(key: string | null, ...times: number[]): void {
  if (key !== null && !ATTEMPT_KEY.test(key))
    throw new Error(`attempt key ${JSON.stringify(key.slice(0, 40))} is not valid`);
  if (!times.every((time) => Number.isSafeInteger(time)))
    throw new Error('attempt times are whole milliseconds');
}
