import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited, freePort, output, waitUntilReady } from '../support/child-platform';

/**
 * The production image runs the compiled build (`npm run build`: tsc with tsconfig.build.json into dist/),
 * not the sources through tsx. This builds it as the Dockerfile's build stage does and starts the platform
 * from dist/ with a preload that refuses to load tsx or any `.ts` file, so a worker thread still pointed at a
 * TypeScript entry, or a runtime import of tsx, fails here rather than in the image.
 */
jest.setTimeout(240_000);

const ROOT = join(__dirname, '..', '..');
const TOKEN = 'rpt_compiled-build-admin-token-0123456789';
const NO_TYPESCRIPT_AT_RUN_TIME = `
const Module = require('node:module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const file = resolve.call(this, request, ...rest);
  if (/^tsx(\\/|$)/.test(request) || file.endsWith('.ts')) throw new Error('the build loaded ' + request);
  return file;
};
`;

let workDir: string;
let child: ChildProcess | undefined;
let logs: () => string = () => '';

beforeAll(() => {
  workDir = mkdtempSync(join(tmpdir(), 'records-platform-build-'));
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    stdio: 'pipe',
  });
});

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await exited(child);
  }
  rmSync(workDir, { recursive: true, force: true });
});

test('the build emits the entry points, the worker-thread entries and the manifest the version is read from', () => {
  for (const file of [
    'bin/platform.js',
    'bin/service.js',
    'bin/replay.js',
    'bin/projections-thread.js',
    'bin/decoder-thread.js',
    'bin/checkpoint-thread.js',
    'bin/read-thread.js',
    'bin/expression-process.js',
    'package.json',
  ]) {
    expect({ file, exists: existsSync(join(ROOT, 'dist', file)) }).toEqual({ file, exists: true });
  }
});

/** The compiled files under `dir`, recursively. */
function compiledFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? compiledFiles(join(dir, entry.name))
      : entry.name.endsWith('.js')
        ? [join(dir, entry.name)]
        : [],
  );
}

test('every package the build requires is a production dependency (the image installs only those)', () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const required = new Set<string>();
  for (const file of compiledFiles(join(ROOT, 'dist'))) {
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/\brequire\("([^".][^"]*)"\)/g)) {
      if (specifier!.startsWith('node:')) continue;
      const parts = specifier!.split('/');
      required.add(specifier!.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!);
    }
  }
  expect(required.size).toBeGreaterThan(0);
  expect([...required].filter((name) => !(name in manifest.dependencies))).toEqual([]);
});

test('node dist/bin/platform.js serves the API with its threads, loading no TypeScript', async () => {
  const preload = join(workDir, 'no-typescript.js');
  writeFileSync(preload, NO_TYPESCRIPT_AT_RUN_TIME);
  const port = await freePort();
  child = spawn(process.execPath, ['--require', preload, join(ROOT, 'dist', 'bin', 'platform.js')], {
    cwd: workDir,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: join(workDir, 'data'),
      ADMIN_TOKEN: TOKEN,
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  logs = output(child);
  const url = `http://127.0.0.1:${port}`;
  // Ready means every projection caught up: the projections thread (and the WAL checkpointer) run.
  await waitUntilReady(url).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${logs()}`);
  });

  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  const headers = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
  const created = await fetch(`${url}/api/space`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'Built' }),
  });
  expect(created.status).toBe(201);
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  expect(created.headers.get('x-version')).toBe(manifest.version);
  const { id } = (await created.json()) as { id: number };
  const read = await fetch(`${url}/api/space/${id}`, { headers });
  expect(read.status).toBe(200);
  expect(await read.json()).toMatchObject({ id, name: 'Built' });
  // A list runs on a read thread: its compiled entry must start too.
  const listed = await fetch(`${url}/api/space?filter=name=Built`, { headers });
  expect(listed.status).toBe(200);
  expect(await listed.json()).toMatchObject({ items: [{ id, name: 'Built' }], meta: { total: 1 } });

  child.kill('SIGTERM');
  expect(await exited(child)).toBe(0);
  expect(logs()).not.toMatch(/the build loaded/);
});
