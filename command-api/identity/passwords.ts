import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

interface ScryptParameters {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

const CURRENT: ScryptParameters = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, { N, r, p }: ScryptParameters): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_LENGTH, { N, r, p, maxmem: 256 * N * r }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** scrypt (memory-hard), encoded with its parameters so they can be raised later: `scrypt$N$r$p$salt$key`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, CURRENT);
  return `scrypt$${CURRENT.N}$${CURRENT.r}$${CURRENT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Whether `password` matches `encoded`; a malformed or missing hash matches nothing. Constant-time compare. */
export async function verifyPassword(password: string, encoded: string | null): Promise<boolean> {
  const parts = encoded?.split('$');
  if (!parts || parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every((value) => Number.isSafeInteger(value) && value > 0)) return false;
  const expected = Buffer.from(parts[5]!, 'base64url');
  const key = await derive(password, Buffer.from(parts[4]!, 'base64url'), { N, r, p });
  return key.length === expected.length && timingSafeEqual(key, expected);
}
