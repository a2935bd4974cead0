import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeOpenAi } from '../test/support/fake-openai';
import { machineConditions, printFigure } from './report';
import { api, startServer } from './server';

/**
 * Issue 21's figures: an execute of 1,000 records against a model answering in 50 ms (default concurrency),
 * and the platform's own cost per transformed record with a model that answers at once — the wall time per
 * record, and the platform process's CPU time per record (both with a different prompt each run, so every
 * record is asked and written).
 */
const RECORDS = Number(process.env.BENCH_RECORDS ?? 1000);

/** User plus system CPU time of a process, in milliseconds. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are the 12th and 13th fields after the command name, in clock ticks (100 a second).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function main(): Promise<void> {
  const fake = await startFakeOpenAi();
  fake.chatReply = (request) =>
    JSON.stringify({ value: `summary: ${request.messages.at(-1)!.content}`.slice(0, 200) });
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-ai-'));
  const server = await startServer(dataDir, {
    AI_URL: fake.baseUrl,
    AI_API_KEY: 'bench',
    AI_EXECUTE_WAIT_MS: '120000',
    SEMANTIC_SEARCH: 'false',
  });
  try {
    const space = (await api<{ id: number }>(server.url, 'POST', '/space', { name: 'Bench' })).body;
    const module = (
      await api<{ id: number }>(server.url, 'POST', '/module', { spaceId: space.id, name: 'Leads' })
    ).body;
    const field = (
      await api<{ id: number }>(server.url, 'POST', '/field', {
        moduleId: module.id,
        name: 'Summary',
        type: 'text',
      })
    ).body;
    const ids: number[] = [];
    for (let start = 0; start < RECORDS; start += 100) {
      const items = Array.from({ length: Math.min(100, RECORDS - start) }, (_, index) => ({
        moduleId: module.id,
        name: `Lead ${start + index}`,
      }));
      const written = await api<{ items: Array<{ id: number }> }>(server.url, 'POST', '/record/bulk', {
        items,
      });
      ids.push(...written.body.items.map((item) => item.id));
    }
    await api(server.url, 'POST', '/ai/balance/top-up', { tokens: 1_000_000_000 });

    const execute = async (prompt: string, delayMs: number) => {
      const transform = (
        await api<{ id: number }>(server.url, 'POST', '/ai/column-data-transform', {
          name: prompt,
          moduleId: module.id,
          fieldId: field.id,
          prompt,
        })
      ).body;
      fake.chatDelayMs = delayMs;
      fake.chatInFlightMax = 0;
      const cpuBefore = cpuMs(server.pid);
      const started = performance.now();
      const answer = await api<{ done: number; failed: number; status: string }>(
        server.url,
        'POST',
        `/column-data-transform/${transform.id}/execute`,
        { ids },
      );
      const wallMs = performance.now() - started;
      if (answer.status !== 201 || answer.body.done !== ids.length)
        throw new Error(`execute answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`);
      return { wallMs, cpuMs: cpuMs(server.pid) - cpuBefore, inFlight: fake.chatInFlightMax };
    };

    // Warm-up: the code paths compiled, the stores' caches filled.
    await execute('warm {{name}}', 0);
    const instant = await execute('instant {{name}}', 0);
    printFigure(
      'ai.execute_overhead_wall_per_record_ms',
      instant.wallMs / RECORDS,
      'ms',
      '≤ 2',
      `${RECORDS} records, a model answering at once, ${instant.inFlight} calls at once`,
    );
    printFigure(
      'ai.execute_platform_cpu_per_record_ms',
      instant.cpuMs / RECORDS,
      'ms',
      '≤ 2',
      'CPU time of the platform process per record: reserve, call, spend, keep the answer, update the record, keep the outcome, and the projections of all of it',
    );
    const slow = await execute('slow {{name}}', 50);
    printFigure(
      'ai.execute_1000_at_50ms_s',
      slow.wallMs / 1000,
      's',
      '≤ 10',
      `${RECORDS} records, every answer after 50 ms, default AI_CONCURRENCY (${slow.inFlight} calls at once); ${machineConditions()}`,
    );
  } finally {
    await server.stop();
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
