import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machineConditions, percentile, printFigure } from './report';
import { apiOf, startServer } from './server';

/**
 * The step engine's cost (issue 19): a five-step scenario — JSON parse (mapping), filter, set variable, create
 * record, Webhook response — against the same scenario with only its record command and its response, both
 * through a webhook on the one-process platform, one request at a time (so the figures are latencies, not
 * queueing). The difference of the medians is what the mapping, filter and variable steps and the walk add.
 */
const CALLS = Number(process.env.BENCH_CALLS ?? 600);
const WARM_UP = 100;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-scenario-steps-'));
  const server = await startServer(dataDir);
  try {
    const call = apiOf(server.url);
    const space = await call<{ id: number }>('POST', '/space', { name: 'Bench' });
    const module = await call<{ id: number }>('POST', '/module', { spaceId: space.id, name: 'Orders' });
    const hookWith = async (steps: unknown[]): Promise<string> => {
      const hook = await call<{ id: number; key: string }>('POST', '/webhook', { name: 'Bench' });
      await call('POST', '/scenario', { name: 'Bench', webhookId: hook.id, steps });
      return hook.key;
    };
    const createAndRespond = [
      { kind: 'createRecord', moduleId: module.id, name: { expr: 'order' } },
      { kind: 'webhookResponse', status: 200, body: { expr: '{"recordId": $step(0).recordId}' } },
    ];
    const fiveSteps = [
      { kind: 'jsonParse', name: 'payload', text: { expr: 'payload' } },
      { kind: 'filter', condition: { expr: '$vars.payload.amount > 10' } },
      { kind: 'setVariable', name: 'total', value: { expr: '$vars.payload.amount * 1.2' } },
      { kind: 'createRecord', moduleId: module.id, name: { expr: 'order & " " & $string($vars.total)' } },
      {
        kind: 'webhookResponse',
        status: 200,
        body: { expr: '{"recordId": $step(3).recordId, "total": $vars.total}' },
      },
    ];
    // Several hooks per scenario, taken in turn, so no hook nears its 30 requests a second.
    const hooksOf = async (steps: unknown[]) => Promise.all(Array.from({ length: 8 }, () => hookWith(steps)));
    const plain = await hooksOf(createAndRespond);
    const full = await hooksOf(fiveSteps);
    const payload = JSON.stringify({ amount: 42, customer: { name: 'Ada' } });
    const roundTrips = async (keys: string[]): Promise<number[]> => {
      const times: number[] = [];
      for (let n = 0; n < CALLS + WARM_UP; n++) {
        const started = process.hrtime.bigint();
        const response = await fetch(`${server.url}/hook/${keys[n % keys.length]!}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ order: `A-${n}`, payload }),
        });
        const text = await response.text();
        if (response.status !== 200 || !text.includes('recordId'))
          throw new Error(`${response.status} ${text}`);
        if (n >= WARM_UP) times.push(Number(process.hrtime.bigint() - started) / 1e6);
        // Below 30 a second per hook.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return times.sort((a, b) => a - b);
    };
    process.stdout.write(`# ${machineConditions()}; ${CALLS} calls each, one at a time\n`);
    // Alternate the two so a drift of the machine weighs on both alike.
    const base: number[] = [];
    const steps: number[] = [];
    for (let round = 0; round < 3; round++) {
      base.push(...(await roundTrips(plain)));
      steps.push(...(await roundTrips(full)));
    }
    base.sort((a, b) => a - b);
    steps.sort((a, b) => a - b);
    const baseP50 = percentile(base, 50);
    const stepsP50 = percentile(steps, 50);
    printFigure(
      'scenario.five_steps_overhead_p50',
      stepsP50 - baseP50,
      'ms',
      '≤ 2',
      `round trip p50 ${stepsP50.toFixed(2)} ms with the five steps, ${baseP50.toFixed(2)} ms with the record command and response alone; p99 ${percentile(steps, 99).toFixed(2)} / ${percentile(base, 99).toFixed(2)} ms`,
    );
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
