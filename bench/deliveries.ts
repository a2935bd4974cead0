import { createServer, request, Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machineConditions, percentile, printFigure } from './report';
import { apiOf, startServer } from './server';

/**
 * Outgoing deliveries on the one-process platform (embedded stores) to receivers on loopback, the figures of
 * issue 31, each beside a baseline of the same run (plain POSTs from this process to the same receiver):
 * - fan-out: deliveries per second sustained, SUBSCRIPTIONS subscriptions each taking every record created;
 * - commit → delivered: from the API's answer to a create to the receiver having it, at RATE events/s;
 * - a receiver down for OUTAGE_SECONDS (default 600: ten minutes) while events keep coming, then back: every
 *   event delivered, in order per record, and how long after its return (the real retry schedule).
 */
const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS ?? 10);
const FANOUT_RECORDS = Number(process.env.BENCH_FANOUT_RECORDS ?? 2000);
const RATE = Number(process.env.BENCH_RATE ?? 200);
const LATENCY_SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const OUTAGE_SECONDS = Number(process.env.BENCH_OUTAGE_SECONDS ?? 600);
const OUTAGE_RATE = 20;
const BULK = 100;

interface Arrival {
  readonly id: string;
  readonly recordId: number;
  readonly type: string;
  readonly at: number;
}

/** The receivers: one server, a path per subscription; each path answers 204, or 503 while it is down. */
function startReceiver() {
  const arrivals = new Map<string, Arrival[]>();
  const down = new Set<string>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      if (down.has(path)) {
        res.writeHead(503).end();
        return;
      }
      if (path !== '/baseline') {
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          id: string;
          type: string;
          data: { recordId: number };
        };
        const list = arrivals.get(path) ?? [];
        list.push({ id: event.id, recordId: event.data.recordId, type: event.type, at: performance.now() });
        arrivals.set(path, list);
      }
      res.writeHead(204).end();
    });
  });
  return new Promise<{
    url: (path: string) => string;
    arrivals: (path: string) => Arrival[];
    down: Set<string>;
    close: () => Promise<void>;
  }>((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: (path) => `http://127.0.0.1:${port}${path}`,
        arrivals: (path) => arrivals.get(path) ?? [],
        down,
        close: () => new Promise((done) => server.close(() => done())),
      });
    }),
  );
}

/** Plain POSTs from this process with keep-alive, `concurrency` at once, for `seconds`: per second, and p99. */
async function baseline(url: string, seconds: number, concurrency: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const body = JSON.stringify({ id: 'x'.repeat(36), type: 'record.created', data: { recordId: 1 } });
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const started = performance.now();
      const call = request(
        url,
        { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - started);
            resolve();
          });
        },
      );
      call.on('error', reject);
      call.end(body);
    });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) await post();
    }),
  );
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { perSecond: latencies.length / seconds, p99: percentile(latencies, 99) };
}

async function waitFor(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/** Whether, for every record, its events arrived (first time each) in the order they were written. */
function inOrderPerRecord(
  arrivals: readonly Arrival[],
  expected: ReadonlyMap<number, readonly string[]>,
): boolean {
  const seen = new Set<string>();
  const order = new Map<number, string[]>();
  for (const arrival of arrivals) {
    if (seen.has(arrival.id)) continue;
    seen.add(arrival.id);
    order.set(arrival.recordId, [...(order.get(arrival.recordId) ?? []), arrival.type]);
  }
  return [...expected].every(
    ([recordId, types]) => JSON.stringify(order.get(recordId)) === JSON.stringify(types),
  );
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-deliveries-'));
  const receiver = await startReceiver();
  const server = await startServer(dataDir, { OUTBOUND_ALLOW_PRIVATE: 'true', SEMANTIC_SEARCH: 'false' });
  try {
    const call = apiOf(server.url);
    const space = await call<{ id: number }>('POST', '/space', { name: 'Bench' });
    const module = await call<{ id: number }>('POST', '/module', { spaceId: space.id, name: 'Deliveries' });
    process.stdout.write(
      `# ${machineConditions()}; platform in its own process on embedded stores, receivers in the bench process on loopback (204, keep-alive)\n`,
    );

    const plain = await baseline(receiver.url('/baseline'), 5, 8);
    printFigure(
      'deliveries_baseline_posts',
      plain.perSecond,
      'POSTs/s',
      undefined,
      'plain POSTs from the bench process, 8 at once',
    );
    printFigure('deliveries_baseline_post_p99', plain.p99, 'ms');

    // Fan-out: every record created goes to each subscription.
    const paths = Array.from({ length: SUBSCRIPTIONS }, (_, index) => `/fanout-${index}`);
    const fanout: number[] = [];
    for (const path of paths)
      fanout.push(
        (
          await call<{ id: number }>('POST', '/subscription', {
            name: path,
            url: receiver.url(path),
            events: ['record.created'],
          })
        ).id,
      );
    const started = performance.now();
    for (let sent = 0; sent < FANOUT_RECORDS; sent += BULK)
      await call('POST', '/record/bulk', {
        items: Array.from({ length: Math.min(BULK, FANOUT_RECORDS - sent) }, (_, index) => ({
          moduleId: module.id,
          name: `Fan-out ${sent + index}`,
        })),
      });
    const total = FANOUT_RECORDS * SUBSCRIPTIONS;
    const delivered = () => paths.reduce((sum, path) => sum + receiver.arrivals(path).length, 0);
    await waitFor(() => delivered() >= total, 300_000);
    const last = Math.max(...paths.map((path) => receiver.arrivals(path).at(-1)?.at ?? 0));
    const perSecond = delivered() / ((last - started) / 1000);
    printFigure(
      'deliveries_fanout',
      perSecond,
      'deliveries/s',
      '≥ 1000',
      `${delivered()} of ${total} deliveries, ${FANOUT_RECORDS} records × ${SUBSCRIPTIONS} subscriptions, writes included; ${(perSecond / plain.perSecond).toFixed(3)}× the baseline`,
    );
    // Each phase has its own subscriptions: the next phase's events go to none of these.
    for (const id of fanout) await call('DELETE', `/subscription/${id}`);

    // Commit → delivered at RATE events/s, one subscription.
    const latencyPath = '/latency';
    const latency = await call<{ id: number }>('POST', '/subscription', {
      name: 'Latency',
      url: receiver.url(latencyPath),
      events: ['record.created'],
    });
    const committedAt = new Map<number, number>();
    const sentAt = new Map<number, number>();
    const interval = 1000 / RATE;
    const writes: Promise<void>[] = [];
    const first = performance.now();
    for (let index = 0; index < RATE * LATENCY_SECONDS; index++) {
      const due = first + index * interval;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const sent = performance.now();
      writes.push(
        call<{ id: number }>('POST', '/record', { moduleId: module.id, name: `Latency ${index}` }).then(
          (record) => {
            committedAt.set(record.id, performance.now());
            sentAt.set(record.id, sent);
          },
        ),
      );
    }
    await Promise.all(writes);
    await waitFor(() => receiver.arrivals(latencyPath).length >= committedAt.size, 60_000);
    const since = (times: ReadonlyMap<number, number>) =>
      receiver
        .arrivals(latencyPath)
        .flatMap((arrival) => {
          const at = times.get(arrival.recordId);
          return at === undefined ? [] : [Math.max(0, arrival.at - at)];
        })
        .sort((a, b) => a - b);
    // From the API's answer (the commit acknowledged; the delivery may overtake the answer: 0), and from the
    // write's request (the commit and the answer included): the figure lies between.
    const latencies = since(committedAt);
    const fromRequest = since(sentAt);
    printFigure(
      'deliveries_commit_to_delivered_p50',
      percentile(latencies, 50),
      'ms',
      undefined,
      `${RATE} events/s for ${LATENCY_SECONDS} s`,
    );
    printFigure(
      'deliveries_commit_to_delivered_p99',
      percentile(latencies, 99),
      'ms',
      '≤ 100',
      `${latencies.length} events, from the create's answer; the baseline POST's p99 ${plain.p99.toFixed(1)} ms`,
    );
    printFigure(
      'deliveries_request_to_delivered_p99',
      percentile(fromRequest, 99),
      'ms',
      undefined,
      'from the create request: the write itself included',
    );
    await call('DELETE', `/subscription/${latency.id}`);

    // A receiver down for OUTAGE_SECONDS while events keep coming (a create and an update each), then back.
    if (OUTAGE_SECONDS > 0) {
      const outagePath = '/outage';
      receiver.down.add(outagePath);
      await call('POST', '/subscription', {
        name: 'Outage',
        url: receiver.url(outagePath),
        events: ['record.created', 'record.updated'],
      });
      const expected = new Map<number, string[]>();
      const downUntil = Date.now() + OUTAGE_SECONDS * 1000;
      let index = 0;
      while (Date.now() < downUntil) {
        const record = await call<{ id: number }>('POST', '/record', {
          moduleId: module.id,
          name: `Outage ${index}`,
        });
        await call('PUT', `/record/${record.id}`, { name: `Outage ${index} changed` });
        expected.set(record.id, ['record.created', 'record.updated']);
        index++;
        await new Promise((resolve) => setTimeout(resolve, 1000 / OUTAGE_RATE));
      }
      receiver.down.delete(outagePath);
      const back = performance.now();
      const events = expected.size * 2;
      const distinct = () => new Set(receiver.arrivals(outagePath).map((arrival) => arrival.id)).size;
      const all = await waitFor(() => distinct() >= events, 3 * 3_600_000);
      const lastArrival = receiver.arrivals(outagePath).at(-1)?.at ?? back;
      printFigure(
        'deliveries_after_outage',
        (lastArrival - back) / 1000,
        's',
        'every event, in order per record',
        `down ${OUTAGE_SECONDS} s at ${OUTAGE_RATE} records/s (a create and an update each): ${distinct()} of ${events} events delivered, ${all && inOrderPerRecord(receiver.arrivals(outagePath), expected) ? 'in order per record' : 'NOT ALL IN ORDER'}; seconds from the receiver's return to the last delivery`,
      );
    }
  } finally {
    await server.stop();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
