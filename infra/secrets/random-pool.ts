import { randomBytes } from 'node:crypto';

const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let taken = 0;

/**
 * `size` cryptographically random bytes, as `randomBytes(size)`, cut from a pool drawn 4 KiB at a time (as
 * Node's `randomUUID` does): sealing a record's values takes half a dozen IVs and a key, and each
 * `randomBytes` call costs more than the cipher that uses its bytes. The bytes handed out are copied and
 * wiped from the pool, so a key made from them is not left behind in it.
 */
export function pooledRandomBytes(size: number): Buffer {
  assertByteCount(size);
  if (size > POOL_BYTES / 4) return randomBytes(size);
  // Copied into a buffer of its own (a view of the pool, made to copy from, would be one more object per call).
  const bytes = Buffer.allocUnsafe(size);
  takeFromPool(size, (start, end) => pool.copy(bytes, 0, start, end));
  return bytes;
}

/** `size` random bytes written as base64url (an id), cut from the pool as `pooledRandomBytes`, with no buffer of their own. */
export function pooledRandomBase64url(size: number): string {
  assertByteCount(size);
  if (size > POOL_BYTES / 4) return randomBytes(size).toString('base64url');
  let text = '';
  takeFromPool(size, (start, end) => (text = pool.toString('base64url', start, end)));
  return text;
}

/** Hands the pool's next `size` bytes (refilled when short) to `use`, then wipes them. */
function takeFromPool(size: number, use: (start: number, end: number) => void): void {
  if (taken + size > pool.length) {
    pool = randomBytes(POOL_BYTES);
    taken = 0;
  }
  use(taken, taken + size);
  pool.fill(0, taken, taken + size);
  taken += size;
}

function assertByteCount(size: number): void {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`${size} is not a byte count`);
}
