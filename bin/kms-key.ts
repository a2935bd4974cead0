/**
 * `npm run kms:new-key`: asks the KMS (`KMS_KEY_ID`, `KMS_REGION`, `KMS_ENDPOINT`) for a new key-encryption
 * key for the data keys and prints it as the KMS encrypted it, as the line to put in the platform's
 * configuration: `KMS_WRAPPED_KEY=<base64>`. Run it once per deployment: every process must have the same one.
 */
import { configSchema } from '../infra/config';
import { newWrappedKeyEncryptionKey } from '../infra/keys/kms';
import { kmsOf } from './data-keys';

// The platform's own settings of the KMS.
const settings = configSchema
  .pick({ KMS_KEY_ID: true, KMS_REGION: true, KMS_ENDPOINT: true })
  .safeParse(process.env);

async function main(): Promise<void> {
  if (!settings.success) {
    process.stderr.write(
      `${settings.error.issues.map((issue) => `${String(issue.path[0])}: ${issue.message}`).join('\n')}\n`,
    );
    process.exit(2);
  }
  const { KMS_KEY_ID } = settings.data;
  if (KMS_KEY_ID === undefined) {
    process.stderr.write('KMS_KEY_ID is needed: the KMS key (id, ARN or alias) that encrypts it\n');
    process.exit(2);
  }
  const kms = kmsOf({ ...settings.data, KMS_KEY_ID });
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
