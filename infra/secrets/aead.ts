import { createDecipheriv } from 'node:crypto';
import sodium from 'sodium-native';
import { pooledRandomBytes } from './random-pool';

/**
 * The authenticated encryption sealed personal values and wrapped data keys are made of, their parts written
 * as base64url: XChaCha20-Poly1305 (libsodium) for what is sealed now, AES-256-GCM for what was sealed before
 * and is only opened. libsodium's call takes about 1.5 µs; Node's AES-GCM spends several setting up its cipher.
 */

export const XCHACHA_NONCE_BYTES = sodium.crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
const TAG_BYTES = 16;
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** The value of each base64url character by its code (-1: not one), looked up for the last of every part. */
const BASE64URL_VALUES = Int8Array.from({ length: 128 }, (_, code) =>
  BASE64URL.indexOf(String.fromCharCode(code)),
);

/**
 * A 32-byte key for one use of `key`, named by `context` (BLAKE2b keyed with `key`). Made for every subject
 * sealed or read: the context is the caller's constant, and the key is cut from Node's buffer pool, since a
 * buffer of its own costs more than the hash.
 */
export function derivedKey(key: Buffer, context: Buffer): Buffer {
  const derived = Buffer.allocUnsafe(sodium.crypto_aead_xchacha20poly1305_ietf_KEYBYTES);
  sodium.crypto_generichash(derived, context, key);
  return derived;
}

/**
 * Checks that a base64url part (its characters checked by the caller's pattern) is written the one way
 * `toString('base64url')` writes it: Node's decoder ignores stray bits, so without this a changed character
 * could still open. Written so, a part has no length of 4n + 1, and its last character carries no bits past
 * the last byte's. Answers how many bytes it holds.
 */
function canonicalLength(part: string): number {
  const spare = part.length % 4;
  const last = BASE64URL_VALUES[part.charCodeAt(part.length - 1)] ?? -1;
  if (spare === 1 || (spare === 2 && (last & 0b1111) !== 0) || (spare === 3 && (last & 0b11) !== 0))
    throw new Error('a part is not canonical base64url');
  return Math.floor((part.length * 3) / 4);
}

/** A canonical base64url part (`canonicalLength`) decoded. */
function canonical(part: string): Buffer {
  canonicalLength(part);
  return Buffer.from(part, 'base64url');
}

/**
 * `message` sealed with XChaCha20-Poly1305 under `key`, as `<nonce>.<ciphertext>.<tag>`: sealed in combined
 * mode (the tag after the ciphertext, one buffer) and written out in ranges, as every record's name and key is.
 */
export function xchachaSeal(message: Buffer, additional: Buffer, key: Buffer): string {
  const nonce = pooledRandomBytes(XCHACHA_NONCE_BYTES);
  const sealed = Buffer.allocUnsafe(message.length + TAG_BYTES);
  sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(sealed, message, additional, null, nonce, key);
  const text = sealed.toString('base64url', 0, message.length);
  return `${nonce.toString('base64url')}.${text}.${sealed.toString('base64url', message.length)}`;
}

/** The parts of a sealed message: its nonce (or IV), ciphertext and tag, base64url. */
export interface SealedParts {
  readonly nonce: string;
  readonly text: string;
  readonly tag: string;
}

/** What `xchachaSeal` sealed; throws when it was altered, or sealed under another key or additional data. */
export function xchachaOpen(parts: SealedParts, additional: Buffer, key: Buffer): Buffer {
  const textLength = sealedLength(parts);
  const message = Buffer.allocUnsafe(textLength);
  openInto(message, sealedBufferOf(textLength), parts, additional, key);
  return message;
}

/** As `xchachaOpen`, the message read as UTF-8 text (a short one opened in a buffer kept for its length). */
export function xchachaOpenText(parts: SealedParts, additional: Buffer, key: Buffer): string {
  const textLength = sealedLength(parts);
  const message =
    textLength > OPENED_IN_PLACE_MAX_BYTES
      ? Buffer.allocUnsafe(textLength)
      : openedInPlaceOf(textLength).message;
  openInto(message, sealedBufferOf(textLength), parts, additional, key);
  return message.toString('utf8');
}

/**
 * Buffers short messages are opened in (`xchachaOpenText`), and decoded into (both), by their length, made
 * once each: a rebuild opens a value and a key of every record it reads, and a buffer's making costs a good
 * part of an opening.
 */
const openedInPlace: ({ readonly message: Buffer; readonly sealed: Buffer } | undefined)[] = [];
const OPENED_IN_PLACE_MAX_BYTES = 256;
const nonceInPlace = Buffer.alloc(XCHACHA_NONCE_BYTES);

function openedInPlaceOf(textLength: number): { readonly message: Buffer; readonly sealed: Buffer } {
  return (openedInPlace[textLength] ??= {
    message: Buffer.alloc(textLength),
    sealed: Buffer.alloc(textLength + TAG_BYTES),
  });
}

/** A buffer for a message's ciphertext and tag, kept for its length when the message is short. */
function sealedBufferOf(textLength: number): Buffer {
  return textLength > OPENED_IN_PLACE_MAX_BYTES
    ? Buffer.allocUnsafe(textLength + TAG_BYTES)
    : openedInPlaceOf(textLength).sealed;
}

/** How many bytes the sealed parts' message holds, its parts checked canonical, its tag and nonce of their size. */
function sealedLength(parts: SealedParts): number {
  const textLength = canonicalLength(parts.text);
  if (canonicalLength(parts.tag) !== TAG_BYTES) throw new Error('a tag is 16 bytes');
  if (canonicalLength(parts.nonce) !== XCHACHA_NONCE_BYTES) throw new Error('a nonce is 24 bytes');
  return textLength;
}

/**
 * Opens the parts into `message`, through `sealed` (the ciphertext and its tag decoded into one buffer, opened
 * in combined mode: a buffer less for each).
 */
function openInto(
  message: Buffer,
  sealed: Buffer,
  parts: SealedParts,
  additional: Buffer,
  key: Buffer,
): void {
  sealed.write(parts.text, 0, 'base64url');
  sealed.write(parts.tag, message.length, 'base64url');
  nonceInPlace.write(parts.nonce, 'base64url');
  try {
    sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(message, null, sealed, additional, nonceInPlace, key);
  } catch {
    throw new Error('it does not open with this key and additional data');
  }
}

/** What AES-256-GCM sealed (a 12-byte IV, a 16-byte tag); throws as `xchachaOpen` does. */
export function aesGcmOpen(parts: SealedParts, additional: Buffer, key: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, canonical(parts.nonce), { authTagLength: TAG_BYTES });
  decipher.setAAD(additional);
  decipher.setAuthTag(canonical(parts.tag));
  return Buffer.concat([decipher.update(canonical(parts.text)), decipher.final()]);
}
