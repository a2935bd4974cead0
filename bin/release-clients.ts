/**
 * The typed clients of the current API version as release artifacts (`npm run release:clients`): generates
 * clients/ from openapi/<version>.json as `npm run clients` does, builds each client and packs it into
 * release/clients/ (not committed):
 *   records-platform-client-<version>.tgz       TypeScript, an npm package (`npm install <file>`)
 *   records_client-<version>-py3-none-any.whl   Python, a wheel (`pip install <file>`)
 *   records-client-php-<version>.tar.gz         PHP, the Composer package's folder (a path repository)
 *   records-client-go-<version>.tar.gz          Go, the module's folder (`go mod edit -replace`)
 * It needs what .ci/client-toolchains.sh installs (the generator jar, Java, the Python venv, Go).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { API_VERSION } from '../contracts/api/index';
import { CLIENTS_DIR, writeClients } from './generate-clients';

const exec = promisify(execFile);
const ROOT = join(__dirname, '..');
export const RELEASE_DIR = join(ROOT, 'release', 'clients');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

async function step(command: string, args: readonly string[], cwd: string): Promise<void> {
  try {
    await exec(command, args, { cwd, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${command} ${args.join(' ')} (in ${cwd}) failed: ${failed.message}\n${failed.stderr ?? ''}`,
    );
  }
}

/** Builds the generated clients under clients/ and writes one artifact per client into `outDir`. */
export async function packClients(outDir: string): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  const typescript = join(CLIENTS_DIR, 'typescript');
  // The platform's own tsc, CommonJS then ESM as the package's build script does: its `prepare` script would
  // install another TypeScript first, hence --ignore-scripts.
  await step(process.execPath, [TSC, '-p', '.'], typescript);
  await step(process.execPath, [TSC, '-p', 'tsconfig.esm.json'], typescript);
  // The scenario's compiled output (build/, from the clients' test) is not the package's.
  rmSync(join(typescript, 'build'), { recursive: true, force: true });
  await step('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', outDir], typescript);

  const python = join(CLIENTS_DIR, 'python');
  const venvPython = join(python, '.venv', 'bin', 'python');
  if (!existsSync(venvPython))
    throw new Error('clients/python/.venv is missing: run .ci/client-toolchains.sh (it prepares the venv)');
  await step(
    venvPython,
    ['-m', 'pip', 'wheel', '--quiet', '--no-deps', '--no-build-isolation', '--wheel-dir', outDir, '.'],
    python,
  );

  const php = join(outDir, `records-client-php-${API_VERSION}.tar.gz`);
  await step('tar', ['-czf', php, '--exclude=php/vendor', '--exclude=php/composer.lock', 'php'], CLIENTS_DIR);

  await step('go', ['build', './...'], join(CLIENTS_DIR, 'go'));
  const go = join(outDir, `records-client-go-${API_VERSION}.tar.gz`);
  await step('tar', ['-czf', go, '--exclude=go/scenario/scenario', 'go'], CLIENTS_DIR);

  return readdirSync(outDir).sort();
}

async function main(): Promise<void> {
  await writeClients();
  rmSync(RELEASE_DIR, { recursive: true, force: true });
  const artifacts = await packClients(RELEASE_DIR);
  process.stdout.write(
    `clients of API ${API_VERSION} in release/clients/:\n${artifacts.map((file) => `  ${file}\n`).join('')}`,
  );
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`release:clients: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
