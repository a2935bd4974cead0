import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalBlobStore } from '../../infra/blob-store/local-files';
import { describeContract } from '../support/adapter-report';
import { blobStoreContract } from './blob-store';

describeContract('blob-store', 'local files', { kind: 'embedded' }, () => {
  blobStoreContract(async () => {
    const root = mkdtempSync(join(tmpdir(), 'blob-store-'));
    return {
      store: createLocalBlobStore(root),
      leftovers: async () =>
        readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.partial'))
          .length,
      cleanup: async () => rmSync(root, { recursive: true, force: true }),
    };
  });
});
