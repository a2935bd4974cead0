import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exited, freePort, output } from './child-platform';

/** The compose stack's gateway configuration (nginx), as `docker compose up` mounts it. */
export const GATEWAY_CONFIG = join(__dirname, '..', '..', 'infra', 'docker', 'gateway.nginx.conf');

/** The nginx binary on this machine, or undefined (CI installs Debian's nginx-light). */
export function nginxBinary(): string | undefined {
  for (const candidate of ['nginx', '/usr/sbin/nginx']) {
    if (!spawnSync(candidate, ['-v']).error) return candidate;
  }
  return undefined;
}

/**
 * The compose gateway's server blocks with the container names swapped for loopback ports: each upstream
 * gets one `server` line per replica, and the gateway listens on `port`. Fails when the file no longer has
 * the shape this relies on, so a change to it cannot leave this test checking something else.
 */
export function gatewayConfigFor(upstreams: Record<string, readonly number[]>, port: number): string {
  let config = readFileSync(GATEWAY_CONFIG, 'utf8');
  for (const [name, ports] of Object.entries(upstreams)) {
    const line = new RegExp(`upstream ${name} \\{ server [a-z-]+:\\d+; \\}`);
    if (!line.test(config)) throw new Error(`gateway.nginx.conf has no upstream ${name} of one server`);
    const servers = ports.map((replica) => `server 127.0.0.1:${replica};`).join(' ');
    config = config.replace(line, `upstream ${name} { ${servers} }`);
  }
  if (!/listen 8080;/.test(config)) throw new Error('gateway.nginx.conf no longer listens on 8080');
  return config.replace('listen 8080;', `listen 127.0.0.1:${port};`);
}

export interface Gateway {
  readonly url: string;
  logs(): string;
  stop(): Promise<void>;
}

/** Runs nginx in the foreground with the compose gateway's configuration, all its files under `dir`. */
export async function startGateway(
  nginx: string,
  dir: string,
  upstreams: Record<string, readonly number[]>,
  port?: number,
): Promise<Gateway> {
  port ??= await freePort();
  mkdirSync(join(dir, 'temp'), { recursive: true });
  writeFileSync(join(dir, 'gateway.conf'), gatewayConfigFor(upstreams, port));
  const temp = (name: string) => `${name}_temp_path ${join(dir, 'temp', name)};`;
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'daemon off;',
      'master_process off;',
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${join(dir, 'error.log')} warn;`,
      'events { worker_connections 256; }',
      'http {',
      '  access_log off;',
      `  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp).join('\n  ')}`,
      `  include ${join(dir, 'gateway.conf')};`,
      '}',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(nginx, ['-p', dir, '-c', join(dir, 'nginx.conf')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs = output(child);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await fetch(`${url}/healthz`);
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`nginx did not start: ${logs()}${readFileSync(join(dir, 'error.log'), 'utf8')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    url,
    logs,
    async stop() {
      child.kill('SIGTERM');
      await exited(child);
    },
  };
}
