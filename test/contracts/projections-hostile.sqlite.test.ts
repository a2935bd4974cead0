import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteReadStore } from '../../infra/read-store/sqlite';
import { describeContract } from '../support/adapter-report';
import { hostileProjectionsContract } from './projections-hostile';

describeContract('projections with hostile events', 'sqlite', { kind: 'embedded' }, () => {
  hostileProjectionsContract(async () => {
    const directory = mkdtempSync(join(tmpdir(), 'hostile-read-store-'));
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
