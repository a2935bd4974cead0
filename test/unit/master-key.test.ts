import { readdirSync } from 'node:fs';
import { temporaryDirectory } from '../support/temporary-directory';
import { Worker } from 'node:worker_threads';
import { loadMasterKey } from '../../infra/secrets/sealer';

/** The master key made on first start: one key, whoever starts at once (a rebuild's decoder threads do). */
test('threads starting together make one key between them, and leave no other file', async () => {
  const dataDir = temporaryDirectory('master-key-');
  const sealer = require.resolve('../../infra/secrets/sealer');
  const keys = await Promise.all(
    Array.from(
      { length: 8 },
      () =>
        new Promise<string>((resolve, reject) => {
          const worker = new Worker(
            `require('tsx/cjs'); const { loadMasterKey } = require(${JSON.stringify(sealer)});
             require('node:worker_threads').parentPort.postMessage(loadMasterKey(undefined, ${JSON.stringify(dataDir)}).toString('base64'));`,
            { eval: true },
          );
          worker.once('message', resolve);
          worker.once('error', reject);
        }),
    ),
  );
  expect(new Set(keys).size).toBe(1);
  expect(Buffer.from(keys[0]!, 'base64')).toHaveLength(32);
  expect(loadMasterKey(undefined, dataDir).toString('base64')).toBe(keys[0]);
  expect(readdirSync(dataDir)).toEqual(['secrets.key']);
});
