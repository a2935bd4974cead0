import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describeContract } from '../support/adapter-report';
import type { ChildProcess } from 'node:child_process';
import {
  exited,
  freePort,
  output,
  spawnBin,
  startPlatformProcess,
  tokenApi,
} from '../support/child-platform';
import { kmsAvailability, newKmsKey, testKmsSettings } from '../support/kms';
import type { Entity } from '../support/platform';

jest.setTimeout(120_000);

const TOKEN = 'rpt_kms-test-token-0123456789abcdef';

/**
 * The platform with its data keys under a KMS (`KMS_KEY_ID`, `KMS_WRAPPED_KEY`, against the server of `KMS_URL`):
 * `npm run kms:new-key` makes the wrapped key-encryption key, records written before the KMS was configured
 * still read, new keys are wrapped under the KMS's key, and erasure works as before. The platform runs as
 * `npm start` does, in processes of its own (the AWS SDK takes its credentials from the environment).
 */
describeContract('key-wrapper', 'AWS KMS, the platform end to end', kmsAvailability(), () => {
  test('kms:new-key, then a platform on the KMS reads what was sealed before and seals anew under it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kms-platform-'));
    const base = { DATA_DIR: dataDir, SECRETS_KEY: randomBytes(32).toString('base64'), ADMIN_TOKEN: TOKEN };
    const call = tokenApi(TOKEN);
    let running: { child: ChildProcess; url: string } | undefined;
    const stop = async () => {
      running?.child.kill('SIGTERM');
      if (running) await exited(running.child);
      running = undefined;
    };
    try {
      running = await startPlatformProcess(await freePort(), base);
      const url = () => running!.url;
      const space = await call<Entity>(url(), 'POST', '/space', { name: 'People' });
      const module = await call<Entity>(url(), 'POST', '/module', { spaceId: space.id, name: 'Contacts' });
      await call(url(), 'POST', '/field', {
        moduleId: module.id,
        name: 'Email',
        key: 'email',
        type: 'email',
      });
      const before = await call<Entity>(url(), 'POST', '/record', {
        moduleId: module.id,
        name: 'Ada',
        fields: { email: 'ada@example.org' },
      });
      await stop();

      const { endpoint, region } = testKmsSettings();
      const kmsEnv = {
        KMS_KEY_ID: await newKmsKey(),
        KMS_ENDPOINT: endpoint,
        KMS_REGION: region,
        AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID!,
        AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY!,
      };
      const newKey = spawnBin('kms-key.ts', [], kmsEnv);
      const printed = output(newKey);
      expect({ code: await exited(newKey), printed: printed().slice(-300) }).toMatchObject({ code: 0 });
      const wrappedKey = /^KMS_WRAPPED_KEY=([A-Za-z0-9+/=]+)$/m.exec(printed())?.[1];
      expect(wrappedKey).toBeDefined();

      running = await startPlatformProcess(await freePort(), {
        ...base,
        ...kmsEnv,
        KMS_WRAPPED_KEY: wrappedKey!,
      });
      expect(await call(url(), 'GET', `/record/${before.id}`)).toMatchObject({
        name: 'Ada',
        fields: { email: 'ada@example.org' },
      });
      const after = await call<Entity>(url(), 'POST', '/record', {
        moduleId: module.id,
        name: 'Bea',
        fields: { email: 'bea@example.org' },
      });
      const keys = new Database(join(dataDir, 'data-keys.db'), { readonly: true });
      const wrappedOf = (recordId: number) =>
        keys
          .prepare<[string], { wrapped: string | null }>('SELECT wrapped FROM data_keys WHERE subject LIKE ?')
          .get(`record:%:${recordId}`)?.wrapped;
      try {
        // Ada's key was wrapped under SECRETS_KEY, Bea's under the KMS's key.
        expect(wrappedOf(before.id)).toMatch(/^wk2\./);
        expect(wrappedOf(after.id)).toMatch(/^kms\.wk2\./);
        expect(await call(url(), 'GET', `/record/${after.id}`)).toMatchObject({
          fields: { email: 'bea@example.org' },
        });
        await call(url(), 'POST', `/record/${after.id}/erase`, { reason: 'Art. 17' });
        expect(await call(url(), 'GET', `/record/${after.id}`)).toMatchObject({
          name: '[erased]',
          fields: { email: '[erased]' },
        });
        expect(wrappedOf(after.id)).toBeNull();
      } finally {
        keys.close();
      }
      await stop();

      // A KMS key that did not encrypt KMS_WRAPPED_KEY cannot open it: the platform does not start.
      const refused = spawnBin('platform.ts', [], {
        ...base,
        ...kmsEnv,
        KMS_KEY_ID: await newKmsKey(),
        KMS_WRAPPED_KEY: wrappedKey!,
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
      });
      const logs = output(refused);
      const deadline = setTimeout(() => refused.kill('SIGKILL'), 60_000);
      const code = await exited(refused);
      clearTimeout(deadline);
      expect({ code, logs: logs().slice(-600) }).toMatchObject({ code: expect.any(Number) });
      expect(code).not.toBe(0);
      expect(logs()).toContain('the KMS did not open KMS_WRAPPED_KEY');
    } finally {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
