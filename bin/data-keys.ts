import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import type { Config } from '../infra/config';
import type { DataKeyStore, KeyWrapper } from '../infra/keys/port';
import { kmsKeyWrapper, type KeyManagementService } from '../infra/keys/kms';
import { localKeyWrapper } from '../infra/keys/local-wrapper';
import { createSqliteDataKeyStore } from '../infra/keys/sqlite';
import { createSealer, loadMasterKey } from '../infra/secrets/sealer';
import { embeddedFile } from './embedded-stores';
import { awsKmsAdapter, mongoDataKeyStoreAdapter } from './production-adapters';

/** The KMS settings of the configuration, the key named. */
export type KmsSettings = Pick<Config, 'KMS_REGION' | 'KMS_ENDPOINT'> & { readonly KMS_KEY_ID: string };

/** The configured KMS (its client loaded only here); `close` it once done. */
export function kmsOf(settings: KmsSettings): KeyManagementService & { close(): void } {
  return awsKmsAdapter().awsKms({
    keyId: settings.KMS_KEY_ID,
    region: settings.KMS_REGION,
    ...(settings.KMS_ENDPOINT !== undefined && { endpoint: settings.KMS_ENDPOINT }),
  });
}

/**
 * What wraps the data keys: a key derived from the platform's master key (SECRETS_KEY), or, with `KMS_KEY_ID`,
 * a key-encryption key the KMS keeps encrypted (the master key's keys, wrapped before, still unwrap).
 */
async function dataKeyWrapper(config: Config): Promise<KeyWrapper> {
  const local = localKeyWrapper(
    createSealer(loadMasterKey(config.SECRETS_KEY, resolve(config.DATA_DIR))).derivedKey('data-keys'),
  );
  if (config.KMS_KEY_ID === undefined || config.KMS_WRAPPED_KEY === undefined) return local;
  const kms = kmsOf({ ...config, KMS_KEY_ID: config.KMS_KEY_ID });
  try {
    return await kmsKeyWrapper(kms, config.KMS_WRAPPED_KEY, local);
  } finally {
    kms.close();
  }
}

/**
 * The data keys personal values are sealed under: a SQLite file under DATA_DIR, or a collection beside the
 * MongoDB read models; wrapped as `dataKeyWrapper` says.
 */
export async function openDataKeys(config: Config): Promise<DataKeyStore> {
  const wrapper = await dataKeyWrapper(config);
  return config.READ_STORE === 'mongodb'
    ? mongoDataKeyStoreAdapter().createMongoDataKeyStore({
        url: config.MONGO_URL!,
        database: config.MONGO_DATABASE,
        queryBudgetMs: config.QUERY_BUDGET_MS,
        wrapper,
      })
    : createSqliteDataKeyStore({
        path: embeddedFile(config, 'dataKeys'),
        wrapper,
        // A key as durable as the events sealed under it.
        synchronous: config.SQLITE_SYNCHRONOUS,
      });
}

/**
 * The channel on which the event stores of this process's threads share the data keys they seal under
 * (`PersonalDataOptions.keyChannel`): named after the key store, so two platforms in one process (tests) share
 * nothing unless they share their keys.
 */
export function keyChannelName(config: Config): string {
  const store =
    config.READ_STORE === 'mongodb'
      ? `mongodb ${config.MONGO_URL!} ${config.MONGO_DATABASE}`
      : `sqlite ${resolve(embeddedFile(config, 'dataKeys'))}`;
  return `records-platform data keys ${createHash('sha256').update(store).digest('hex')}`;
}
