import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessStream } from '../../infra/stream/in-process';
import { createKafkaStream } from '../../infra/stream/kafka';
import type { Stream } from '../../infra/stream/port';
import { describeContract, type AdapterRun } from '../support/adapter-report';
import { json, startPlatform, type TestPlatform } from '../support/platform';
import { Collector } from '../support/stream-collector';

jest.setTimeout(90_000);

const brokers = process.env.KAFKA_BROKERS;

function relaySuite(
  streamKind: 'in-process' | 'kafka',
  env: Record<string, string>,
  open: (dataDir: string) => Stream,
): void {
  let dataDir: string;
  let stream: Stream;
  let platform: TestPlatform;
  const collector = new Collector();
  const topic = `events-${randomUUID()}`;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'records-relay-'));
    stream = open(dataDir);
    await collector.start(stream, topic);
    // Relay errors go to the test output (warn), so a failure here says why.
    platform = await startPlatform({ LOG_LEVEL: 'warn', ...env, DATA_DIR: dataDir, EVENTS_TOPIC: topic });
  });

  afterAll(async () => {
    await collector.stop();
    await stream.close();
    await platform.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test(`every event reaches the ${streamKind} topic, keyed by its stream, in order, without write-side bookkeeping`, async () => {
    const space = await json<{ id: number }>(
      await platform.call('POST', '/space', { body: { name: 'Relayed' } }),
    );
    await platform.call('PUT', `/space/${space.id}`, { body: { name: 'Relayed twice' } });
    const key = `space-test.${space.id}`;
    // Order holds per key only (Kafka partitions by key), so wait for both keys' messages.
    await collector.until(
      (seen) =>
        seen.filter((message) => message.key === key).length >= 2 &&
        seen.some((message) => message.key === 'user-test.1'),
      60_000,
    );
    const { messages } = collector;
    const ours = messages
      .filter((message) => message.key === key)
      .map((message) => JSON.parse(message.value) as { type: string; revision: string });
    expect(ours.map((event) => [event.type, event.revision])).toEqual([
      ['SpaceCreated', '0'],
      ['SpaceUpdated', '1'],
    ]);
    expect(messages.find((message) => message.key === key)!.headers).toMatchObject({
      type: 'SpaceCreated',
      tenant: 'test',
    });
    expect(
      messages.some(
        (message) => message.key.startsWith('sequence-') || message.key.startsWith('idempotency-'),
      ),
    ).toBe(false);
    expect(messages.map((message) => message.key)).toContain('user-test.1');
  });
}

describeContract('relay', 'in-process', { kind: 'embedded' }, () => {
  relaySuite('in-process', {}, (dataDir) =>
    createInProcessStream({ path: join(dataDir, 'stream.db'), pollIntervalMs: 20 }),
  );
});

const kafkaRun: AdapterRun = brokers
  ? { kind: 'real-server', where: brokers }
  : { kind: 'skipped', reason: 'KAFKA_BROKERS not set' };
describeContract('relay', 'kafka', kafkaRun, () => {
  relaySuite('kafka', { STREAM: 'kafka', KAFKA_BROKERS: brokers ?? '' }, () =>
    createKafkaStream({ brokers: (brokers ?? '').split(','), clientId: 'relay-test' }),
  );
});
