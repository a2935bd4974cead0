import fc from 'fast-check';
import { TwoGenerationCache } from '../../infra/event-store/two-generations';

/** The key cache of the personal-data store: bounded, and never answers a value it was not last given. */
type Operation =
  | { readonly kind: 'set'; readonly key: number; readonly value: number }
  | { readonly kind: 'get' | 'peek' | 'delete'; readonly key: number };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), key: fc.integer({ min: 0, max: 40 }), value: fc.integer() }),
  fc.record({
    kind: fc.constantFrom('get' as const, 'peek' as const, 'delete' as const),
    key: fc.integer({ min: 0, max: 40 }),
  }),
);

test('given any calls, it holds at most max entries, answers and lists only what it was last given, and keeps the last half of max used', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 2, max: 24 }),
      fc.array(operation, { maxLength: 300 }),
      (max, operations) => {
        const cache = new TwoGenerationCache<number, number>(max);
        const latest = new Map<number, number>();
        /** Keys by their last use (a set, or a get that found it), most recent last. */
        let used: number[] = [];
        const use = (key: number) => (used = [...used.filter((other) => other !== key), key]);
        for (const step of operations) {
          if (step.kind === 'set') {
            cache.set(step.key, step.value);
            latest.set(step.key, step.value);
            use(step.key);
          } else if (step.kind === 'delete') {
            cache.delete(step.key);
            // Its place among the last used stays taken: the cache does not hand it to an older key.
            latest.delete(step.key);
          } else {
            const found = step.kind === 'get' ? cache.get(step.key) : cache.peek(step.key);
            if (found !== undefined) {
              expect(found).toBe(latest.get(step.key));
              if (step.kind === 'get') use(step.key);
            }
          }
          expect(cache.size).toBeLessThanOrEqual(max);
        }
        for (const key of used.slice(-Math.floor(max / 2)))
          if (latest.has(key)) expect(cache.peek(key)).toBe(latest.get(key));
        const entries = [...cache.entries()];
        expect(entries).toHaveLength(cache.size);
        for (const [key, value] of entries) expect(value).toBe(latest.get(key));
      },
    ),
    { numRuns: 2000 },
  );
});

test('given a full young generation, when one more is set, then the old generation is dropped whole and a read entry lives on', () => {
  const cache = new TwoGenerationCache<string, number>(4);
  cache.set('a', 1);
  cache.set('b', 2);
  // a and b are the old generation now; a read moves a back.
  expect(cache.get('a')).toBe(1);
  cache.set('c', 3);
  // a and c made the young generation full: it became the old one, and b (never read) was dropped.
  expect(cache.peek('b')).toBeUndefined();
  expect([cache.peek('a'), cache.peek('c')]).toEqual([1, 3]);
  expect(cache.delete('a')).toBe(true);
  expect(cache.delete('a')).toBe(false);
  expect(cache.size).toBe(1);
});

test('a cache of fewer than two entries, or of a size that is not a whole number, is refused', () => {
  for (const max of [0, 1, 2.5, Number.NaN]) expect(() => new TwoGenerationCache(max)).toThrow('at least 2');
});
