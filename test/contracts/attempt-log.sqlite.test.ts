import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteAttemptLog } from '../../infra/attempts/sqlite';
import { describeContract } from '../support/adapter-report';
import { attemptLogContract } from './attempt-log';

describeContract('attempt-log', 'sqlite', { kind: 'embedded' }, () => {
  attemptLogContract(async () => {
    const directory = mkdtempSync(join(tmpdir(), 'attempt-log-sqlite-'));
    return {
      open: async () => createSqliteAttemptLog({ path: join(directory, 'attempts.db') }),
      cleanup: async () => rmSync(directory, { recursive: true, force: true }),
    };
  });
});
