import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import type { KeyManagementService } from './kms';

export interface AwsKmsOptions {
  /** The key's id, ARN or alias (`alias/records-platform`). */
  readonly keyId: string;
  readonly region: string;
  /** Another address than AWS's own for the region (a VPC endpoint, or a KMS-compatible server in tests). */
  readonly endpoint?: string;
  /** How long one call may take. */
  readonly timeoutMs?: number;
}

/**
 * AWS KMS through its SDK: credentials from the SDK's default chain (environment, shared files, the instance's
 * or task's role). `decrypt` names the key too, so a ciphertext of another key is refused rather than opened.
 */
export function awsKms(options: AwsKmsOptions): KeyManagementService & { close(): void } {
  const client = new KMSClient({
    region: options.region,
    ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
    maxAttempts: 3,
    requestHandler: { requestTimeout: options.timeoutMs ?? 10_000 },
  });
  const bytes = (value: Uint8Array | undefined, what: string): Buffer => {
    if (value === undefined) throw new Error(`the KMS answered no ${what}`);
    return Buffer.from(value);
  };
  return {
    async generateKey(context) {
      const answer = await client.send(
        new GenerateDataKeyCommand({
          KeyId: options.keyId,
          KeySpec: 'AES_256',
          EncryptionContext: { ...context },
        }),
      );
      const plaintext = bytes(answer.Plaintext, 'key');
      if (plaintext.length !== 32) throw new Error(`the KMS made a key of ${plaintext.length} bytes, not 32`);
      return { plaintext, ciphertext: bytes(answer.CiphertextBlob, 'ciphertext') };
    },
    async decrypt(ciphertext, context) {
      const answer = await client.send(
        new DecryptCommand({
          KeyId: options.keyId,
          CiphertextBlob: ciphertext,
          EncryptionContext: { ...context },
        }),
      );
      return bytes(answer.Plaintext, 'plaintext');
    },
    close: () => client.destroy(),
  };
}
