import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { configSchema, loadConfig } from '../../infra/config';
import { SERVICES } from '../../bin/services';
import { GATEWAY_CONFIG } from '../support/gateway';

/**
 * docker-compose.yml cannot be run here (no Docker engine), so what can be checked without one is checked
 * here: the platform services start with commands and settings the code accepts, and every name one
 * service uses for another (hosts in URLs, the gateway's upstreams, depends_on) is a service of the file.
 * The production-stack e2e test runs the same services and gateway configuration as processes.
 */
const ROOT = join(__dirname, '..', '..');

interface ComposeService {
  build?: string;
  image?: string;
  command?: string[];
  environment?: Record<string, string | number>;
  depends_on?: Record<string, unknown> | string[];
  volumes?: string[];
  ports?: string[];
}

const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
};
const services = compose.services;
const platformServices = Object.entries(services).filter(([, service]) => service.build === '.');

/** Compose's `${NAME:-default}` with nothing set in the shell: the default (empty counts as unset). */
function interpolate(value: string | number): string {
  return String(value).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');
}

function environmentOf(service: ComposeService): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([name, value]) => [name, interpolate(value)]),
  );
}

test('the platform services run the compiled bin/service.ts with a service it knows, built by the Dockerfile', () => {
  expect(platformServices.map(([name]) => name).sort()).toEqual(Object.keys(SERVICES).sort());
  for (const [name, service] of platformServices) {
    expect(service.command).toEqual(['dist/bin/service.js', name]);
  }
  expect(existsSync(join(ROOT, 'Dockerfile'))).toBe(true);
  expect(existsSync(join(ROOT, 'bin', 'service.ts'))).toBe(true);
  // dist/bin/service.js is what the build makes of bin/service.ts.
  const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as {
    compilerOptions: { outDir: string; rootDir: string; noEmit: boolean };
    include: string[];
  };
  expect(build.compilerOptions).toMatchObject({ outDir: 'dist', rootDir: '.', noEmit: false });
  expect(build.include).toContain('bin');
});

/** The Dockerfile's stages: each `FROM` line and the instructions up to the next one (continuations joined). */
function dockerfileStages(): { from: string; instructions: string[] }[] {
  const lines = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: { from: string; instructions: string[] }[] = [];
  for (const line of lines) {
    if (line.startsWith('FROM ')) stages.push({ from: line, instructions: [] });
    else stages.at(-1)?.instructions.push(line);
  }
  return stages;
}

test('the image runs the compiled build without dev dependencies, as a non-root user, with a health check', () => {
  const stages = dockerfileStages();
  const runtime = stages.at(-1)!;
  const copiedFrom = (instruction: string) => /--from=(\S+)/.exec(instruction)?.[1];
  const stageNamed = (name: string) => stages.find((stage) => stage.from.endsWith(` AS ${name}`));

  // The build stage compiles with tsconfig.build.json (npm run build) and the runtime copies its dist/.
  const distCopy = runtime.instructions.find((line) => line.startsWith('COPY') && line.includes('/app/dist'));
  const buildStage = stageNamed(copiedFrom(distCopy ?? '') ?? '');
  expect(buildStage?.instructions).toContain('RUN npm run build');
  const scripts = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  ).scripts;
  expect(scripts.build).toBe('tsc -p tsconfig.build.json');

  // node_modules come from a stage that installed the lock without dev dependencies.
  const modulesCopy = runtime.instructions.find(
    (line) => line.startsWith('COPY') && line.includes('node_modules'),
  );
  const depsStage = stageNamed(copiedFrom(modulesCopy ?? '') ?? '');
  expect(depsStage?.instructions.some((line) => /^RUN npm ci --omit=dev\b/.test(line))).toBe(true);

  const user = runtime.instructions.filter((line) => line.startsWith('USER '));
  expect(user.length).toBeGreaterThan(0);
  expect(user.at(-1)).not.toMatch(/^USER (root|0)(:|$)/);

  const healthcheck = runtime.instructions.find((line) => line.startsWith('HEALTHCHECK '));
  expect(healthcheck).toMatch(/CMD \["node",.*\/healthz/);

  // What the container runs is JavaScript from dist/, without tsx.
  const entry = runtime.instructions.filter((line) => /^(ENTRYPOINT|CMD) /.test(line)).join(' ');
  expect(entry).not.toMatch(/tsx|\.ts"/);
  expect(entry).toContain('"dist/bin/platform.js"');
});

test('every setting the platform services get is one the configuration knows, and it loads', () => {
  const known = new Set(Object.keys(configSchema.shape));
  for (const [name, service] of platformServices) {
    const environment = environmentOf(service);
    expect({ name, unknown: Object.keys(environment).filter((key) => !known.has(key)) }).toEqual({
      name,
      unknown: [],
    });
    const config = loadConfig(environment);
    expect(config).toMatchObject({ EVENT_STORE: 'eventstoredb', READ_STORE: 'mongodb', STREAM: 'kafka' });
  }
});

test('the hosts in the services’ URLs, their depends_on and the gateway’s upstreams are services of the file', () => {
  for (const [, service] of platformServices) {
    const environment = environmentOf(service);
    const hosts = [
      new URL(environment.ESDB_URL!).hostname,
      new URL(environment.MONGO_URL!).hostname,
      new URL(environment.QDRANT_URL!).hostname,
      ...environment.KAFKA_BROKERS!.split(',').map((broker) => broker.split(':')[0]!),
    ];
    for (const host of hosts) expect(Object.keys(services)).toContain(host);
    const dependsOn = Array.isArray(service.depends_on)
      ? service.depends_on
      : Object.keys(service.depends_on ?? {});
    for (const dependency of dependsOn) expect(Object.keys(services)).toContain(dependency);
  }
  // The broker advertises the address the services are given.
  const brokers = environmentOf(platformServices[0]![1]).KAFKA_BROKERS!;
  expect(String(services.kafka?.environment?.KAFKA_ADVERTISED_LISTENERS)).toBe(`PLAINTEXT://${brokers}`);

  const gateway = services.gateway!;
  const mounted = gateway.volumes!.map((volume) => volume.split(':')[0]!);
  expect(mounted.map((source) => join(ROOT, source))).toContain(GATEWAY_CONFIG);
  const upstreams = [...readFileSync(GATEWAY_CONFIG, 'utf8').matchAll(/server ([a-z-]+):(\d+);/g)];
  expect(upstreams.map(([, host]) => host).sort()).toEqual(['command-api', 'query-api']);
  const port = String(configSchema.shape.PORT.parse(undefined));
  for (const [, host, upstreamPort] of upstreams) {
    expect(services[host!]?.build).toBe('.');
    expect(upstreamPort).toBe(environmentOf(services[host!]!).PORT ?? port);
  }
});

test('the mail gateway passes SMTP to the integrators’ listener port, with the PROXY header they expect', () => {
  const gateway = services['mail-gateway']!;
  const mounted = gateway.volumes!.map((volume) => volume.split(':')[0]!);
  const configFile = join(ROOT, 'infra', 'docker', 'mail-gateway.nginx.conf');
  expect(mounted.map((source) => join(ROOT, source))).toContain(configFile);
  const config = readFileSync(configFile, 'utf8');
  const upstreams = [...config.matchAll(/server ([a-z-]+):(\d+);/g)].map(([, host, port]) => ({
    host,
    port,
  }));
  const integrator = environmentOf(services.integrator!);
  expect(upstreams).toEqual([
    {
      host: 'integrator',
      port: integrator.SMTP_PORT ?? String(configSchema.shape.SMTP_PORT.parse(undefined)),
    },
  ]);
  expect(config).toMatch(/proxy_protocol on;/);
  expect(loadConfig(integrator)).toMatchObject({ SMTP_PROXY_PROTOCOL: true, SMTP_ENABLED: true });
  expect(gateway.ports).toEqual(['${MAIL_PORT:-25}:25']);
});
