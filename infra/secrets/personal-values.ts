import { createDecipheriv } from 'node:crypto';
import sodium from 'sodium-native';
import { DATA_KEY_BYTES, DATA_KEY_ID, type DataKey } from '../keys/port';
import { pooledRandomBytes } from './random-pool';

/**
 * Personal values as events carry them: the value's JSON sealed under its subject's data key, as
 * `<version>.<keyId>.<nonce>.<ciphertext>.<tag>` (base64url parts). The key id says which key opens it; the
 * subject, the version and the key id are authenticated with it, so a sealed value copied into another
 * subject's event, or given another key id, does not open.
 *
 * - `pv2` (what is sealed now): XChaCha20-Poly1305 (libsodium), a 24-byte random nonce, under a key derived
 *   from the data key for it. Node's AES-GCM costs about 10 µs a value in setting up its cipher, more than the
 *   rest of sealing a record; libsodium's call about 1.5 µs.
 * - `pv1` (values sealed before): AES-256-GCM under the data key itself, a 12-byte IV. Opened, never made.
 */
const SEALED = {
  pv1: /^pv1\.([A-Za-z0-9_-]{12})\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{22})$/,
  pv2: /^pv2\.([A-Za-z0-9_-]{12})\.([A-Za-z0-9_-]{32})\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{22})$/,
} as const;
type Version = keyof typeof SEALED;
const TAG_BYTES = 16;
const NONCE_BYTES = sodium.crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;

/** The pv2 key of each data key (its bytes are kept as long as the data key is). */
const pv2Keys = new WeakMap<Buffer, Buffer>();
const PV2_KEY_CONTEXT = Buffer.from('records-platform personal values pv2', 'utf8');

function pv2KeyOf(key: DataKey): Buffer {
  let derived = pv2Keys.get(key.key);
  if (derived === undefined) {
    derived = Buffer.alloc(sodium.crypto_aead_xchacha20poly1305_ietf_KEYBYTES);
    sodium.crypto_generichash(derived, PV2_KEY_CONTEXT, key.key);
    pv2Keys.set(key.key, derived);
  }
  return derived;
}

function authenticated(version: Version, keyId: string, subject: string): Buffer {
  return Buffer.from(`${version}.${keyId}.${subject}`, 'utf8');
}

function assertKey(key: DataKey): void {
  if (!DATA_KEY_ID.test(key.id) || key.key.length !== DATA_KEY_BYTES) throw new Error('not a data key');
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * Decodes a base64url part (its characters checked by the caller's pattern) that must be written the one way
 * `toString('base64url')` writes it: Node's decoder ignores stray bits, so without this a changed character
 * could still open. Written so, a part has no length of 4n + 1, and its last character carries no bits past
 * the last byte's.
 */
export function canonical(part: string): Buffer {
  const spare = part.length % 4;
  const last = BASE64URL.indexOf(part.charAt(part.length - 1));
  if (spare === 1 || (spare === 2 && (last & 0b1111) !== 0) || (spare === 3 && (last & 0b11) !== 0))
    throw new Error('not a sealed value');
  return Buffer.from(part, 'base64url');
}

/** Seals a JSON value (what `JSON.stringify` writes; anything it cannot is refused) for `subject`. */
export function sealValue(value: unknown, key: DataKey, subject: string): string {
  assertKey(key);
  const json: unknown = JSON.stringify(value);
  if (typeof json !== 'string') throw new Error('only JSON values are sealed');
  const message = Buffer.from(json, 'utf8');
  const nonce = pooledRandomBytes(NONCE_BYTES);
  const text = Buffer.allocUnsafe(message.length);
  const tag = Buffer.allocUnsafe(TAG_BYTES);
  sodium.crypto_aead_xchacha20poly1305_ietf_encrypt_detached(
    text,
    tag,
    message,
    authenticated('pv2', key.id, subject),
    null,
    nonce,
    pv2KeyOf(key),
  );
  return `pv2.${key.id}.${nonce.toString('base64url')}.${text.toString('base64url')}.${tag.toString('base64url')}`;
}

/** The parts of a sealed value, or null when `text` is not one. */
function partsOf(text: string): { version: Version; parts: RegExpExecArray } | null {
  const version = text.slice(0, 3);
  if (version !== 'pv1' && version !== 'pv2') return null;
  const parts = SEALED[version].exec(text);
  return parts === null ? null : { version, parts };
}

/** The value sealed; throws for another key or subject, a text altered in any way, or one not sealed at all. */
export function openValue(sealed: string, key: DataKey, subject: string): unknown {
  assertKey(key);
  const found = partsOf(sealed);
  if (found === null) throw new Error('not a sealed value');
  const [, keyId, nonce, text, tag] = found.parts as unknown as [string, string, string, string, string];
  if (keyId !== key.id) throw new Error(`the value is sealed under key ${keyId}, not ${key.id}`);
  const additional = authenticated(found.version, keyId, subject);
  if (found.version === 'pv1') {
    const decipher = createDecipheriv('aes-256-gcm', key.key, canonical(nonce), { authTagLength: TAG_BYTES });
    decipher.setAAD(additional);
    decipher.setAuthTag(canonical(tag));
    return JSON.parse(Buffer.concat([decipher.update(canonical(text)), decipher.final()]).toString('utf8'));
  }
  const ciphertext = canonical(text);
  const message = Buffer.allocUnsafe(ciphertext.length);
  try {
    sodium.crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
      message,
      null,
      ciphertext,
      canonical(tag),
      additional,
      canonical(nonce),
      pv2KeyOf(key),
    );
  } catch {
    throw new Error('the sealed value does not open with this key for this subject');
  }
  return JSON.parse(message.toString('utf8')) as unknown;
}

/** Whether `text` has the shape of a sealed value (not whether it opens). */
export function isSealedValue(text: unknown): text is string {
  return typeof text === 'string' && partsOf(text) !== null;
}

/** The id of the key a sealed value needs. */
export function keyIdOf(sealed: string): string {
  const keyId = partsOf(sealed)?.parts[1];
  if (keyId === undefined) throw new Error('not a sealed value');
  return keyId;
}
