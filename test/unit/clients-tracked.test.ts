import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { CLIENTS } from '../../bin/generate-clients';

/**
 * The generated clients stay out of the repository (issue 30): under clients/ git tracks exactly the files
 * written by hand, the recipes' `handWritten` lists, and clients/.gitignore ignores the generator's output and
 * the builds' while leaving the hand-written files addable.
 */
const ROOT = join(__dirname, '..', '..');

function git(...args: string[]): { status: number | null; stdout: string } {
  const result = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout };
}

/** The paths among `paths` that clients/.gitignore ignores, tracked or not. */
function ignored(paths: readonly string[]): string[] {
  const { stdout } = git('check-ignore', '--no-index', ...paths);
  return stdout.split('\n').filter((line) => line !== '');
}

const handWritten = CLIENTS.flatMap(({ language, handWritten: files }) =>
  files.map((file) => `clients/${language}/${file}`),
);

test('git tracks exactly the hand-written files under clients/', () => {
  const tracked = git('ls-files', 'clients')
    .stdout.split('\n')
    .filter((line) => line !== '');
  expect(tracked.sort()).toEqual(['clients/.gitignore', ...handWritten].sort());
});

test('the hand-written files are not ignored', () => {
  expect(ignored(handWritten)).toEqual([]);
});

test('what generation and the builds write is ignored', () => {
  const written = [
    'clients/generated.json',
    'clients/typescript/src/apis/RecordsApi.ts',
    'clients/typescript/package.json',
    'clients/typescript/build/scenario/scenario.js',
    'clients/python/records_client/models/scenario.py',
    'clients/python/pyproject.toml',
    'clients/python/.venv/bin/python',
    'clients/php/src/Api/RecordsApi.php',
    'clients/php/vendor/autoload.php',
    'clients/go/api_records.go',
    'clients/go/go.mod',
    'clients/go/scenario/scenario',
  ];
  expect(ignored(written)).toEqual(written);
});
