import { localKeyWrapper } from './local-wrapper';
import type { KeyWrapper } from './port';

/**
 * What the platform asks of a key management service (AWS KMS, or one that speaks its API): the master key
 * never leaves it; it makes a key and opens what it made, bound to a context.
 */
export interface KeyManagementService {
  /** A new 32-byte key, and that key encrypted under the master key, bound to `context`. */
  generateKey(context: Readonly<Record<string, string>>): Promise<{ plaintext: Buffer; ciphertext: Buffer }>;
  /** What `generateKey` encrypted; throws for another context, another master key or altered bytes. */
  decrypt(ciphertext: Buffer, context: Readonly<Record<string, string>>): Promise<Buffer>;
}

/** The context the platform's key-encryption key is bound to in the KMS. */
const KEK_CONTEXT = { purpose: 'records-platform data keys' } as const;
/** What data keys wrapped under the KMS-protected key-encryption key start with. */
const PREFIX = 'kms.';

/**
 * A new key-encryption key for `kmsKeyWrapper`, as the KMS encrypted it (base64): what an operator puts in
 * `KMS_WRAPPED_KEY` once (`npm run kms:new-key`). Its plaintext is not kept.
 */
export async function newWrappedKeyEncryptionKey(kms: KeyManagementService): Promise<string> {
  const { plaintext, ciphertext } = await kms.generateKey(KEK_CONTEXT);
  plaintext.fill(0);
  return ciphertext.toString('base64');
}

/**
 * Data keys wrapped under a key-encryption key the KMS keeps encrypted (`wrappedKek`, from
 * `newWrappedKeyEncryptionKey`): the KMS opens it once, as the process starts, and each data key is then wrapped
 * in-process, bound to its subject as the local wrapper does. A call to the KMS per data key would put a network
 * round trip into every record created and every key read again (a rebuild reads one per record); this way the
 * KMS is asked once per process, and without the KMS (its key disabled, its policy changed) no process can start
 * and read any key. Keys wrapped before the KMS was configured (`before`: the local wrapper under `SECRETS_KEY`)
 * still unwrap; new ones are wrapped here.
 */
export async function kmsKeyWrapper(
  kms: KeyManagementService,
  wrappedKek: string,
  before?: KeyWrapper,
): Promise<KeyWrapper> {
  const ciphertext = Buffer.from(wrappedKek, 'base64');
  if (ciphertext.length === 0 || ciphertext.toString('base64') !== wrappedKek)
    throw new Error('KMS_WRAPPED_KEY is not base64 (run npm run kms:new-key to make one)');
  const kek = await kms.decrypt(ciphertext, KEK_CONTEXT).catch((error: unknown) => {
    throw new Error(
      `the KMS did not open KMS_WRAPPED_KEY (${error instanceof Error ? error.message : String(error)}): is the KMS key the one that encrypted it, enabled, and may this process decrypt with it?`,
      { cause: error },
    );
  });
  const wrapper = localKeyWrapper(kek);
  return {
    async wrap(key, subject) {
      return `${PREFIX}${await wrapper.wrap(key, subject)}`;
    },
    async unwrap(wrapped, subject) {
      if (wrapped.startsWith(PREFIX)) return wrapper.unwrap(wrapped.slice(PREFIX.length), subject);
      if (before !== undefined) return before.unwrap(wrapped, subject);
      throw new Error('not a data key wrapped under the KMS key');
    },
  };
}
