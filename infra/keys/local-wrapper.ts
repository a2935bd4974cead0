import { createCipheriv, createDecipheriv } from 'node:crypto';
import { pooledRandomBytes } from '../secrets/random-pool';
import { DATA_KEY_BYTES, type KeyWrapper } from './port';

/** `wk1.<iv>.<wrapped key>.<tag>`, base64url: the shape `unwrap` accepts, and nothing looser. */
const WRAPPED = /^wk1\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{22})$/;

/**
 * Wraps data keys with AES-256-GCM under a key-encryption key held by the platform (production passes
 * `createSealer(masterKey).derivedKey('data-keys')`), the subject as additional authenticated data: a wrapped
 * key copied to another subject's row fails to unwrap instead of opening that subject's values.
 */
export function localKeyWrapper(kek: Buffer): KeyWrapper {
  if (kek.length !== 32) throw new Error('the key-encryption key must be 32 bytes');
  return {
    async wrap(key, subject) {
      if (key.length !== DATA_KEY_BYTES) throw new Error(`a data key is ${DATA_KEY_BYTES} bytes`);
      const iv = pooledRandomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', kek, iv);
      cipher.setAAD(Buffer.from(subject, 'utf8'));
      const wrapped = Buffer.concat([cipher.update(key), cipher.final()]);
      const tag = cipher.getAuthTag();
      return `wk1.${iv.toString('base64url')}.${wrapped.toString('base64url')}.${tag.toString('base64url')}`;
    },
    async unwrap(wrapped, subject) {
      const [, iv, text, tag] = WRAPPED.exec(wrapped) ?? [];
      if (iv === undefined || text === undefined || tag === undefined)
        throw new Error('not a wrapped data key');
      const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(iv, 'base64url'), {
        authTagLength: 16,
      });
      decipher.setAAD(Buffer.from(subject, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(text, 'base64url')), decipher.final()]);
    },
  };
}
