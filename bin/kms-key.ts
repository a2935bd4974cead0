/**
 * `npm run kms:new-key`: asks the KMS (`KMS_KEY_ID`, `KMS_REGION`, `KMS_ENDPOINT`) for a new key-encryption
 * key for the data keys and prints it as the KMS encrypted it, as the line to put in the platform's
 * configuration: `KMS_WRAPPED_KEY=<base64>`. Run it once per deployment: every process must have the same one.
 */
import { z } from 'zod';
import { awsKms } from '../infra/keys/aws-kms';
import { newWrappedKeyEncryptionKey } from '../infra/keys/kms';

const settings = z
  .object({
    KMS_KEY_ID: z.string().min(1, 'KMS_KEY_ID is needed: the KMS key (id, ARN or alias) that encrypts it'),
    KMS_REGION: z
      .string()
      .regex(/^[a-z0-9-]{1,40}$/, 'must be a region name')
      .default('eu-west-1'),
    KMS_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  })
  .safeParse(process.env);

async function main(): Promise<void> {
  if (!settings.success) {
    process.stderr.write(
      `${settings.error.issues.map((issue) => `${String(issue.path[0])}: ${issue.message}`).join('\n')}\n`,
    );
    process.exit(2);
  }
  const { KMS_KEY_ID, KMS_REGION, KMS_ENDPOINT } = settings.data;
  const kms = awsKms({
    keyId: KMS_KEY_ID,
    region: KMS_REGION,
    ...(KMS_ENDPOINT !== undefined && { endpoint: KMS_ENDPOINT }),
  });
  try {
    process.stdout.write(`KMS_WRAPPED_KEY=${await newWrappedKeyEncryptionKey(kms)}\n`);
  } finally {
    kms.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`kms:new-key failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
