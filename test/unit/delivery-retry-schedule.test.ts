import fc from 'fast-check';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS, retryDelay } from '../../integrator/deliveries/retry-schedule';

describe('the delivery retry schedule', () => {
  test('the published schedule spans about three days, in growing steps', () => {
    const total = RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0);
    expect(total).toBeGreaterThan(70 * 3_600_000);
    expect(total).toBeLessThanOrEqual(72 * 3_600_000);
    expect(MAX_ATTEMPTS).toBe(RETRY_DELAYS_MS.length + 1);
    expect(RETRY_DELAYS_MS.slice(0, 10)).toEqual([...RETRY_DELAYS_MS.slice(0, 10)].sort((a, b) => a - b));
  });

  test('each delay is its step of the schedule, within a fifth either way; after the last, none', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: MAX_ATTEMPTS + 3 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attemptsMade, random) => {
          const delay = retryDelay(attemptsMade, random);
          const base = RETRY_DELAYS_MS[attemptsMade - 1];
          if (base === undefined) expect(delay).toBeNull();
          else {
            expect(delay).toBeGreaterThanOrEqual(Math.floor(base * 0.8));
            expect(delay).toBeLessThanOrEqual(Math.ceil(base * 1.2));
          }
        },
      ),
    );
  });

  test('jitter spreads deliveries that failed together', () => {
    const delays = new Set([0, 0.25, 0.5, 0.75, 0.99].map((random) => retryDelay(3, random)));
    expect(delays.size).toBe(5);
  });

  test('a shortened schedule (tests, benchmarks) is followed the same way', () => {
    expect(retryDelay(1, 0.5, [100, 200])).toBe(100);
    expect(retryDelay(2, 0.5, [100, 200])).toBe(200);
    expect(retryDelay(3, 0.5, [100, 200])).toBeNull();
  });
});
