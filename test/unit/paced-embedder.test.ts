import fc from 'fast-check';
import { otherWorkShare, PacedEmbedder } from '../../infra/ai/embeddings/paced';
import type { TextEmbedder } from '../../infra/ai/embeddings/port';

/** A model on a simulated clock: each text costs `msPerText`; calls are recorded with when they began. */
function simulated(msPerText: number) {
  let clock = 0;
  const calls: Array<{ at: number; texts: readonly string[] }> = [];
  const sleeps: number[] = [];
  const inner: TextEmbedder = {
    model: 'fake',
    dimension: 2,
    embed: (texts) => {
      calls.push({ at: clock, texts });
      clock += texts.length * msPerText;
      return Promise.resolve(texts.map((text) => Float32Array.of(text.length, 1)));
    },
    close: () => Promise.resolve(),
  };
  return {
    inner,
    calls,
    sleeps,
    now: () => clock,
    sleep: (ms: number) => {
      sleeps.push(ms);
      clock += ms;
      return Promise.resolve();
    },
  };
}

const texts = (count: number) => Array.from({ length: count }, (_, index) => `text ${index}`);

describe('the paced embedder (background embedding leaves a busy API its cores)', () => {
  test('idle: one call, no pause', async () => {
    const model = simulated(10);
    const paced = new PacedEmbedder(model.inner, { busyShare: 0.1, busy: () => 0.2, ...model });
    const vectors = await paced.embed(texts(20));
    expect(vectors.map((vector) => vector[0])).toEqual(texts(20).map((text) => text.length));
    expect(model.calls).toHaveLength(1);
    expect(model.sleeps).toEqual([]);
  });

  test('busy: slices of busyBatch texts, each followed by a pause that keeps the model within its share', async () => {
    const model = simulated(10);
    const paced = new PacedEmbedder(model.inner, { busyShare: 0.25, busy: () => 0.9, ...model });
    await paced.embed(texts(10));
    expect(model.calls.map((call) => call.texts.length)).toEqual([4, 4, 2]);
    // 40 ms of model per slice at a quarter of a core: 120 ms of pause after each (the last one's before the next call).
    expect(model.sleeps).toEqual([120, 120]);
    await paced.embed(texts(1));
    expect(model.sleeps).toEqual([120, 120, 60]);
  });

  test('any load pattern: all vectors in order, and while busy the model never takes more than its share', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 50 }),
        fc.double({ min: 0.05, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 8 }),
        async (calls, loads, busyShare, msPerText) => {
          const model = simulated(msPerText);
          const readings: boolean[] = [];
          const busy = () => {
            const now = loads[readings.length % loads.length]!;
            readings.push(now);
            return now ? 1 : 0;
          };
          const paced = new PacedEmbedder(model.inner, { busyShare, busy, ...model });
          for (const count of calls) {
            const asked = texts(count);
            const vectors = await paced.embed(asked);
            expect(vectors.map((vector) => vector[0])).toEqual(asked.map((text) => text.length));
          }
          // The load is read once per call to the model (unless a share of 1 paces nothing).
          if (busyShare < 1) expect(readings).toHaveLength(model.calls.length);
          model.calls.forEach((call, index) => {
            if (!readings[index]) return;
            // Busy: a small slice, and the next call no sooner than the share allows.
            expect(call.texts.length).toBeLessThanOrEqual(4);
            const next = model.calls[index + 1];
            const took = call.texts.length * msPerText;
            const pause = Math.min(took * (1 / busyShare - 1), 1000);
            if (next) expect(next.at - call.at).toBeGreaterThanOrEqual(took + pause - 1e-6);
          });
          expect(model.calls.reduce((sum, call) => sum + call.texts.length, 0)).toBe(
            calls.reduce((sum, count) => sum + count, 0),
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  test('a share outside (0, 1] is refused; 1 never pauses', async () => {
    const model = simulated(10);
    expect(() => new PacedEmbedder(model.inner, { busyShare: 0 })).toThrow(RangeError);
    expect(() => new PacedEmbedder(model.inner, { busyShare: 1.5 })).toThrow(RangeError);
    const unpaced = new PacedEmbedder(model.inner, { busyShare: 1, busy: () => 1, ...model });
    await unpaced.embed(texts(10));
    expect(model.calls).toHaveLength(1);
    expect(model.sleeps).toEqual([]);
  });

  test('a pause is at most a second, however long the call before it took (the first loads the model)', async () => {
    const model = simulated(1000);
    const paced = new PacedEmbedder(model.inner, { busyShare: 0.1, busy: () => 1, ...model });
    await paced.embed(texts(8));
    expect(model.sleeps).toEqual([1000]);
  });

  test('idle, a long call goes in slices of idleBatch, so that load is looked at between them', async () => {
    const model = simulated(10);
    const paced = new PacedEmbedder(model.inner, { busyShare: 0.1, busy: () => 0, ...model });
    await paced.embed(texts(70));
    expect(model.calls.map((call) => call.texts.length)).toEqual([32, 32, 6]);
    expect(model.sleeps).toEqual([]);
  });
});

describe('the share of the machine the rest of the process uses', () => {
  const burn = (ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until);
  };

  test("a thread's work counts; the model's own time does not", () => {
    let modelMs = 0;
    const share = otherWorkShare(() => modelMs, 100, 1);
    burn(300);
    // One core, busy all the window (less what the machine's noise took from it).
    expect(share()).toBeGreaterThan(0.5);
    burn(300);
    modelMs += 300;
    expect(share()).toBeLessThan(0.3);
  });

  test('read again within the window, the last figure stands', () => {
    const share = otherWorkShare(() => 0, 10_000, 1);
    burn(50);
    expect(share()).toBe(0);
  });
});
