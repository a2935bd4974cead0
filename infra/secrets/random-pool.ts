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
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`${size} is not a byte count`);
  if (size > POOL_BYTES / 4) return randomBytes(size);
  if (taken + size > pool.length) {
    pool = randomBytes(POOL_BYTES);
    taken = 0;
  }
  const bytes = Buffer.from(pool.subarray(taken, taken + size));
  pool.fill(0, taken, taken + size);
  taken += size;
  return bytes;
}
