import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * Opens the adapters in a fresh process (jest's own module registry would hide what Node loads) and lists
 * the client libraries in Node's require cache.
 */
function clientLibrariesLoaded(env: Record<string, string>): string[] {
  const script = `
    const { loadConfig } = require('./infra/config');
    const { createLogger } = require('./infra/logging');
    const { openAdapters } = require('./bin/adapters');
    const config = loadConfig(process.env);
    openAdapters(config, createLogger('silent')).then(async (adapters) => {
      await adapters.stream();
      const loaded = ['mongodb', 'kafkajs', '@eventstore/db-client'].filter((name) =>
        Object.keys(require.cache).some((path) => path.includes('/node_modules/' + name + '/')));
      await adapters.close();
      process.stdout.write(JSON.stringify(loaded));
    });`;
  const result = spawnSync(process.execPath, ['--require', require.resolve('tsx/cjs'), '-e', script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`the adapter probe failed:\n${result.stderr}`);
  return JSON.parse(result.stdout) as string[];
}

test('the embedded platform loads none of the production client libraries (they cost memory in every thread)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'records-footprint-'));
  try {
    expect(clientLibrariesLoaded({ DATA_DIR: dataDir })).toEqual([]);
    // The probe sees a library the configuration does pick (kafkajs connects lazily, so no broker is needed).
    expect(
      clientLibrariesLoaded({ DATA_DIR: dataDir, STREAM: 'kafka', KAFKA_BROKERS: '127.0.0.1:9' }),
    ).toEqual(['kafkajs']);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
