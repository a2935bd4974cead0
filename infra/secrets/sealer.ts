import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Encryption at rest for secrets the platform must read back (TOTP seeds): AES-256-GCM under a key derived
 * from the master key, `v1.<iv>.<tag>.<ciphertext>` in base64url. Events carry only sealed values.
 */
export interface Sealer {
  seal(plain: string): string;
  /** Throws when the value was not sealed with this key or was altered. */
  open(sealed: string): string;
  /** A key for another purpose (signing pending-login tokens), derived from the same master key. */
  derivedKey(purpose: string): Buffer;
}

export function createSealer(masterKey: Buffer): Sealer {
  if (masterKey.length !== 32) throw new Error('the secrets key must be 32 bytes');
  const derivedKey = (purpose: string) =>
    Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), `records-platform:${purpose}`, 32));
  const key = derivedKey('sealed-secrets');
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const text = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', iv, cipher.getAuthTag(), text]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
    },
    open(sealed) {
      const [version, iv, tag, text] = sealed.split('.');
      if (version !== 'v1' || iv === undefined || tag === undefined || text === undefined)
        throw new Error('not a sealed value');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(text, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    },
    derivedKey,
  };
}

/**
 * The master key: `SECRETS_KEY` (base64, 32 bytes) when set, else `<dataDir>/secrets.key`, made on first
 * start (owner-readable only). Losing it makes every enrolled authenticator unusable.
 */
export function loadMasterKey(configured: string | undefined, dataDir: string): Buffer {
  if (configured !== undefined) return Buffer.from(configured, 'base64');
  const path = join(dataDir, 'secrets.key');
  if (!existsSync(path)) {
    // Written whole under another name, then linked in place: threads and processes starting together make
    // one key between them, and none reads a file still being written.
    const made = `${path}.${process.pid}.${randomBytes(6).toString('hex')}`;
    writeFileSync(made, randomBytes(32).toString('base64'), { flag: 'wx', mode: 0o600 });
    chmodSync(made, 0o600);
    try {
      linkSync(made, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(made);
    }
  }
  return Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
}
