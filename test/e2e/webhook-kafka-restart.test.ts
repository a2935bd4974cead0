import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeContract, type AdapterRun } from '../support/adapter-report';
import { exited, freePort, output, spawnBin, waitUntilReady, tokenApi } from '../support/child-platform';

/**
 * The integrator on a real Kafka broker that is restarted in the middle of a webhook flood, with two integrator
 * processes in one consumer group: the platform (with its own integrator) and `service integrator`. Every
 * request answered 200 runs exactly once, and both integrators run some. The broker is this test's own (its
 * storage kept across the restart), started with the CI's script, so the shared CI broker is left alone.
 */
jest.setTimeout(300_000);

const ROOT = join(__dirname, '..', '..');
const TOKEN = 'rpt_kafka-restart-token-0123456789abcd';

function availability(): AdapterRun {
  // The CI run has a broker (KAFKA_BROKERS) and so the broker's jars and Java; a local run without one skips.
  if (!process.env.KAFKA_BROKERS)
    return { kind: 'skipped', reason: 'KAFKA_BROKERS not set (CI starts a broker)' };
  if (spawnSync('java', ['-version']).error) return { kind: 'skipped', reason: 'java not installed' };
  return { kind: 'real-server', where: 'a broker of its own, restarted mid-flood' };
}

function kafkaScript(script: string, workdir: string, env: Record<string, string> = {}): string {
  const result = spawnSync('bash', [join(ROOT, '.ci', script), workdir], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (result.status !== 0) throw new Error(`${script} failed (${String(result.status)}):\n${result.stderr}`);
  return result.stdout;
}

interface Hook {
  id: number;
  key: string;
  scenarioId: number;
}

describeContract('integrator on Kafka', 'broker restart, two integrators', availability(), () => {
  let workdir: string;
  let dataDir: string;
  const children: ChildProcess[] = [];
  let brokerEnv: Record<string, string>;

  beforeAll(async () => {
    workdir = mkdtempSync(join(tmpdir(), 'records-kafka-restart-'));
    dataDir = join(workdir, 'data');
    const port = await freePort();
    brokerEnv = { KAFKA_PORT: String(port), KAFKA_CONTROLLER_PORT: String(await freePort()) };
    kafkaScript('start-kafka.sh', join(workdir, 'broker'), brokerEnv);
  });

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await Promise.all(children.map((child) => exited(child)));
    kafkaScript('stop-kafka.sh', join(workdir, 'broker'));
    rmSync(workdir, { recursive: true, force: true });
  });

  async function start(script: string, args: string[]): Promise<{ url: string; logs: () => string }> {
    const port = await freePort();
    const child = spawnBin(script, args, {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ADMIN_TOKEN: TOKEN,
      STREAM: 'kafka',
      KAFKA_BROKERS: `127.0.0.1:${brokerEnv.KAFKA_PORT!}`,
      EVENTS_TOPIC: 'restart-events',
      INTEGRATOR_GROUP: 'restart-integrators',
    });
    children.push(child);
    const logs = output(child);
    const url = `http://127.0.0.1:${port}`;
    await waitUntilReady(url, 120_000).catch((error: unknown) => {
      throw new Error(`${script}: ${String(error)}\n${logs()}`);
    });
    return { url, logs };
  }

  const api = tokenApi(TOKEN);

  async function runsStarted(url: string): Promise<number> {
    const metrics = await (await fetch(`${url}/metrics`)).text();
    return Number(/^integrator_runs_started (\d+)$/m.exec(metrics)?.[1] ?? 0);
  }

  test('no accepted request is lost or run twice across a broker restart; both integrators run some', async () => {
    const platform = await start('platform.ts', []);
    const second = await start('service.ts', ['integrator']);
    const url = platform.url;
    const space = await api<{ id: number }>(url, 'POST', '/space', { name: 'Hooks' });
    const module = await api<{ id: number }>(url, 'POST', '/module', { spaceId: space.id, name: 'Orders' });
    const hooks: Hook[] = [];
    for (let index = 0; index < 6; index++) {
      const hook = await api<{ id: number; key: string }>(url, 'POST', '/webhook', { name: `Hook ${index}` });
      const scenario = await api<{ id: number }>(url, 'POST', '/scenario', {
        name: `Orders ${index}`,
        webhookId: hook.id,
        steps: [{ kind: 'createRecord', moduleId: module.id, name: { expr: 'n' } }],
      });
      hooks.push({ id: hook.id, key: hook.key, scenarioId: scenario.id });
    }

    const accepted = new Set<string>();
    let stop = false;
    const sender = async (worker: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        const hook = hooks[(worker + i) % hooks.length]!;
        const n = `n-${worker}-${i}`;
        const response = await fetch(`${url}/hook/${hook.key}?n=${n}`, { method: 'POST' });
        if (response.status === 200) accepted.add(n);
        else await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const senders = Array.from({ length: 4 }, (_, worker) => sender(worker));
    const waitFor = async (count: number) => {
      const deadline = Date.now() + 60_000;
      while (accepted.size < count && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
    };
    await waitFor(100);
    // The broker goes away mid-flood: the receiver keeps accepting (requests are events first), the relay and
    // the integrators wait and reconnect.
    kafkaScript('stop-kafka.sh', join(workdir, 'broker'));
    const duringOutage = accepted.size;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    kafkaScript('start-kafka.sh', join(workdir, 'broker'), { ...brokerEnv, KAFKA_KEEP_DATA: '1' });
    await waitFor(duringOutage + 100);
    stop = true;
    await Promise.all(senders);
    expect(accepted.size).toBeGreaterThanOrEqual(200);

    const deadline = Date.now() + 120_000;
    let counts = new Map<string, number>();
    for (;;) {
      const records: Array<{ name: string }> = [];
      for (let offset = 0; ; offset += 500) {
        const page = await api<{ items: Array<{ name: string }> }>(
          url,
          'GET',
          `/module/${module.id}/item?limit=500&offset=${offset}`,
        );
        records.push(...page.items);
        if (page.items.length < 500) break;
      }
      counts = new Map();
      for (const record of records) counts.set(record.name, (counts.get(record.name) ?? 0) + 1);
      if ([...accepted].every((n) => counts.has(n)) || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const missing = [...accepted].filter((n) => !counts.has(n));
    expect({ missing: missing.length, logs: missing.length ? platform.logs().slice(-3000) : '' }).toEqual({
      missing: 0,
      logs: '',
    });
    const twice = [...counts].filter(([, count]) => count > 1);
    expect(twice).toEqual([]);
    // One run per logged request (the run history is a projection: it may trail the records a moment).
    for (const hook of hooks) {
      const totals = async () => ({
        hook: hook.id,
        runs: (await api<{ meta: { total: number } }>(url, 'GET', `/scenario/${hook.scenarioId}/run?limit=1`))
          .meta.total,
        logs: (await api<{ meta: { total: number } }>(url, 'GET', `/webhook/${hook.id}/log?limit=1`)).meta
          .total,
      });
      let seen = await totals();
      for (
        const until = Date.now() + 60_000;
        seen.runs !== seen.logs && Date.now() < until;
        seen = await totals()
      )
        await new Promise((resolve) => setTimeout(resolve, 500));
      expect(seen).toEqual({ hook: hook.id, runs: seen.logs, logs: seen.logs });
    }
    // One consumer group, two members: the topic's partitions are shared, so both ran scenarios.
    expect(await runsStarted(url)).toBeGreaterThan(0);
    expect(await runsStarted(second.url)).toBeGreaterThan(0);
  });
});
