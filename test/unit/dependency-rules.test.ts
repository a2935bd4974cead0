import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * The dependency-direction rules of the lint (.dependency-cruiser.js) bite: dependency-cruiser, run with the
 * repository's own configuration over a small tree laid out like the repository, reports every import that
 * points the wrong way, by rule, and none of the imports the layout allows.
 */
jest.setTimeout(60_000);

const ROOT = join(__dirname, '..', '..');

/** file → its source; each bad import names the rule that must report it. */
const TREE: Record<string, string> = {
  'contracts/errors.ts': `export const E = 1;\n`,
  'contracts/bad.ts': `import { handle } from '../command-api/kit/handler';\nexport const x = handle;\n`,
  'command-api/kit/handler.ts': `import { E } from '../../contracts/errors';\nimport { put } from '../../infra/store/port';\nexport const handle = E + put;\n`,
  'command-api/records/domain/decider.ts': `import { E } from '../../../contracts/errors';\nexport const decide = E;\n`,
  'command-api/records/domain/bad.ts': `import type { Store } from '../../../infra/store/port';\nexport type S = Store;\n`,
  'languages/filter/parse.ts': `import { E } from '../../contracts/errors';\nexport const parse = E;\n`,
  'languages/filter/bad.ts': `import { put } from '../../infra/store/port';\nexport const l = put;\n`,
  'contracts/list-params.ts': `import { parse } from '../languages/filter/parse';\nexport const p = parse;\n`,
  'command-api/bad.ts': `import { read } from '../query-api/read';\nexport const y = read;\n`,
  'query-api/read.ts': `import { E } from '../contracts/errors';\nexport const read = E;\n`,
  'query-api/bad.ts': `import { handle } from '../command-api/kit/handler';\nexport const z = handle;\n`,
  'infra/store/port.ts': `export interface Store { id: string }\nexport const put = 1;\n`,
  'contracts/read-model-changes.ts': `export interface ReadModelChange { id: string }\n`,
  'infra/read-store/port.ts': `export interface ReadStore { id: string }\n`,
  'infra/bad.ts': `import { decide } from '../command-api/records/domain/decider';\nexport const w = decide;\n`,
  'projections/read-models/good.ts': `import type { ReadModelChange } from '../../contracts/read-model-changes';\nexport type C = ReadModelChange;\n`,
  'projections/read-models/bad-type.ts': `import type { ReadStore } from '../../infra/read-store/port';\nexport type R = ReadStore;\n`,
  'projections/read-models/bad-adapter.ts': `import { put } from '../../infra/store/port';\nexport const a = put;\n`,
  'projections/bad.ts': `import { read } from '../query-api/read';\nexport const p = read;\n`,
  'infra/bad-bin.ts': `import { main } from '../bin/main';\nexport const b = main;\n`,
  'integrator/run.ts': `import { handle } from '../command-api/kit/handler';\nimport { read } from '../query-api/read';\nexport const run = handle + read;\n`,
  'command-api/bad-integrator.ts': `import { run } from '../integrator/run';\nexport const i = run;\n`,
  'bin/main.ts': `import { handle } from '../command-api/kit/handler';\nimport { read } from '../query-api/read';\nimport { put } from '../infra/store/port';\nexport const main = handle + read + put;\n`,
  'query-api/routes/lists.ts': `import { read } from '../read';\nexport const list = read;\n`,
  'query-api/records/search.ts': `import { list } from '../routes/lists';\nexport const search = list;\n`,
  'command-api/records/routes/files.ts': `import { E } from '../../../contracts/errors';\nexport const upload = E;\n`,
  'command-api/records/service.ts': `import { upload } from './routes/files';\nexport const records = upload;\n`,
  'command-api/hooks/routes/bad.ts': `import { upload } from '../../records/routes/files';\nexport const h = upload;\n`,
  'command-api/deps.ts': `export interface Deps { id: string }\n`,
  'command-api/kit/bad-deps.ts': `import type { Deps } from '../deps';\nexport type K = Deps;\n`,
  'command-api/kit/bad.ts': `import { records } from '../records/service';\nexport const k = records;\n`,
  'command-api/records/domain/bad-command.ts': `import { records } from '../service';\nexport const d = records;\n`,
  'command-api/bad-routes.ts': `import { upload } from './records/routes/files';\nexport const c = upload;\n`,
  'integrator/bad-routes.ts': `import { list } from '../query-api/routes/lists';\nexport const s = list;\n`,
  'bin/bad-routes.ts': `import { upload } from '../command-api/records/routes/files';\nimport { records } from '../command-api/records/service';\nexport const r = upload + records;\n`,
  'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'nodenext', strict: true } }),
};

const EXPECTED_VIOLATIONS = [
  'kit-below-features: command-api/kit/bad.ts → command-api/records/service.ts',
  'kit-below-features: command-api/kit/bad-deps.ts → command-api/deps.ts',
  'deciders-know-no-application: command-api/records/domain/bad-command.ts → command-api/records/service.ts',
  'contracts-are-self-contained: contracts/bad.ts → command-api/kit/handler.ts',
  'domain-does-not-import-infra: command-api/records/domain/bad.ts → infra/store/port.ts',
  'languages-are-pure: languages/filter/bad.ts → infra/store/port.ts',
  'apis-apart: command-api/bad.ts → query-api/read.ts',
  'apis-apart: query-api/bad.ts → command-api/kit/handler.ts',
  'infra-does-not-import-applications: infra/bad.ts → command-api/records/domain/decider.ts',
  'projections-are-pure: projections/read-models/bad-type.ts → infra/read-store/port.ts',
  'projections-are-pure: projections/read-models/bad-adapter.ts → infra/store/port.ts',
  'projections-do-not-import-apis: projections/bad.ts → query-api/read.ts',
  'only-composition-roots-import-bin: infra/bad-bin.ts → bin/main.ts',
  'nothing-imports-the-integrator: command-api/bad-integrator.ts → integrator/run.ts',
  'routes-stay-in-their-app: command-api/bad-routes.ts → command-api/records/routes/files.ts',
  'routes-stay-in-their-app: integrator/bad-routes.ts → query-api/routes/lists.ts',
  'routes-stay-in-their-app: bin/bad-routes.ts → command-api/records/routes/files.ts',
  'feature-routes-stay-in-their-feature: command-api/hooks/routes/bad.ts → command-api/records/routes/files.ts',
].sort();

let tree: string;

beforeAll(() => {
  tree = mkdtempSync(join(tmpdir(), 'dependency-rules-'));
  for (const [file, source] of Object.entries(TREE)) {
    mkdirSync(dirname(join(tree, file)), { recursive: true });
    writeFileSync(join(tree, file), source);
  }
});

afterAll(() => rmSync(tree, { recursive: true, force: true }));

function cruise(): { status: number | null; violations: string[]; stdout: string } {
  const result = spawnSync(
    process.execPath,
    [
      join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs'),
      '--config',
      join(ROOT, '.dependency-cruiser.js'),
      '--output-type',
      'err',
      '.',
    ],
    { cwd: tree, encoding: 'utf8' },
  );
  const violations = [...result.stdout.matchAll(/error (\S+): (\S+) → (\S+)/g)].map(
    ([, rule, from, to]) => `${rule}: ${from} → ${to}`,
  );
  return { status: result.status, violations: violations.sort(), stdout: result.stdout + result.stderr };
}

test('every import against the layout is reported by its rule, and the allowed ones are not', () => {
  const { status, violations, stdout } = cruise();
  expect({ violations, stdout }).toEqual({ violations: EXPECTED_VIOLATIONS, stdout: expect.any(String) });
  expect(status).not.toBe(0);
});
