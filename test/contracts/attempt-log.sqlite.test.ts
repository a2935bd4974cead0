import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteAttemptLog } from '../../infra/attempts/sqlite';
import { describeContract } from '../support/adapter-report';
import { attemptLogContract } from './attempt-log';

describeContract('attempt-log', 'sqlite', { kind: 'embedded' }, () => {
  attemptLogContract(async () => {
    const directory = mkdtempSync(join(tmpdir(), 'attempt-log-sqlite-'));
    const path = join(directory, 'attempts.db');
    const log = createSqliteAttemptLog({ path });
    const other = createSqliteAttemptLog({ path });
    return {
      log,
      other,
      cleanup: async () => {
        await log.close();
        await other.close();
        rmSync(directory, { recursive: true, force: true });
      },
    };
  });
});
