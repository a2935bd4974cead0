import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_TOKEN, startPlatform, type TestPlatform } from '../support/platform';

/**
 * The README's quick start is a script: the fenced block after the marker comment is run here as written,
 * with bash and curl, against a freshly started platform, so the README cannot drift from what works. The
 * block reads the token and the base address from TOKEN and BASE, as a reader sets them.
 */
const README = join(__dirname, '..', '..', 'README.md');
const MARKER = '<!-- test/e2e/readme-quick-start.test.ts runs the next block as written';

/** The fenced `sh` block that follows the marker (the marker must be there, followed by such a block). */
function quickStartBlock(markdown: string): string {
  const at = markdown.indexOf(MARKER);
  if (at < 0) throw new Error(`README.md has no quick-start marker "${MARKER}"`);
  const fence = /```sh\n([\s\S]*?)\n```/.exec(markdown.slice(at));
  if (!fence) throw new Error('README.md has no ```sh block after the quick-start marker');
  return fence[1]!;
}

function missingTool(): string | undefined {
  for (const tool of ['bash', 'curl']) {
    if (spawnSync(tool, ['--version']).error) return `${tool} is not installed`;
  }
  return undefined;
}

/**
 * Runs the block with bash (no startup files: a reader's shell settings are not part of the README) while this
 * process keeps serving the platform, so never synchronously.
 */
function runBlock(
  block: string,
  options: readonly string[],
  env: Record<string, string>,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['--norc', '--noprofile', ...options, '-c', block], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 30_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

const missing = missingTool();

if (missing) {
  test.todo(`README quick start not run: ${missing} (the block is a bash script of curl commands)`);
} else {
  jest.setTimeout(60_000);
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startPlatform();
  });
  afterAll(async () => platform.stop());

  test('the quick-start block runs as written on a fresh platform, every command succeeding', async () => {
    const block = quickStartBlock(readFileSync(README, 'utf8'));
    // -e: any failing command (curl --fail-with-body on a 4xx/5xx) fails the script, as a reader would see.
    const result = await runBlock(block, ['-e', '-o', 'pipefail'], {
      TOKEN: ADMIN_TOKEN,
      BASE: platform.api,
    });
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });

    const answers = result.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const curlCommands = block.split('\n').filter((line) => /^api /.test(line));
    expect(answers).toHaveLength(curlCommands.length);
    expect(answers[0]).toMatchObject({ id: 1, name: 'Sales' });
    expect(answers[2]).toMatchObject({ moduleId: 1, key: 'amount', type: 'decimal' });
    expect(answers[3]).toMatchObject({ moduleId: 1, name: 'Acme', fields: { amount: 1200 } });
    expect(answers.at(-1)).toMatchObject({
      items: [{ name: 'Acme', fields: { amount: 1200 } }],
      meta: { total: 1 },
    });
  });

  test('the block stops at the first failing command and says why', async () => {
    const block = quickStartBlock(readFileSync(README, 'utf8'));
    const result = await runBlock(block, ['-e', '-o', 'pipefail'], {
      TOKEN: 'rpt_not-a-token-of-this-platform-000000',
      BASE: platform.api,
    });
    expect(result.status).not.toBe(0);
    expect(result.stdout).toContain('E4010');
  });

  test('without TOKEN the block refuses to start, naming it', async () => {
    const block = quickStartBlock(readFileSync(README, 'utf8'));
    const result = await runBlock(block, ['-e'], { BASE: platform.api });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('TOKEN');
    expect(result.stdout).toBe('');
  });
}
