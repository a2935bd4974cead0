import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_VERSION } from '../../contracts/api/index';

/** The minor release after the current one (what `release` is asked to make). */
const NEXT = API_VERSION.replace(
  /^(\d+)\.(\d+)\.\d+$/,
  (_all, major: string, minor: string) => `${major}.${Number(minor) + 1}.0`,
);

const REPO = join(__dirname, '..', '..');

/** Runs bin/openapi.ts as `npm run …` does, on the checkout at `root`. */
function openapi(root: string, ...args: string[]) {
  return spawnSync(process.execPath, ['--require', 'tsx/cjs', join(REPO, 'bin', 'openapi.ts'), ...args], {
    cwd: REPO,
    env: { ...process.env, OPENAPI_ROOT: root },
    encoding: 'utf8',
  });
}

/** The files the command reads and edits, copied into a scratch checkout. */
function scratchCheckout(): string {
  const root = mkdtempSync(join(tmpdir(), 'openapi-tool-'));
  mkdirSync(join(root, 'contracts', 'api'), { recursive: true });
  cpSync(join(REPO, 'openapi'), join(root, 'openapi'), { recursive: true });
  cpSync(join(REPO, 'package.json'), join(root, 'package.json'));
  cpSync(join(REPO, 'CHANGELOG.md'), join(root, 'CHANGELOG.md'));
  cpSync(join(REPO, 'contracts', 'api', 'index.ts'), join(root, 'contracts', 'api', 'index.ts'));
  return root;
}

let root: string;
beforeEach(() => {
  root = scratchCheckout();
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

test('check passes on the committed document and fails, naming the change, when it is stale', () => {
  expect(openapi(root, 'check').status).toBe(0);
  const path = join(root, 'openapi', `${API_VERSION}.json`);
  const document = JSON.parse(readFileSync(path, 'utf8')) as { paths: Record<string, unknown> };
  delete document.paths['/record/{recordId}'];
  writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`);
  const stale = openapi(root, 'check');
  expect(stale.status).toBe(1);
  expect(stale.stderr).toContain('added GET /record/{recordId}');
  expect(stale.stderr).toContain('npm run openapi');
});

test('diff prints what changed between two versions', () => {
  const older = JSON.parse(readFileSync(join(root, 'openapi', `${API_VERSION}.json`), 'utf8')) as {
    paths: Record<string, Record<string, { deprecated?: boolean }>>;
  };
  delete older.paths['/label'];
  older.paths['/record/{recordId}']!.get!.deprecated = true;
  writeFileSync(join(root, 'openapi', '5.0.0.json'), JSON.stringify(older));
  const result = openapi(root, 'diff', '5.0.0', API_VERSION);
  expect(result.status).toBe(0);
  expect(result.stdout).toContain('added GET /label');
  expect(result.stdout).toContain('no longer deprecated: GET /record/{recordId}');
  expect(openapi(root, 'diff', API_VERSION, API_VERSION).stdout).toContain('no changes');
});

test('release makes a new version current in one command: document, version, changelog', () => {
  const result = openapi(root, 'release', NEXT);
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  expect(result.stdout).toContain('`npm run release:clients` builds the clients of this version');
  const released = JSON.parse(readFileSync(join(root, 'openapi', `${NEXT}.json`), 'utf8')) as {
    info: { version: string };
  };
  expect(released.info.version).toBe(NEXT);
  expect(readFileSync(join(root, 'contracts', 'api', 'index.ts'), 'utf8')).toContain(
    `API_VERSION = '${NEXT}'`,
  );
  expect((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version).toBe(
    NEXT,
  );
  const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
  expect(changelog.indexOf(`## ${NEXT}`)).toBeLessThan(changelog.indexOf(`## ${API_VERSION}`));
  expect(changelog).toContain(`## ${NEXT}\n\n- No public surface changes.`);
});

test('release refuses a malformed or the current version', () => {
  for (const version of [NEXT.replace(/\.0$/, ''), `v${NEXT}`, `0${NEXT}`, API_VERSION]) {
    const result = openapi(root, 'release', version);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/usage|already the current/);
  }
  expect(readFileSync(join(root, 'contracts', 'api', 'index.ts'), 'utf8')).toBe(
    readFileSync(join(REPO, 'contracts', 'api', 'index.ts'), 'utf8'),
  );
  expect(readFileSync(join(root, 'CHANGELOG.md'), 'utf8')).toBe(
    readFileSync(join(REPO, 'CHANGELOG.md'), 'utf8'),
  );
});
