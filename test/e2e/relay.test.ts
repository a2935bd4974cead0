import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createInProcessStream } from '../../infra/stream/in-process';
import { createKafkaStream } from '../../infra/stream/kafka';
import type { ConsumedMessage, Stream } from '../../infra/stream/port';
import { describeContract, type AdapterRun } from '../support/adapter-report';
import { json, startPlatform, type TestPlatform } from '../support/platform';

jest.setTimeout(90_000);

const brokers = process.env.KAFKA_BROKERS;

/** Collects the topic's messages until `done` says so (bounded by a deadline). */
async function collect(
  stream: Stream,
  topic: string,
  done: (messages: ConsumedMessage[]) => boolean,
): Promise<ConsumedMessage[]> {
  const messages: ConsumedMessage[] = [];
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const consumer = await stream.consume({
    topic,
    group: `relay-test-${randomUUID()}`,
    fromBeginning: true,
    handle: async (message) => {
      messages.push(message);
      if (done(messages)) finish();
    },
  });
  await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, 60_000))]);
  await consumer.stop();
  return messages;
}

function relaySuite(
  streamKind: 'in-process' | 'kafka',
  env: () => Record<string, string>,
  open: (platform: TestPlatform) => Stream,
): void {
  let platform: TestPlatform;
  let stream: Stream;
  const topic = `events-${randomUUID()}`;

  beforeAll(async () => {
    // Relay errors go to the test output (warn), so a failure here says why.
    platform = await startPlatform({ LOG_LEVEL: 'warn', ...env(), EVENTS_TOPIC: topic });
    stream = open(platform);
  });

  afterAll(async () => {
    await stream.close();
    await platform.stop();
  });

  test(`every event reaches the ${streamKind} topic, keyed by its stream, in order, without write-side bookkeeping`, async () => {
    const space = await json<{ id: number }>(
      await platform.call('POST', '/space', { body: { name: 'Relayed' } }),
    );
    await platform.call('PUT', `/space/${space.id}`, { body: { name: 'Relayed twice' } });
    const key = `space-test.${space.id}`;
    const messages = await collect(
      stream,
      topic,
      (seen) => seen.filter((message) => message.key === key).length >= 2,
    );
    const ours = messages
      .filter((message) => message.key === key)
      .map((message) => JSON.parse(message.value) as { type: string; revision: string; position: string });
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
  relaySuite(
    'in-process',
    () => ({}),
    (platform) => createInProcessStream({ path: join(platform.dataDir, 'stream.db'), pollIntervalMs: 20 }),
  );
});

const kafkaRun: AdapterRun = brokers
  ? { kind: 'real-server', where: brokers }
  : { kind: 'skipped', reason: 'KAFKA_BROKERS not set' };
describeContract('relay', 'kafka', kafkaRun, () => {
  relaySuite(
    'kafka',
    () => ({ STREAM: 'kafka', KAFKA_BROKERS: brokers! }),
    () => createKafkaStream({ brokers: brokers!.split(','), clientId: 'relay-test' }),
  );
});
