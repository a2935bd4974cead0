import { aesGcmOpen, derivedKey, xchachaOpen, xchachaSeal } from '../secrets/aead';
import { DATA_KEY_BYTES, type KeyWrapper } from './port';

/**
 * The shapes `unwrap` accepts, and nothing looser (base64url parts): `wk2.<nonce>.<wrapped key>.<tag>`, what
 * is wrapped now, with XChaCha20-Poly1305 under a key derived from the key-encryption key;
 * `wk1.<iv>.<wrapped key>.<tag>`, keys wrapped before, with AES-256-GCM under the key-encryption key itself.
 * A `wk2` key's parts have fixed lengths: they are cut where they lie once it is matched, not captured (a
 * rebuild unwraps a key for every record).
 */
const WK1 = /^wk1\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{22})$/;
const WK2 = /^wk2\.[A-Za-z0-9_-]{32}\.[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{22}$/;

/**
 * Wraps data keys under a key-encryption key held by the platform (production passes
 * `createSealer(masterKey).derivedKey('data-keys')`), the subject as additional authenticated data: a wrapped
 * key copied to another subject's row fails to unwrap instead of opening that subject's values. Every new
 * record and hook request wraps a key, so the wrap is libsodium's (`aead.ts`).
 */
export function localKeyWrapper(kek: Buffer): KeyWrapper {
  if (kek.length !== 32) throw new Error('the key-encryption key must be 32 bytes');
  const wk2Key = derivedKey(kek, Buffer.from('records-platform data key wrap wk2', 'utf8'));
  const unwrapNow = (wrapped: string, subject: string): Buffer => {
    if (WK2.test(wrapped)) {
      const parts = { nonce: wrapped.slice(4, 36), text: wrapped.slice(37, 80), tag: wrapped.slice(81) };
      return xchachaOpen(parts, Buffer.from(`wk2.${subject}`, 'utf8'), wk2Key);
    }
    const [, nonce, text, tag] = WK1.exec(wrapped) ?? [];
    if (nonce === undefined || text === undefined || tag === undefined)
      throw new Error('not a wrapped data key');
    return aesGcmOpen({ nonce, text, tag }, Buffer.from(subject, 'utf8'), kek);
  };
  return {
    async wrap(key, subject) {
      if (key.length !== DATA_KEY_BYTES) throw new Error(`a data key is ${DATA_KEY_BYTES} bytes`);
      return `wk2.${xchachaSeal(key, Buffer.from(`wk2.${subject}`, 'utf8'), wk2Key)}`;
    },
    async unwrap(wrapped, subject) {
      return unwrapNow(wrapped, subject);
    },
    unwrapNow,
  };
}
