import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited, freePort, spawnBin, waitUntilReady } from '../test/support/child-platform';

/** The platform in its own process for the HTTP benchmarks, and the calls they make to it. */
export const TOKEN = 'rpt_bench-token-0123456789abcdefghijkl';
export const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

export interface Server {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** The platform of this checkout, or of the checkout at `root` (a benchmark comparing with an older tree). */
export async function startServer(
  dataDir: string,
  env: Record<string, string> = {},
  root?: string,
): Promise<Server> {
  const port = await freePort();
  const child = spawnBin(
    'platform.ts',
    [],
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ADMIN_TOKEN: TOKEN,
      LOG_LEVEL: 'warn',
      RELAY: 'true',
      ...env,
    },
    root,
  );
  // The platform's warnings go to the bench's stderr: a pipe nobody reads fills, and the platform stops.
  child.stdout?.pipe(process.stderr);
  child.stderr?.pipe(process.stderr);
  return serverOf(child, port);
}

/** Waits until the read models include `position` (the last write's `X-Position`). */
export async function waitUntilVisible(url: string, position: bigint): Promise<void> {
  for (;;) {
    const visible = await fetch(`${url}/api/record?limit=1`, {
      headers: { ...headers, 'x-min-position': String(position) },
    });
    await visible.arrayBuffer();
    if (visible.status === 200) return;
    // 504: not there yet within the server's wait; anything else is a failure.
    if (visible.status !== 504) throw new Error(`waiting for the read models answered ${visible.status}`);
  }
}

/**
 * Waits until every projection has caught up with the event store (`projection_lag_positions` all 0 on
 * `/metrics`): a read measured while other projections still work through a load measures their CPU too.
 */
export async function waitUntilProjectionsIdle(url: string, timeoutMs = 30 * 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const lags = [...metrics.matchAll(/^projection_lag_positions\{[^}]*\} (\d+)$/gm)].map((match) =>
      Number(match[1]),
    );
    if (lags.length === 0) throw new Error('projection_lag_positions missing from /metrics');
    if (lags.every((lag) => lag === 0)) return;
    if (Date.now() > deadline) throw new Error(`the projections did not catch up: lags ${lags.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

export async function serverOf(child: ChildProcess, port: number): Promise<Server> {
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(url);
  return {
    url,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exited(child);
    },
  };
}

export function rssMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
  return match ? Number(match[1]) / 1024 : NaN;
}

/**
 * CPU time (user and system, in ms) that process `pid` has used, or only its main thread with `mainThread` (Linux:
 * /proc, in clock ticks of 1/100 s).
 */
export function cpuMs(pid: number, options: { mainThread?: boolean } = {}): number {
  const stat = readFileSync(
    options.mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`,
    'utf8',
  );
  // The fields after the command's name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export async function api<T>(
  url: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${url}/api${path}`, {
    method,
    headers,
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as T };
}

/** `POST /record/bulk` of `items` as the bench's administrator; throws unless every one was created. Its `X-Position`. */
export async function bulkCreate(url: string, items: readonly unknown[]): Promise<bigint> {
  const response = await fetch(`${url}/api/record/bulk`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ items }),
  });
  const answer = (await response.json()) as { meta?: { failed?: number } };
  if (response.status !== 200 || answer.meta?.failed !== 0)
    throw new Error(`bulk create answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
  return BigInt(response.headers.get('x-position') ?? '0');
}

/** bench/http.ts's `POST /record` load: `body` (from `benchModule`) sent by `connections` for `durationS`. */
export function postRecordLoad(
  url: string,
  body: string,
  connections: number,
  durationS: number,
): Promise<autocannon.Result> {
  return load({ url: `${url}/api/record`, method: 'POST', headers, body, connections, duration: durationS });
}

export function load(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/** Runs a benchmark against a fresh platform process in a throw-away data dir; a failure exits 1. */
export function runAgainstPlatform(dirPrefix: string, run: (server: Server) => Promise<void>): void {
  (async () => {
    const dataDir = mkdtempSync(join(tmpdir(), dirPrefix));
    const server = await startServer(dataDir);
    try {
      await run(server);
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  })().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}

/** A JSON call to the API of `url` as the bench's administrator; throws on an answer that is not 2xx. */
export function apiOf(url: string) {
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${url}/api${path}`, {
      method,
      headers,
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
}

/**
 * The module bench/http.ts writes records into (a number, a select and an email field), and the body of one
 * record for it.
 */
export async function benchModule(url: string): Promise<{ module: { body: { id: number } }; body: string }> {
  const space = await api<{ id: number }>(url, 'POST', '/space', { name: 'Bench' });
  const module = await api<{ id: number }>(url, 'POST', '/module', { spaceId: space.body.id, name: 'Bench' });
  for (const field of [
    { key: 'amount', type: 'number' },
    { key: 'stage', type: 'select', config: { options: ['lead', 'customer'] } },
    { key: 'owner', type: 'email' },
  ]) {
    const created = await api(url, 'POST', '/field', { moduleId: module.body.id, name: field.key, ...field });
    if (created.status !== 201) throw new Error(`creating field ${field.key} answered ${created.status}`);
  }
  const body = JSON.stringify({
    moduleId: module.body.id,
    name: 'Bench record',
    fields: { amount: 1200, stage: 'lead', owner: 'someone@example.com' },
  });
  return { module, body };
}
