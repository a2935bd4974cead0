import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** `npm run bench`: every benchmark in turn, each printing `figure …` lines. */
const BENCHES = [
  'event-store-append.ts',
  'projection-rebuild.ts',
  'personal-data.ts',
  'http.ts',
  'records-domain.ts',
  'field-filter.ts',
  'auth.ts',
  'heavy-readers.ts',
  'like-filter.ts',
  'api-description.ts',
  'mcp-overhead.ts',
  'webhooks.ts',
  'scenario-steps.ts',
  'mailhooks.ts',
  'deliveries.ts',
  'time-travel.ts',
  'list-as-of.ts',
  'vector-index.ts',
  'semantic.ts',
  'models-and-api.ts',
  'ai-execute.ts',
];

let failed = 0;
for (const bench of BENCHES) {
  process.stdout.write(`\n# ${bench}\n`);
  const result = spawnSync(
    process.execPath,
    ['--expose-gc', '--require', require.resolve('tsx/cjs'), join(__dirname, bench)],
    {
      stdio: 'inherit',
    },
  );
  if (result.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
