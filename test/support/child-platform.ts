import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * Runs a `bin/` entry point as its own process (so a test can kill it with SIGKILL); `root` another checkout's
 * (a benchmark comparing with an older tree).
 */
export function spawnBin(
  script: string,
  args: readonly string[],
  env: Record<string, string>,
  root = ROOT,
): ChildProcess {
  return spawn(
    process.execPath,
    ['--require', require.resolve('tsx/cjs'), join(root, 'bin', script), ...args],
    {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
}

export async function waitUntilReady(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} not ready within ${timeoutMs} ms`);
}

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

export function output(child: ChildProcess): () => string {
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return () => text;
}

/**
 * Starts one service (`npm run service -- <name>`) as its own process with `env` and waits until it is
 * ready; `children` gets the process (to stop it after the tests). Its URL.
 */
export async function startServiceProcess(
  name: string,
  env: Record<string, string>,
  children: ChildProcess[],
): Promise<string> {
  const port = await freePort();
  const child = spawnBin('service.ts', [name], { PORT: String(port), HOST: '127.0.0.1', ...env });
  children.push(child);
  const logs = output(child);
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(url).catch((error: unknown) => {
    throw new Error(`${name}: ${String(error)}\n${logs()}`);
  });
  return url;
}

/** `npm start` as its own process on `port` with `env`, once it is ready: the process and its URL. */
export async function startPlatformProcess(
  port: number,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawnBin('platform.ts', [], { PORT: String(port), HOST: '127.0.0.1', ...env });
  const logs = output(child);
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(url).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${logs()}`);
  });
  return { child, url };
}

/** An API call to a platform process with a bearer token: its JSON answer. */
export async function callApi<T>(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(`${url}/api${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return (await response.json()) as T;
}

/**
 * Calls to a platform process with `token`: `api(url, method, path, body?)` answers the JSON of a 2xx answer,
 * and throws naming the status and the body of any other.
 */
export function tokenApi(token: string) {
  return async <T>(url: string, method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${url}/api${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(body !== undefined && { 'Content-Type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
}
