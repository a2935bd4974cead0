/**
 * The former `like` implementation of the SQLite adapter, a backtracking RegExp: the reference of `like`'s
 * semantics (case folding as the `iu` flags, `%` any run including newlines, everything else literal, the
 * whole value). Only for short inputs: it takes exponential time on many `%` over a long value.
 */
export function likeReferenceRegExp(pattern: string): RegExp {
  const parts = pattern.split(/%+/).map((part) => part.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&'));
  return new RegExp(`^${parts.join('[\\s\\S]*')}$`, 'iu');
}

/** A small deterministic pseudo-random generator (mulberry32), so a failure can be replayed. */
export function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 2 ** 32;
  };
}
