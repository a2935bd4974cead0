import { randomUUID } from 'node:crypto';
import {
  messageBytes,
  type ConsumedMessage,
  type ConsumeOptions,
  type Consumer,
  type Stream,
  type StreamMessage,
} from '../../infra/stream/port';

/**
 * The stream port's contract: every adapter must pass it as is. Each test uses its own topics and groups,
 * so adapters may share a server across tests.
 */
export interface StreamFixture {
  /** An open stream on fresh or shared storage. */
  readonly stream: Stream;
  /** Opens another stream on the same storage (same file, same brokers), as a restarted process would. */
  reopen(): Promise<Stream>;
  /** Closes every stream the fixture opened and releases its storage. */
  cleanup(): Promise<void>;
}

export type StreamFixtureFactory = () => Promise<StreamFixture>;

const TEST_TIMEOUT_MS = 60_000;
const WAIT_TIMEOUT_MS = 20_000;
/** Long enough for a stray delivery to show up, short enough to keep the suite quick. */
const QUIET_PERIOD_MS = 300;

export function streamContract(openFixture: StreamFixtureFactory): void {
  let fixture: StreamFixture;
  let started: Consumer[];

  beforeEach(async () => {
    fixture = await openFixture();
    started = [];
  });

  afterEach(async () => {
    await Promise.allSettled(started.map((consumer) => consumer.stop()));
    await fixture.cleanup();
  });

  async function consume(stream: Stream, options: ConsumeOptions): Promise<Consumer> {
    const consumer = await stream.consume(options);
    started.push(consumer);
    return consumer;
  }

  test(
    'delivers published messages with their topic, key, value, partition and offset',
    async () => {
      const topic = uniqueName('basic');
      await fixture.stream.publish(topic, []);
      await fixture.stream.publish(topic, [
        { key: 'k1', value: 'first' },
        { key: 'k1', value: 'second' },
        { key: 'k2', value: '{"json":true,"text":"ünïcødé ✓"}' },
      ]);
      const received = new Recorder();
      await consume(fixture.stream, { topic, group: uniqueName('group'), handle: received.handle });
      await received.waitForCount(3);

      expect(received.messages.map((m) => [m.topic, m.key, m.value]).sort()).toEqual(
        [
          [topic, 'k1', 'first'],
          [topic, 'k1', 'second'],
          [topic, 'k2', '{"json":true,"text":"ünïcødé ✓"}'],
        ].sort(),
      );
      for (const message of received.messages) {
        expect(Number.isInteger(message.partition) && message.partition >= 0).toBe(true);
        expect(message.offset).toMatch(/^\d+$/);
      }
      const [first, second] = received.messages.filter((m) => m.key === 'k1');
      expect([first.value, second.value]).toEqual(['first', 'second']);
      expect(second.partition).toBe(first.partition);
      expect(BigInt(second.offset)).toBeGreaterThan(BigInt(first.offset));
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'takes a publish larger than one message may be (2,000 messages of 2 KB on one key, about 4 MB), in order',
    async () => {
      const topic = uniqueName('large-publish');
      const published = Array.from({ length: 2_000 }, (_, i) => ({
        key: 'one-key',
        value: `${i}:${'x'.repeat(2_000)}`,
      }));
      await fixture.stream.publish(topic, published);
      const received = new Recorder();
      await consume(fixture.stream, { topic, group: uniqueName('group'), handle: received.handle });
      await received.waitForCount(published.length);
      expect(received.messages.map((m) => m.value)).toEqual(published.map((m) => m.value));
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'says how large one message may be, if there is a limit, and takes a message of that size',
    async () => {
      const limit = fixture.stream.maxMessageBytes;
      if (limit === undefined) return;
      const topic = uniqueName('largest');
      const overhead = messageBytes({ key: 'k', value: '' });
      const largest = { key: 'k', value: 'y'.repeat(limit - overhead) };
      expect(messageBytes(largest)).toBe(limit);
      await fixture.stream.publish(topic, [largest]);
      const received = new Recorder();
      await consume(fixture.stream, { topic, group: uniqueName('group'), handle: received.handle });
      await received.waitForCount(1);
      expect(received.messages[0]!.value).toHaveLength(largest.value.length);
      await expect(
        fixture.stream.publish(topic, [{ key: 'k', value: 'y'.repeat(limit - overhead + 1) }]),
      ).rejects.toThrow(/larger than the stream takes/);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    "keeps each key's order: 500 messages over 20 keys, published before and while consuming",
    async () => {
      const topic = uniqueName('order');
      const published = Array.from({ length: 500 }, (_, i) => ({ key: `key-${i % 20}`, value: `${i}` }));
      for (let i = 0; i < 250; i += 50) await fixture.stream.publish(topic, published.slice(i, i + 50));
      const received = new Recorder();
      await consume(fixture.stream, { topic, group: uniqueName('group'), handle: received.handle });
      for (let i = 250; i < 500; i += 50) await fixture.stream.publish(topic, published.slice(i, i + 50));
      await received.waitForCount(500);
      await sleep(QUIET_PERIOD_MS);

      expect(received.messages).toHaveLength(500);
      expect(valuesByKey(received.messages)).toEqual(valuesByKey(published));
      expect(offsetsNotIncreasingPerPartition(received.messages)).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'gives every message to each of two groups, and an idle consumer stops promptly',
    async () => {
      const topic = uniqueName('groups');
      const published = Array.from({ length: 40 }, (_, i) => ({ key: `key-${i % 4}`, value: `${i}` }));
      await fixture.stream.publish(topic, published);
      const inA = new Recorder();
      const inB = new Recorder();
      const [consumerA, consumerB] = await Promise.all([
        consume(fixture.stream, { topic, group: uniqueName('group-a'), handle: inA.handle }),
        consume(fixture.stream, { topic, group: uniqueName('group-b'), handle: inB.handle }),
      ]);
      await Promise.all([inA.waitForCount(40), inB.waitForCount(40)]);

      expect(valuesByKey(inA.messages)).toEqual(valuesByKey(published));
      expect(valuesByKey(inB.messages)).toEqual(valuesByKey(published));
      const stopStarted = Date.now();
      await Promise.all([consumerA.stop(), consumerB.stop()]);
      expect(Date.now() - stopStarted).toBeLessThan(5_000);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'a group resumes from its committed offset after a stop: nothing delivered twice, nothing lost',
    async () => {
      const topic = uniqueName('resume');
      const group = uniqueName('group');
      const published = Array.from({ length: 40 }, (_, i) => ({ key: `key-${i % 4}`, value: `${i}` }));
      await fixture.stream.publish(topic, published.slice(0, 20));
      const firstRun = new Recorder();
      const first = await consume(fixture.stream, { topic, group, handle: firstRun.handle });
      await firstRun.waitForCount(5);
      await first.stop();
      const handledByFirstRun = firstRun.values();
      await sleep(QUIET_PERIOD_MS);
      expect(firstRun.values()).toEqual(handledByFirstRun);

      await fixture.stream.publish(topic, published.slice(20));
      const secondRun = new Recorder();
      // A committed offset outranks fromBeginning.
      await consume(fixture.stream, { topic, group, fromBeginning: true, handle: secondRun.handle });
      await waitUntil(
        () => new Set([...handledByFirstRun, ...secondRun.values()]).size === 40,
        'the second run to deliver every message the first did not',
      );

      const redelivered = secondRun.values().filter((value) => handledByFirstRun.includes(value));
      expect(redelivered).toEqual([]);
      expect(secondRun.messages).toHaveLength(40 - handledByFirstRun.length);
      expect(valuesByKey([...firstRun.messages, ...secondRun.messages])).toEqual(valuesByKey(published));
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'delivers a rejected message again after a back-off, keeping every key in order',
    async () => {
      const topic = uniqueName('retry');
      const published = Array.from({ length: 60 }, (_, i) => ({ key: `key-${i % 3}`, value: `${i}` }));
      await fixture.stream.publish(topic, published);
      const failing = published[13];
      const attempts: { readonly message: ConsumedMessage; readonly at: number }[] = [];
      let handled = 0;
      await consume(fixture.stream, {
        topic,
        group: uniqueName('group'),
        handle: async (message) => {
          attempts.push({ message, at: Date.now() });
          const earlierAttempts = attempts.filter((a) => a.message.value === failing.value).length - 1;
          if (message.value === failing.value && earlierAttempts < 2)
            throw new Error('handler failed on purpose');
          handled += 1;
        },
      });
      await waitUntil(() => handled === 60, 'every message to be handled');
      await sleep(QUIET_PERIOD_MS);

      const expected = valuesByKey(published);
      expected[failing.key] = expected[failing.key].flatMap((v) => (v === failing.value ? [v, v, v] : [v]));
      expect(valuesByKey(attempts.map((a) => a.message))).toEqual(expected);
      const retries = attempts.filter((a) => a.message.value === failing.value);
      expect(retries[1].at - retries[0].at).toBeGreaterThanOrEqual(50);
      expect(retries[2].at - retries[1].at).toBeGreaterThanOrEqual(50);
      expect(new Set(retries.map((a) => a.message.offset)).size).toBe(1);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'never commits a rejected message: the next run of the group starts with it',
    async () => {
      const topic = uniqueName('uncommitted');
      const group = uniqueName('group');
      await fixture.stream.publish(topic, [
        { key: 'k', value: 'accepted' },
        { key: 'k', value: 'rejected' },
        { key: 'k', value: 'after' },
      ]);
      const firstRun = new Recorder();
      const first = await consume(fixture.stream, {
        topic,
        group,
        handle: async (message) => {
          await firstRun.handle(message);
          if (message.value !== 'accepted') throw new Error('handler failed on purpose');
        },
      });
      await waitUntil(() => firstRun.values().includes('rejected'), 'the rejected message to be tried');
      await first.stop();
      expect(firstRun.values()).not.toContain('after');

      const secondRun = new Recorder();
      await consume(fixture.stream, { topic, group, handle: secondRun.handle });
      await secondRun.waitForCount(2);
      await sleep(QUIET_PERIOD_MS);
      expect(secondRun.values()).toEqual(['rejected', 'after']);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'round-trips headers; a message without headers has none',
    async () => {
      const topic = uniqueName('headers');
      const headers = { 'content-type': 'application/json', 'x-trace': 'ünï ✓ → 42', 'x-empty': '' };
      const large = 'x'.repeat(64 * 1024);
      await fixture.stream.publish(topic, [
        { key: 'k', value: 'with headers', headers },
        { key: 'k', value: large },
      ]);
      const received = new Recorder();
      await consume(fixture.stream, { topic, group: uniqueName('group'), handle: received.handle });
      await received.waitForCount(2);

      const [withHeaders, without] = received.messages;
      expect(withHeaders.value).toBe('with headers');
      expect(withHeaders.headers).toEqual(headers);
      expect(without.value).toBe(large);
      expect(without.headers ?? {}).toEqual({});
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'starts a new group at the end of the topic when fromBeginning is false',
    async () => {
      const topic = uniqueName('latest');
      await fixture.stream.publish(topic, [{ key: 'k', value: 'before the group existed' }]);
      const received = new Recorder();
      await consume(fixture.stream, {
        topic,
        group: uniqueName('group'),
        fromBeginning: false,
        handle: received.handle,
      });
      await fixture.stream.publish(topic, [{ key: 'k', value: 'after' }]);
      await received.waitForCount(1);
      await sleep(QUIET_PERIOD_MS);
      expect(received.values()).toEqual(['after']);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'stop waits for the handler in flight and commits its message; no handler runs after it',
    async () => {
      const topic = uniqueName('stop');
      const group = uniqueName('group');
      await fixture.stream.publish(topic, [
        { key: 'k', value: 'slow' },
        { key: 'k', value: 'next' },
      ]);
      const calls: string[] = [];
      let slowFinished = false;
      const consumer = await consume(fixture.stream, {
        topic,
        group,
        handle: async (message) => {
          calls.push(message.value);
          if (message.value !== 'slow') return;
          await sleep(500);
          slowFinished = true;
        },
      });
      await waitUntil(() => calls.length > 0, 'the slow handler to start');
      await consumer.stop();
      expect(slowFinished).toBe(true);
      const callsAtStop = [...calls];
      await sleep(QUIET_PERIOD_MS);
      expect(calls).toEqual(callsAtStop);

      const nextRun = new Recorder();
      await consume(fixture.stream, { topic, group, handle: nextRun.handle });
      await waitUntil(() => calls.length + nextRun.messages.length >= 2, 'the remaining message');
      await sleep(QUIET_PERIOD_MS);
      expect([...calls, ...nextRun.values()]).toEqual(['slow', 'next']);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'a message is durable once publish resolves: a reopened stream delivers it',
    async () => {
      const topic = uniqueName('durable');
      const published = Array.from({ length: 5 }, (_, i) => ({ key: `key-${i % 2}`, value: `${i}` }));
      await fixture.stream.publish(topic, published);
      await fixture.stream.close();
      await expect(fixture.stream.publish(topic, published)).rejects.toThrow();

      const reopened = await fixture.reopen();
      const received = new Recorder();
      await consume(reopened, { topic, group: uniqueName('group'), handle: received.handle });
      await received.waitForCount(5);
      expect(valuesByKey(received.messages)).toEqual(valuesByKey(published));
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'committed offsets survive closing the stream (with its consumer running) and reopening it',
    async () => {
      const topic = uniqueName('restart');
      const group = uniqueName('group');
      await fixture.stream.publish(
        topic,
        Array.from({ length: 10 }, (_, i) => ({ key: 'k', value: `old-${i}` })),
      );
      const beforeRestart = new Recorder();
      await consume(fixture.stream, { topic, group, handle: beforeRestart.handle });
      await beforeRestart.waitForCount(10);
      await fixture.stream.close();

      const reopened = await fixture.reopen();
      await reopened.publish(
        topic,
        Array.from({ length: 5 }, (_, i) => ({ key: 'k', value: `new-${i}` })),
      );
      const afterRestart = new Recorder();
      await consume(reopened, { topic, group, handle: afterRestart.handle });
      await afterRestart.waitForCount(5);
      await sleep(QUIET_PERIOD_MS);
      expect(afterRestart.values()).toEqual(['new-0', 'new-1', 'new-2', 'new-3', 'new-4']);
    },
    TEST_TIMEOUT_MS,
  );

  describe('with concurrency', () => {
    test(
      'handles messages of different keys at once, and one key one at a time, in order',
      async () => {
        const topic = uniqueName('parallel');
        const keys = ['a', 'b', 'c', 'd'];
        await fixture.stream.publish(
          topic,
          Array.from({ length: 40 }, (_, i) => ({
            key: keys[i % 4]!,
            value: `${keys[i % 4]}-${Math.floor(i / 4)}`,
          })),
        );
        const running = new Set<string>();
        let most = 0;
        const overlapsInKey: string[] = [];
        const done: ConsumedMessage[] = [];
        await consume(fixture.stream, {
          topic,
          group: uniqueName('group'),
          concurrency: 4,
          handle: async (message) => {
            if (running.has(message.key)) overlapsInKey.push(message.value);
            running.add(message.key);
            most = Math.max(most, running.size);
            await sleep(5 + Math.random() * 15);
            running.delete(message.key);
            done.push(message);
          },
        });
        await waitUntil(
          () => done.length >= 40,
          () => `40 messages (got ${done.length})`,
        );
        expect(overlapsInKey).toEqual([]);
        expect(most).toBeGreaterThan(1);
        for (const key of keys)
          expect(done.filter((m) => m.key === key).map((m) => m.value)).toEqual(
            Array.from({ length: 10 }, (_, n) => `${key}-${n}`),
          );
      },
      TEST_TIMEOUT_MS,
    );

    test(
      'a key that is slow or failing does not hold the other keys',
      async () => {
        const topic = uniqueName('slow-key');
        await fixture.stream.publish(topic, [
          { key: 'slow', value: 'slow-0' },
          { key: 'failing', value: 'failing-0' },
          ...Array.from({ length: 10 }, (_, i) => ({ key: `fast-${i}`, value: `fast-${i}` })),
          { key: 'slow', value: 'slow-1' },
        ]);
        let release!: () => void;
        const released = new Promise<void>((resolve) => (release = resolve));
        let failures = 0;
        const done: string[] = [];
        await consume(fixture.stream, {
          topic,
          group: uniqueName('group'),
          concurrency: 3,
          handle: async (message) => {
            if (message.value === 'slow-0') await released;
            if (message.value === 'failing-0' && ++failures < 3) throw new Error('not yet');
            done.push(message.value);
          },
        });
        await waitUntil(
          () => done.filter((value) => value.startsWith('fast')).length === 10,
          'the fast keys',
        );
        expect(done).not.toContain('slow-1');
        release();
        await waitUntil(
          () => done.includes('slow-1') && done.includes('failing-0'),
          'the slow and failing keys',
        );
        expect(done.indexOf('slow-0')).toBeLessThan(done.indexOf('slow-1'));
        expect(failures).toBe(3);
      },
      TEST_TIMEOUT_MS,
    );

    test(
      'commits only through the handled prefix: an unhandled message comes again, the ones before it do not',
      async () => {
        const topic = uniqueName('prefix');
        const group = uniqueName('group');
        await fixture.stream.publish(
          topic,
          Array.from({ length: 6 }, (_, i) => ({ key: `k${i}`, value: `m${i}` })),
        );
        const handled: string[] = [];
        const consumer = await consume(fixture.stream, {
          topic,
          group,
          concurrency: 4,
          handle: async (message) => {
            if (message.value === 'm1') throw new Error('m1 keeps failing');
            handled.push(message.value);
          },
        });
        await waitUntil(
          () => handled.length >= 5,
          () => `5 messages (got ${handled.join(',')})`,
        );
        await consumer.stop();
        const again = new Recorder();
        await consume(fixture.stream, { topic, group, concurrency: 4, handle: again.handle });
        await again.waitForCount(1);
        await sleep(QUIET_PERIOD_MS);
        // m0 was committed; m1 never was, so it and (at least once) everything after it come again.
        expect(again.values()).toContain('m1');
        expect(again.values()).not.toContain('m0');
      },
      TEST_TIMEOUT_MS,
    );

    test.each([1, 4])(
      'a backlog far larger than a page, handled at once, leaves the process responsive (concurrency %i)',
      async (concurrency) => {
        const topic = uniqueName('backlog');
        const total = 5_000;
        for (let i = 0; i < total; i += 1_000)
          await fixture.stream.publish(
            topic,
            Array.from({ length: 1_000 }, (_, n) => ({ key: `k${(i + n) % 50}`, value: `${i + n}` })),
          );
        // A timer set as the backlog starts must fire while it is still being handled: a consumer that loops
        // on already resolved promises would starve it (and every request and signal of the process with it)
        // until the end. Counted in messages, not milliseconds, so that a busy machine cannot fail it.
        let handledWhenTimerFired: number | undefined;
        let handled = 0;
        const consumer = await consume(fixture.stream, {
          topic,
          group: uniqueName('group'),
          concurrency,
          handle: async () => {
            handled += 1;
            if (handled === 1) setTimeout(() => (handledWhenTimerFired = handled), 1);
          },
        });
        await waitUntil(
          () => handled >= total && handledWhenTimerFired !== undefined,
          () => `${total} messages (got ${handled})`,
        );
        expect(handledWhenTimerFired).toBeLessThan(total);
        const stopping = performance.now();
        await consumer.stop();
        expect(performance.now() - stopping).toBeLessThan(1_000);
      },
      TEST_TIMEOUT_MS,
    );

    test(
      'a stop waits for the running handlers',
      async () => {
        const topic = uniqueName('stop');
        await fixture.stream.publish(topic, [
          { key: 'a', value: 'a' },
          { key: 'b', value: 'b' },
        ]);
        const started: string[] = [];
        const finished: string[] = [];
        const consumer = await consume(fixture.stream, {
          topic,
          group: uniqueName('group'),
          concurrency: 2,
          handle: async (message) => {
            started.push(message.value);
            await sleep(300);
            finished.push(message.value);
          },
        });
        await waitUntil(() => started.length === 2, 'both handlers to start');
        await consumer.stop();
        expect(finished.sort()).toEqual(['a', 'b']);
      },
      TEST_TIMEOUT_MS,
    );
  });
}

/** Records every message its handler is given. */
class Recorder {
  readonly messages: ConsumedMessage[] = [];

  readonly handle = async (message: ConsumedMessage): Promise<void> => {
    this.messages.push(message);
  };

  values(): string[] {
    return this.messages.map((message) => message.value);
  }

  waitForCount(count: number): Promise<void> {
    return waitUntil(
      () => this.messages.length >= count,
      () => `${count} messages (got ${this.messages.length})`,
    );
  }
}

function uniqueName(prefix: string): string {
  return `contract-${prefix}-${randomUUID()}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitUntil(condition: () => boolean, what: string | (() => string)): Promise<void> {
  const deadline = Date.now() + WAIT_TIMEOUT_MS;
  while (!condition()) {
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${WAIT_TIMEOUT_MS} ms waiting for ${typeof what === 'string' ? what : what()}`,
      );
    }
    await sleep(10);
  }
}

function valuesByKey(messages: readonly StreamMessage[]): Record<string, string[]> {
  const byKey: Record<string, string[]> = {};
  for (const message of messages) (byKey[message.key] ??= []).push(message.value);
  return byKey;
}

/** Deliveries whose offset is not above the previous one of the same partition. */
function offsetsNotIncreasingPerPartition(messages: readonly ConsumedMessage[]): string[] {
  const last = new Map<number, bigint>();
  const violations: string[] = [];
  for (const message of messages) {
    const offset = BigInt(message.offset);
    const previous = last.get(message.partition);
    if (previous !== undefined && offset <= previous) {
      violations.push(`partition ${message.partition}: ${offset} after ${previous}`);
    }
    last.set(message.partition, offset);
  }
  return violations;
}
