import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteReadStore } from '../../infra/read-store/sqlite';
import { describeContract } from '../support/adapter-report';
import { readStoreContract } from './read-store';

describeContract('read-store', 'sqlite', { kind: 'embedded' }, () => {
  readStoreContract(async () => {
    const directory = mkdtempSync(join(tmpdir(), 'read-store-sqlite-'));
    const store = createSqliteReadStore({ path: join(directory, 'read-models.db') });
    return {
      store,
      cleanup: async () => {
        await store.close();
        rmSync(directory, { recursive: true, force: true });
      },
    };
  });
});
