import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { exited, freePort, output, spawnBin, waitUntilReady, tokenApi } from '../support/child-platform';
import { polling } from '../support/eventually';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * `kill -9` while deliveries are under way: after the restart every event of every acknowledged write is
 * delivered, in order per record, and the only repeats are deliveries that were in flight at the kill, each
 * with the same `webhook-id` and body as before.
 */
const TOKEN = 'rpt_delivery-crash-token-0123456789abcdef';
const SLOTS = 4;
jest.setTimeout(180_000);

const eventually = polling(90_000, 100);

let dataDir: string;
let receiver: WebhookReceiver;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'records-delivery-crash-'));
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  for (const running of children)
    if (running.exitCode === null && running.signalCode === null) {
      running.kill('SIGKILL');
      await exited(running);
    }
  await receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function startPlatform(port: number): Promise<{ url: string; child: ChildProcess }> {
  const child = spawnBin('platform.ts', [], {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: TOKEN,
    SEMANTIC_SEARCH: 'false',
    OUTBOUND_ALLOW_PRIVATE: 'true',
    DELIVERY_SUBSCRIPTION_CONCURRENCY: String(SLOTS),
    DELIVERY_RETRY_DELAYS_MS: '100,200,400',
  });
  children.push(child);
  const logs = output(child);
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(url).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${logs()}`);
  });
  return { url, child };
}

const api = tokenApi(TOKEN);

interface Delivered {
  id: string;
  type: string;
  data: { recordId: number };
}

test('kill -9 during delivery: nothing acknowledged is skipped; repeats are in-flight ones with their webhook-id', async () => {
  const port = await freePort();
  const first = await startPlatform(port);
  const at = '/crash';
  // Slow enough that deliveries are always in flight when the process dies.
  receiver.answer(at, { status: 200, body: 'ok', delayMs: 20 });
  const space = await api<{ id: number }>(first.url, 'POST', '/space', { name: 'Crash' });
  const module = await api<{ id: number }>(first.url, 'POST', '/module', {
    spaceId: space.id,
    name: 'Crash',
  });
  await api(first.url, 'POST', '/subscription', {
    name: 'Crash',
    url: receiver.url(at),
    events: ['record.created', 'record.updated'],
  });

  // Writers keep going until the process dies; what was answered is acknowledged.
  const acknowledged: number[] = [];
  let stop = false;
  const writer = async (lane: number) => {
    for (let index = 0; !stop; index++) {
      try {
        const record = await api<{ id: number }>(first.url, 'POST', '/record', {
          moduleId: module.id,
          name: `R ${lane}-${index}`,
        });
        await api(first.url, 'PUT', `/record/${record.id}`, { name: `R ${lane}-${index} changed` });
        acknowledged.push(record.id);
      } catch {
        return;
      }
    }
  };
  const writers = Promise.all([0, 1, 2, 3].map(writer));
  await receiver.waitFor(at, 150, 60_000);
  first.child.kill('SIGKILL');
  await exited(first.child);
  stop = true;
  await writers;
  const beforeRestart = receiver.received(at).length;
  expect(acknowledged.length).toBeGreaterThan(20);

  await startPlatform(port);
  const created = () =>
    new Set(
      receiver
        .received(at)
        .map((request) => JSON.parse(request.body) as Delivered)
        .filter((event) => event.type === 'record.updated')
        .map((event) => event.data.recordId),
    );
  const seen = await eventually(
    () => Promise.resolve(created()),
    (updated) => acknowledged.every((recordId) => updated.has(recordId)),
  );
  expect(acknowledged.filter((recordId) => !seen.has(recordId))).toEqual([]);
  expect(receiver.received(at).length).toBeGreaterThan(beforeRestart);

  const requests = receiver.received(at);
  const byId = new Map<string, string[]>();
  for (const request of requests) {
    const id = request.headers['webhook-id']!;
    expect(JSON.parse(request.body).id).toBe(id);
    byId.set(id, [...(byId.get(id) ?? []), request.body]);
  }
  const repeated = [...byId.values()].filter((bodies) => bodies.length > 1);
  // Each repeat is the same event, and only what was in flight (the subscription's slots) came twice.
  for (const bodies of repeated) expect(new Set(bodies).size).toBe(1);
  expect(repeated.length).toBeLessThanOrEqual(SLOTS);
  expect(repeated.every((bodies) => bodies.length === 2)).toBe(true);

  // In order per record: the creation came before the change, in the first delivery of each.
  const order = new Map<number, string[]>();
  const counted = new Set<string>();
  for (const request of requests) {
    const event = JSON.parse(request.body) as Delivered;
    if (counted.has(event.id)) continue;
    counted.add(event.id);
    order.set(event.data.recordId, [...(order.get(event.data.recordId) ?? []), event.type]);
  }
  for (const recordId of acknowledged)
    expect(order.get(recordId)).toEqual(['record.created', 'record.updated']);
});
