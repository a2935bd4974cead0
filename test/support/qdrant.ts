import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { QdrantClient } from '@qdrant/js-client-rest';
import { describeContract, reportAdapter, type AdapterRun } from './adapter-report';
import { freePort } from './child-platform';

const run = promisify(execFile);

/** How the suites that need the Qdrant of `QDRANT_URL` run: against it, or skipped without it. */
export function qdrantAvailability(): AdapterRun {
  const url = process.env.QDRANT_URL;
  return url ? { kind: 'real-server', where: url } : { kind: 'skipped', reason: 'QDRANT_URL not set' };
}

/**
 * A collection prefix of its own for one test platform or suite: every suite that uses the shared server of
 * `QDRANT_URL` runs beside the others (jest's workers) and must not see their collections.
 */
export function testCollectionPrefix(): string {
  return `test_${randomUUID().slice(0, 8)}_`;
}

/** Deletes the collections whose names begin with `prefix` (what one suite made on the shared server). */
export async function dropCollections(url: string, prefix: string): Promise<void> {
  const client = new QdrantClient({ url, checkCompatibility: false });
  const { collections } = await client.getCollections();
  for (const { name } of collections) if (name.startsWith(prefix)) await client.deleteCollection(name);
}

/**
 * The Qdrant server built for the tests (`start.sh` beside it): `QDRANT_SERVER_DIR`, or the shared build next
 * to the repository (`../shared/servers/qdrant`).
 */
export function qdrantStartScript(): string {
  const folder =
    process.env.QDRANT_SERVER_DIR ?? join(__dirname, '..', '..', '..', 'shared', 'servers', 'qdrant');
  return join(resolve(folder), 'start.sh');
}

/**
 * Declares a suite that starts (and stops) Qdrant servers of its own. Without the server's start script it is
 * skipped with the reason, except in CI (`CI=true`), where a missing server is a failure: CI must run it.
 */
export function describeWithQdrantServer(
  port: string,
  adapter: string,
  suite: (script: string) => void,
): void {
  const script = qdrantStartScript();
  if (existsSync(script)) {
    describeContract(port, adapter, { kind: 'real-server', where: `its own server from ${script}` }, () =>
      suite(script),
    );
    return;
  }
  const reason = `no Qdrant server at ${script} (set QDRANT_SERVER_DIR to the folder of its start.sh)`;
  if (process.env.CI !== 'true') {
    describeContract(port, adapter, { kind: 'skipped', reason }, () => undefined);
    return;
  }
  reportAdapter(port, adapter, { kind: 'skipped', reason: `FAILED in CI: ${reason}` });
  describe(`${port} — ${adapter}`, () => {
    test('the Qdrant server CI runs this suite on is there', () => {
      throw new Error(`CI=true but ${reason}`);
    });
  });
}

export interface QdrantServer {
  readonly url: string;
  /** Ends the server at once (SIGKILL to its process group), as a crash or a pulled plug would. */
  kill(): Promise<void>;
  /** Starts it again on the same storage and ports. */
  restart(): Promise<void>;
  /** Stops it (SIGTERM), if it runs. */
  stop(): Promise<void>;
}

/** Whether the process runs (a zombie nobody has reaped yet does not: the server's parent is gone). */
function isRunning(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

async function ended(pid: number, signal: NodeJS.Signals): Promise<void> {
  if (!isRunning(pid)) return;
  process.kill(-pid, signal);
  while (isRunning(pid)) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** A Qdrant server of the caller's own, on `storage` and free ports, started with `script` (start.sh). */
export async function startQdrantServer(script: string, storage: string): Promise<QdrantServer> {
  const httpPort = await freePort();
  let grpcPort = await freePort();
  while (grpcPort === httpPort) grpcPort = await freePort();
  let pid = 0;
  const start = async () => {
    const { stdout } = await run(script, [storage, String(httpPort), String(grpcPort)]);
    const started = /PID=(\d+)/.exec(stdout);
    if (!started) throw new Error(`start.sh printed no PID: ${stdout}`);
    pid = Number(started[1]);
  };
  await start();
  return {
    url: `http://127.0.0.1:${httpPort}`,
    kill: () => ended(pid, 'SIGKILL'),
    restart: start,
    stop: () => ended(pid, 'SIGTERM'),
  };
}
