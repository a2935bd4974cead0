import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessStream, type InProcessStreamOptions } from '../../infra/stream/in-process';
import type { ConsumedMessage, Stream } from '../../infra/stream/port';
import { describeContract } from '../support/adapter-report';
import { streamContract } from './stream';

function openOnTempFile(options: Omit<InProcessStreamOptions, 'path'> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'stream-in-process-'));
  const path = join(dir, 'stream.sqlite');
  const opened: Stream[] = [];
  const open = (): Stream => {
    const stream = createInProcessStream({ ...options, path });
    opened.push(stream);
    return stream;
  };
  return {
    stream: open(),
    open,
    reopen: async () => open(),
    cleanup: async () => {
      await Promise.all(opened.map((stream) => stream.close()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describeContract('stream', 'in-process', { kind: 'embedded' }, () => {
  streamContract(async () => openOnTempFile());

  describe('in-process specifics', () => {
    const fixtures: ReturnType<typeof openOnTempFile>[] = [];
    const openFixture = (options: Omit<InProcessStreamOptions, 'path'> = {}) => {
      const fixture = openOnTempFile(options);
      fixtures.push(fixture);
      return fixture;
    };
    afterEach(async () => {
      await Promise.all(fixtures.splice(0).map((fixture) => fixture.cleanup()));
    });

    test('wakes a consumer of the same stream at once, without waiting for the poll', async () => {
      const { stream } = openFixture({ pollIntervalMs: 10_000 });
      const lags: number[] = [];
      let publishedAt = 0;
      await stream.consume({
        topic: 't',
        group: 'g',
        handle: async () => void lags.push(performance.now() - publishedAt),
      });
      const deadline = Date.now() + 5_000;
      for (let i = 0; i < 20 && Date.now() < deadline; i += 1) {
        publishedAt = performance.now();
        await stream.publish('t', [{ key: 'k', value: `${i}` }]);
        while (lags.length <= i && Date.now() < deadline) await sleep(1);
      }
      expect(lags).toHaveLength(20);
      expect(Math.max(...lags)).toBeLessThan(200);
    });

    test('sees messages appended by another stream on the same file within the poll interval', async () => {
      const fixture = openFixture({ pollIntervalMs: 50 });
      const otherProcess = fixture.open();
      const received: ConsumedMessage[] = [];
      await fixture.stream.consume({ topic: 't', group: 'g', handle: async (m) => void received.push(m) });
      await otherProcess.publish('t', [{ key: 'k', value: 'from elsewhere' }]);
      const deadline = Date.now() + 2_000;
      while (received.length === 0 && Date.now() < deadline) await sleep(5);
      expect(received.map((m) => m.value)).toEqual(['from elsewhere']);
    });

    test('refuses a second consumer of the same topic and group while the first runs', async () => {
      const { stream } = openFixture();
      const handle = async (): Promise<void> => undefined;
      const first = await stream.consume({ topic: 't', group: 'g', handle });
      await expect(stream.consume({ topic: 't', group: 'g', handle })).rejects.toThrow(/already consumes/);
      await stream.consume({ topic: 't', group: 'other', handle });
      await first.stop();
      await stream.consume({ topic: 't', group: 'g', handle });
    });
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
