import { resolve } from 'node:path';
import type { Config } from '../infra/config';
import type { DataKeyStore } from '../infra/keys/port';
import { localKeyWrapper } from '../infra/keys/local-wrapper';
import { createSqliteDataKeyStore } from '../infra/keys/sqlite';
import { createSealer, loadMasterKey } from '../infra/secrets/sealer';
import { embeddedFile } from './embedded-stores';
import { mongoDataKeyStoreAdapter } from './production-adapters';

/**
 * The data keys personal values are sealed under: a SQLite file under DATA_DIR, or a collection beside the
 * MongoDB read models; wrapped by a key derived from the platform's master key (SECRETS_KEY).
 */
export async function openDataKeys(config: Config): Promise<DataKeyStore> {
  const wrapper = localKeyWrapper(
    createSealer(loadMasterKey(config.SECRETS_KEY, resolve(config.DATA_DIR))).derivedKey('data-keys'),
  );
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
