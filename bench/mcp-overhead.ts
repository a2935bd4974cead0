import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { machineConditions, percentile, printFigure } from './report';
import { headers, startServer, TOKEN } from './server';

/**
 * What an MCP tool call adds over the same REST call (target ≤ 2 ms at p50): `getRecord` through the SDK's
 * client over Streamable HTTP and over HTTP+SSE, against `GET /api/record/{id}` with fetch, one call at a
 * time, on the same running platform. Each series is interleaved with the others so load drifts hit all.
 */
const CALLS = Number(process.env.BENCH_MCP_CALLS ?? 2000);
const ROUNDS = 10;

async function timed(run: () => Promise<unknown>, times: number[]): Promise<void> {
  const started = process.hrtime.bigint();
  await run();
  times.push(Number(process.hrtime.bigint() - started) / 1e6);
}

async function connect(transport: Transport): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-mcp-'));
  const server = await startServer(dataDir);
  try {
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${server.url}/api${path}`, {
        method,
        headers,
        ...(body !== undefined && { body: JSON.stringify(body) }),
      }).then((response) => response.json() as Promise<{ id: number }>);
    const space = await call('POST', '/space', { name: 'Bench' });
    const module = await call('POST', '/module', { spaceId: space.id, name: 'Items' });
    const record = await call('POST', '/record', { moduleId: module.id, name: 'Item', fields: {} });
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const streamable = await connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/v2/test/mcp`), {
        requestInit: { headers: auth },
      }),
    );
    const sse = await connect(
      new SSEClientTransport(new URL(`${server.url}/v2/test/sse`), {
        requestInit: { headers: auth },
        eventSourceInit: {
          fetch: (url, init) => fetch(url, { ...init, headers: { ...init?.headers, ...auth } }),
        },
      }),
    );
    const rest: number[] = [];
    const overStreamable: number[] = [];
    const overSse: number[] = [];
    const restCall = async () => {
      const response = await fetch(`${server.url}/api/record/${record.id}`, { headers: auth });
      if (response.status !== 200) throw new Error(`REST answered ${response.status}`);
      await response.arrayBuffer();
    };
    const toolCall = (client: Client) => async () => {
      const result = await client.callTool({ name: 'getRecord', arguments: { recordId: record.id } });
      if (result.isError) throw new Error(`the tool call failed: ${JSON.stringify(result.content)}`);
    };
    // Warm-up: JIT, connection pools, caches.
    for (let i = 0; i < 200; i++) {
      await restCall();
      await toolCall(streamable)();
      await toolCall(sse)();
    }
    for (let round = 0; round < ROUNDS; round++)
      for (let i = 0; i < CALLS / ROUNDS; i++) {
        await timed(restCall, rest);
        await timed(toolCall(streamable), overStreamable);
        await timed(toolCall(sse), overSse);
      }
    await streamable.close();
    await sse.close();
    const conditions = `${CALLS} sequential calls each, interleaved; ${machineConditions()}`;
    for (const [name, times] of [
      ['rest_get_record', rest],
      ['mcp_streamable_get_record', overStreamable],
      ['mcp_sse_get_record', overSse],
    ] as const) {
      const sorted = [...times].sort((a, b) => a - b);
      printFigure(`${name}_p50`, percentile(sorted, 50), 'ms');
      printFigure(`${name}_p99`, percentile(sorted, 99), 'ms', undefined, conditions);
    }
    const p50 = (times: number[]) =>
      percentile(
        [...times].sort((a, b) => a - b),
        50,
      );
    printFigure('mcp_streamable_overhead_p50', p50(overStreamable) - p50(rest), 'ms', '≤ 2 ms');
    printFigure('mcp_sse_overhead_p50', p50(overSse) - p50(rest), 'ms', '≤ 2 ms');
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
