import { createCipheriv, createDecipheriv } from 'node:crypto';
import { DATA_KEY_BYTES, DATA_KEY_ID, type DataKey } from '../keys/port';
import { pooledRandomBytes } from './random-pool';

/**
 * Personal values as events carry them: the value's JSON sealed with AES-256-GCM under its subject's data
 * key, as `pv1.<keyId>.<iv>.<ciphertext>.<tag>` (base64url parts). The key id says which key opens it; the
 * subject, the version and the key id are authenticated with it, so a sealed value copied into another
 * subject's event, or given another key id, does not open.
 */
const VERSION = 'pv1';
const SEALED = /^pv1\.([A-Za-z0-9_-]{12})\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{22})$/;
const TAG_BYTES = 16;

function authenticated(keyId: string, subject: string): Buffer {
  return Buffer.from(`${VERSION}.${keyId}.${subject}`, 'utf8');
}

function assertKey(key: DataKey): void {
  if (!DATA_KEY_ID.test(key.id) || key.key.length !== DATA_KEY_BYTES) throw new Error('not a data key');
}

/**
 * Decodes a base64url part that must be written the one way `toString('base64url')` writes it: Node's decoder
 * ignores stray bits and characters, so without this a changed character could still open.
 */
function canonical(part: string): Buffer {
  const bytes = Buffer.from(part, 'base64url');
  if (bytes.toString('base64url') !== part) throw new Error('not a sealed value');
  return bytes;
}

/** Seals a JSON value (what `JSON.stringify` writes; anything it cannot is refused) for `subject`. */
export function sealValue(value: unknown, key: DataKey, subject: string): string {
  assertKey(key);
  const json: unknown = JSON.stringify(value);
  if (typeof json !== 'string') throw new Error('only JSON values are sealed');
  const iv = pooledRandomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  cipher.setAAD(authenticated(key.id, subject));
  const text = Buffer.concat([cipher.update(json, 'utf8'), cipher.final()]);
  return [VERSION, key.id, ...[iv, text, cipher.getAuthTag()].map((part) => part.toString('base64url'))].join(
    '.',
  );
}

/** The value sealed; throws for another key or subject, a text altered in any way, or one not sealed at all. */
export function openValue(sealed: string, key: DataKey, subject: string): unknown {
  assertKey(key);
  const [, keyId, iv, text, tag] = SEALED.exec(sealed) ?? [];
  if (keyId === undefined || iv === undefined || text === undefined || tag === undefined)
    throw new Error('not a sealed value');
  if (keyId !== key.id) throw new Error(`the value is sealed under key ${keyId}, not ${key.id}`);
  const decipher = createDecipheriv('aes-256-gcm', key.key, canonical(iv), { authTagLength: TAG_BYTES });
  decipher.setAAD(authenticated(keyId, subject));
  decipher.setAuthTag(canonical(tag));
  const json = Buffer.concat([decipher.update(canonical(text)), decipher.final()]).toString('utf8');
  return JSON.parse(json) as unknown;
}

/** Whether `text` has the shape of a sealed value (not whether it opens). */
export function isSealedValue(text: unknown): text is string {
  return typeof text === 'string' && SEALED.test(text);
}

/** The id of the key a sealed value needs. */
export function keyIdOf(sealed: string): string {
  const keyId = SEALED.exec(sealed)?.[1];
  if (keyId === undefined) throw new Error('not a sealed value');
  return keyId;
}
