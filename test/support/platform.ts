import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, type Running } from '../../bin/run';
import { EVERYTHING } from '../../bin/wiring';

/** An entity as the API answers it, and a list page. */
export interface Entity {
  id: number;
  [key: string]: unknown;
}
export interface Page<Item = Entity> {
  items: Item[];
  meta: { total: number; offset: number; limit: number };
}

export const ADMIN_TOKEN = 'rpt_test-admin-token-0123456789abcdef';

export interface TestPlatform {
  readonly url: string;
  readonly api: string;
  readonly dataDir: string;
  readonly running: Running;
  /** fetch against the API with the admin token (override headers per call). */
  call(
    method: string,
    path: string,
    options?: { body?: unknown; headers?: Record<string, string>; rawBody?: string },
  ): Promise<Response>;
  stop(): Promise<void>;
}

/** The whole platform in this process on embedded adapters, a fresh data dir, an ephemeral port. */
export async function startPlatform(env: Record<string, string> = {}): Promise<TestPlatform> {
  const dataDir = env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'records-platform-'));
  const running = await run(
    EVERYTHING,
    {
      PORT: '0',
      SMTP_PORT: '0',
      SEMANTIC_SEARCH: process.env.SEMANTIC_SEARCH ?? 'false',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
      ...env,
    },
    false,
  );
  const api = `${running.url}/api`;
  return {
    url: running.url,
    api,
    dataDir,
    running,
    call(method, path, options = {}) {
      const headers: Record<string, string> = { Authorization: `Bearer ${ADMIN_TOKEN}`, ...options.headers };
      let body: string | undefined = options.rawBody;
      if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers['Content-Type'] ??= 'application/json';
      }
      return fetch(`${api}${path}`, { method, headers, ...(body !== undefined && { body }) });
    },
    async stop() {
      await running.stop();
      if (!env.DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function json<T = Record<string, unknown>>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

/** The stores' files (databases with their WAL) that contain `text`: where a secret must never be. */
export function filesHolding(dataDir: string, text: string): string[] {
  return readdirSync(dataDir)
    .filter((name) => name.includes('.db'))
    .filter((name) => readFileSync(join(dataDir, name)).includes(text));
}
