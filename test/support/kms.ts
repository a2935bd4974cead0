import { CreateKeyCommand, DisableKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import type { AdapterRun } from './adapter-report';

/**
 * A server that speaks AWS KMS's API for the tests: `KMS_URL` (`.ci/run` starts local-kms,
 * `.ci/start-local-kms.sh`). Any credentials pass there; the SDK's chain needs some.
 */
export const KMS_REGION = 'eu-west-2';

export function kmsAvailability(): AdapterRun {
  const url = process.env.KMS_URL;
  return url ? { kind: 'real-server', where: url } : { kind: 'skipped', reason: 'KMS_URL not set' };
}

/** The settings a KMS client of the tests takes, with stand-in credentials where none are set. */
export function testKmsSettings(): { endpoint: string; region: string } {
  process.env.AWS_ACCESS_KEY_ID ??= 'records-platform-test';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'records-platform-test';
  return { endpoint: process.env.KMS_URL!, region: KMS_REGION };
}

/** A new symmetric KMS key of the tests' own: its id. */
export async function newKmsKey(): Promise<string> {
  const client = new KMSClient(testKmsSettings());
  try {
    const { KeyMetadata } = await client.send(new CreateKeyCommand({ Description: 'records-platform test' }));
    return KeyMetadata!.KeyId!;
  } finally {
    client.destroy();
  }
}

export async function disableKmsKey(keyId: string): Promise<void> {
  const client = new KMSClient(testKmsSettings());
  try {
    await client.send(new DisableKeyCommand({ KeyId: keyId }));
  } finally {
    client.destroy();
  }
}
