import { createDecipheriv } from 'node:crypto';
import sodium from 'sodium-native';
import { canonical } from '../secrets/personal-values';
import { pooledRandomBytes } from '../secrets/random-pool';
import { DATA_KEY_BYTES, type KeyWrapper } from './port';

/**
 * The shapes `unwrap` accepts, and nothing looser (base64url parts): `wk2.<nonce>.<wrapped key>.<tag>`, what
 * is wrapped now, with libsodium's XChaCha20-Poly1305 under a key derived from the key-encryption key;
 * `wk1.<iv>.<wrapped key>.<tag>`, keys wrapped before, with AES-256-GCM under the key-encryption key itself.
 */
const WRAPPED = {
  wk1: /^wk1\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{22})$/,
  wk2: /^wk2\.([A-Za-z0-9_-]{32})\.([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{22})$/,
} as const;
const TAG_BYTES = 16;
const WK2_KEY_CONTEXT = Buffer.from('records-platform data key wrap wk2', 'utf8');

/**
 * Wraps data keys under a key-encryption key held by the platform (production passes
 * `createSealer(masterKey).derivedKey('data-keys')`), the subject as additional authenticated data: a wrapped
 * key copied to another subject's row fails to unwrap instead of opening that subject's values. A new record or
 * hook request wraps a key, so the wrap is libsodium's (as personal values are sealed: a call of about 1.5 µs,
 * where AES-GCM's set-up alone takes several).
 */
export function localKeyWrapper(kek: Buffer): KeyWrapper {
  if (kek.length !== 32) throw new Error('the key-encryption key must be 32 bytes');
  const wk2Key = Buffer.alloc(sodium.crypto_aead_xchacha20poly1305_ietf_KEYBYTES);
  sodium.crypto_generichash(wk2Key, WK2_KEY_CONTEXT, kek);
  return {
    async wrap(key, subject) {
      if (key.length !== DATA_KEY_BYTES) throw new Error(`a data key is ${DATA_KEY_BYTES} bytes`);
      const nonce = pooledRandomBytes(sodium.crypto_aead_xchacha20poly1305_ietf_NPUBBYTES);
      const wrapped = Buffer.allocUnsafe(key.length);
      const tag = Buffer.allocUnsafe(TAG_BYTES);
      sodium.crypto_aead_xchacha20poly1305_ietf_encrypt_detached(
        wrapped,
        tag,
        key,
        Buffer.from(`wk2.${subject}`, 'utf8'),
        null,
        nonce,
        wk2Key,
      );
      return `wk2.${nonce.toString('base64url')}.${wrapped.toString('base64url')}.${tag.toString('base64url')}`;
    },
    async unwrap(wrapped, subject) {
      const version = wrapped.slice(0, 3);
      const parts = version === 'wk1' || version === 'wk2' ? WRAPPED[version].exec(wrapped) : null;
      const [, nonce, text, tag] = parts ?? [];
      if (nonce === undefined || text === undefined || tag === undefined)
        throw new Error('not a wrapped data key');
      if (version === 'wk1') {
        const decipher = createDecipheriv('aes-256-gcm', kek, canonical(nonce), { authTagLength: TAG_BYTES });
        decipher.setAAD(Buffer.from(subject, 'utf8'));
        decipher.setAuthTag(canonical(tag));
        return Buffer.concat([decipher.update(canonical(text)), decipher.final()]);
      }
      const ciphertext = canonical(text);
      const key = Buffer.alloc(ciphertext.length);
      try {
        sodium.crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
          key,
          null,
          ciphertext,
          canonical(tag),
          Buffer.from(`wk2.${subject}`, 'utf8'),
          canonical(nonce),
          wk2Key,
        );
      } catch {
        throw new Error('the wrapped data key does not unwrap with this key for this subject');
      }
      return key;
    },
  };
}
