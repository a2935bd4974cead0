import { randomBytes } from 'node:crypto';
import { awsKms } from '../../infra/keys/aws-kms';
import { kmsKeyWrapper, newWrappedKeyEncryptionKey } from '../../infra/keys/kms';
import { localKeyWrapper } from '../../infra/keys/local-wrapper';
import { describeContract } from '../support/adapter-report';
import { disableKmsKey, kmsAvailability, newKmsKey, testKmsSettings } from '../support/kms';
import { keyWrapperContract } from './key-wrapper';

/**
 * Data keys wrapped under a key-encryption key that a KMS keeps encrypted, against a server speaking AWS KMS's
 * API (`KMS_URL`; `.ci/run` starts local-kms). Each test makes KMS keys of its own.
 */
describeContract('key-wrapper', 'AWS KMS', kmsAvailability(), () => {
  const kmsOf = (keyId: string) => awsKms({ keyId, ...testKmsSettings() });
  const wrapperUnder = async (keyId: string, wrappedKek: string) => {
    const kms = kmsOf(keyId);
    try {
      return await kmsKeyWrapper(kms, wrappedKek);
    } finally {
      kms.close();
    }
  };
  /** A KMS key and a key-encryption key it encrypted. */
  const newSetup = async () => {
    const keyId = await newKmsKey();
    const kms = kmsOf(keyId);
    try {
      return { keyId, wrappedKek: await newWrappedKeyEncryptionKey(kms) };
    } finally {
      kms.close();
    }
  };

  keyWrapperContract(async () => {
    const own = await newSetup();
    return {
      open: () => wrapperUnder(own.keyId, own.wrappedKek),
      // Another key-encryption key, under the same KMS key.
      stranger: async () => {
        const kms = kmsOf(own.keyId);
        try {
          return await wrapperUnder(own.keyId, await newWrappedKeyEncryptionKey(kms));
        } finally {
          kms.close();
        }
      },
    };
  });

  test('the KMS makes 32-byte keys and opens them only with their context, under their key', async () => {
    const keyId = await newKmsKey();
    const kms = kmsOf(keyId);
    const other = kmsOf(await newKmsKey());
    try {
      const context = { purpose: 'test' };
      const made = await kms.generateKey(context);
      expect(made.plaintext).toHaveLength(32);
      expect(made.ciphertext.includes(made.plaintext)).toBe(false);
      expect((await kms.decrypt(made.ciphertext, context)).equals(made.plaintext)).toBe(true);
      await expect(kms.decrypt(made.ciphertext, { purpose: 'other' })).rejects.toThrow();
      await expect(kms.decrypt(made.ciphertext, {})).rejects.toThrow();
      await expect(other.decrypt(made.ciphertext, context)).rejects.toThrow();
    } finally {
      kms.close();
      other.close();
    }
  });

  test('no wrapper starts with a key-encryption key of another KMS key, a malformed one, or a disabled KMS key', async () => {
    const own = await newSetup();
    const stranger = await newSetup();
    await expect(wrapperUnder(own.keyId, stranger.wrappedKek)).rejects.toThrow();
    for (const text of ['', 'not base64!', `${own.wrappedKek}=`, Buffer.from('x').toString('base64')])
      await expect(wrapperUnder(own.keyId, text)).rejects.toThrow();
    await disableKmsKey(own.keyId);
    await expect(wrapperUnder(own.keyId, own.wrappedKek)).rejects.toThrow();
  });

  test("data keys wrapped before the KMS was configured (under SECRETS_KEY) still unwrap; new ones are the KMS wrapper's", async () => {
    const own = await newSetup();
    const before = localKeyWrapper(randomBytes(32));
    const key = randomBytes(32);
    const wrappedBefore = await before.wrap(key, 'user:acme:3');
    const kms = kmsOf(own.keyId);
    try {
      const wrapper = await kmsKeyWrapper(kms, own.wrappedKek, before);
      expect((await wrapper.unwrap(wrappedBefore, 'user:acme:3')).equals(key)).toBe(true);
      const wrappedNow = await wrapper.wrap(key, 'user:acme:3');
      expect(wrappedNow).toMatch(/^kms\.wk2\./);
      // The local wrapper alone cannot open what is wrapped now.
      await expect(before.unwrap(wrappedNow, 'user:acme:3')).rejects.toThrow();
      // Without the wrapper from before, its keys are refused, not misread.
      await expect(
        (await kmsKeyWrapper(kms, own.wrappedKek)).unwrap(wrappedBefore, 'user:acme:3'),
      ).rejects.toThrow('not a data key wrapped under the KMS key');
    } finally {
      kms.close();
    }
  });
});
