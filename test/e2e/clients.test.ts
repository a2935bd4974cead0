/**
 * The typed clients under clients/ (issues 17 and 30): generated from the committed API description by
 * `npm run clients`, never committed. Each builds with its own toolchain and runs its hand-written scenario
 * against a running platform, and `npm run release:clients` packs each into its artifact. .ci/run installs the
 * toolchains, generates the clients and sets CLIENT_TOOLCHAINS=1; then a missing or stale generation fails the
 * run. Without the variable the suites are reported as skipped, never passed.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { API_VERSION } from '../../contracts/api/index';
import {
  CLIENTS_DIR,
  GENERATION_STAMP,
  GENERATOR_VERSION,
  generationSource,
} from '../../bin/generate-clients';
import { packClients } from '../../bin/release-clients';
import { describeContract, type AdapterRun } from '../support/adapter-report';
import { ADMIN_TOKEN, startPlatform, type TestPlatform } from '../support/platform';

const exec = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const BUILD_TIMEOUT = 600_000;

const skipped: AdapterRun = {
  kind: 'skipped',
  reason:
    'CLIENT_TOOLCHAINS not set (.ci/run installs the client toolchains, generates the clients with ' +
    '`npm run clients` and sets it)',
};
const toolchains = (where: string): AdapterRun =>
  process.env.CLIENT_TOOLCHAINS ? { kind: 'real-server', where } : skipped;

/** Runs a build or scenario step without blocking the platform that serves in this process. */
async function step(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  try {
    return await exec(command, args, {
      cwd,
      env: { ...process.env, ...env },
      maxBuffer: 64 * 1024 * 1024,
      timeout: BUILD_TIMEOUT,
    });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${command} ${args.join(' ')} (in ${cwd}) failed: ${failed.message}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`,
    );
  }
}

/**
 * Fails, naming the fix, unless clients/ holds a complete generation from the committed description with the
 * current recipes and generator: the clients are not committed, so a checkout has none until they are made.
 */
function expectGenerated(): void {
  if (!existsSync(GENERATION_STAMP))
    throw new Error('clients/ is not generated: run `npm run clients` (.ci/run does, before `npm test`)');
  const stamp = JSON.parse(readFileSync(GENERATION_STAMP, 'utf8')) as unknown;
  if (JSON.stringify(stamp) !== JSON.stringify(generationSource()))
    throw new Error(
      `clients/ was generated from other inputs (${JSON.stringify(stamp)}): run \`npm run clients\` again`,
    );
}

describeContract(
  'typed clients',
  'generated from the committed description',
  toolchains(`OpenAPI Generator ${GENERATOR_VERSION}`),
  () => {
    test('clients/ holds a generation from the committed description, recipes and generator', () => {
      expect(expectGenerated).not.toThrow();
    });
  },
);

describeContract('typed clients', 'release artifacts', toolchains('npm run release:clients'), () => {
  let out: string;
  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), 'records-clients-release-'));
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  const entries = async (file: string): Promise<string[]> => {
    const listing = file.endsWith('.whl')
      ? await step('python3', ['-m', 'zipfile', '-l', file], out)
      : await step('tar', ['-tzf', file], out);
    return listing.stdout.split('\n');
  };

  test(
    'each generated client is built and packed into its artifact',
    async () => {
      expectGenerated();
      const artifacts = await packClients(out);
      expect(artifacts).toEqual(
        [
          `records-client-go-${API_VERSION}.tar.gz`,
          `records-client-php-${API_VERSION}.tar.gz`,
          `records-platform-client-${API_VERSION}.tgz`,
          `records_client-${API_VERSION}-py3-none-any.whl`,
        ].sort(),
      );
      const typescript = await entries(join(out, `records-platform-client-${API_VERSION}.tgz`));
      expect(typescript).toEqual(
        expect.arrayContaining([
          'package/package.json',
          'package/dist/index.js',
          'package/dist/esm/index.js',
        ]),
      );
      expect(typescript.filter((line) => line.startsWith('package/build/'))).toEqual([]);
      const python = await entries(join(out, `records_client-${API_VERSION}-py3-none-any.whl`));
      expect(python.some((line) => line.startsWith('records_client/api/records_api.py '))).toBe(true);
      const php = await entries(join(out, `records-client-php-${API_VERSION}.tar.gz`));
      expect(php).toEqual(expect.arrayContaining(['php/composer.json', 'php/src/Api/RecordsApi.php']));
      expect(php.filter((line) => line.startsWith('php/vendor/'))).toEqual([]);
      const go = await entries(join(out, `records-client-go-${API_VERSION}.tar.gz`));
      expect(go).toEqual(expect.arrayContaining(['go/go.mod', 'go/go.sum', 'go/api_records.go']));
      expect(go).not.toContain('go/scenario/scenario');
    },
    BUILD_TIMEOUT,
  );
});

/** What every scenario prints: the same story told through each client. */
const EXPECTED_SCENARIO = (language: string) => ({
  space: `Scenario ${language}`,
  module: 'Tickets',
  field: 'status',
  // Printer was created open and closed afterwards; Router was created closed.
  closed: ['Printer', 'Router'],
  // The field's changes to Printer, newest first: its creation counts as a change from null.
  history: [
    ['open', 'closed'],
    [null, 'open'],
  ],
  // What an access token from the authorization-code exchange (scope record:read) lists in the module.
  oauth: { tokenType: 'Bearer', scope: 'record:read', records: ['Printer', 'Router', 'Scanner'] },
});

interface ClientUnderTest {
  language: string;
  /** Builds the client and its scenario; returns how to run the scenario. */
  build(): Promise<{ command: string; args: string[]; cwd: string }>;
}

const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

const CLIENTS_UNDER_TEST: ClientUnderTest[] = [
  {
    language: 'typescript',
    async build() {
      const dir = join(CLIENTS_DIR, 'typescript');
      await step(process.execPath, [TSC, '-p', '.'], dir);
      await step(process.execPath, [TSC, '-p', 'scenario'], dir);
      return { command: process.execPath, args: ['build/scenario/scenario.js'], cwd: dir };
    },
  },
  {
    language: 'python',
    async build() {
      const dir = join(CLIENTS_DIR, 'python');
      const python = join(dir, '.venv', 'bin', 'python');
      if (!existsSync(python))
        throw new Error(
          'clients/python/.venv is missing: run .ci/client-toolchains.sh (it prepares the venv)',
        );
      // No build isolation: the venv's setuptools builds it, so nothing is fetched when .ci/run prepared the venv.
      await step(
        python,
        ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-build-isolation', '.'],
        dir,
      );
      return { command: python, args: ['scenario.py'], cwd: dir };
    },
  },
  {
    language: 'php',
    async build() {
      const dir = join(CLIENTS_DIR, 'php');
      await step('composer', ['dump-autoload', '--no-interaction', '--quiet'], dir, {
        COMPOSER_ALLOW_SUPERUSER: '1',
      });
      return { command: 'php', args: ['scenario.php'], cwd: dir };
    },
  },
  {
    language: 'go',
    async build() {
      const dir = join(CLIENTS_DIR, 'go');
      await step('go', ['vet', './...'], dir);
      await step('go', ['build', '-o', 'scenario/scenario', './scenario'], dir);
      return { command: join(dir, 'scenario', 'scenario'), args: [], cwd: dir };
    },
  },
];

for (const client of CLIENTS_UNDER_TEST) {
  describeContract(
    'typed clients',
    `${client.language} scenario`,
    toolchains('a platform started here'),
    () => {
      let platform: TestPlatform;

      beforeAll(async () => {
        platform = await startPlatform();
      });

      afterAll(async () => {
        await platform?.stop();
      });

      test(
        `the ${client.language} client builds and runs its scenario against the platform`,
        async () => {
          expectGenerated();
          const scenario = await client.build();
          const { stdout } = await step(scenario.command, scenario.args, scenario.cwd, {
            RECORDS_URL: platform.api,
            RECORDS_TOKEN: ADMIN_TOKEN,
          });
          const lines = stdout.trim().split('\n');
          expect(JSON.parse(lines[lines.length - 1]!)).toEqual(EXPECTED_SCENARIO(client.language));
        },
        BUILD_TIMEOUT,
      );
    },
  );
}
