import fc from 'fast-check';
import { LatelyAdded } from '../../infra/event-store/lately-added';

type Operation = readonly ['set', number, string] | readonly ['delete', number];

/** What the map should hold, step by step: the newest entries within both bounds, oldest dropped first. */
class LatelyAddedModel {
  private readonly held = new Map<number, string>();

  constructor(
    private readonly max: number,
    private readonly maxSize: number,
  ) {}

  apply(operation: Operation): ReadonlyMap<number, string> {
    const { held } = this;
    const total = (): number => [...held.values()].reduce((sum, value) => sum + value.length, 0);
    held.delete(operation[1]);
    if (operation[0] === 'set' && operation[2].length <= this.maxSize) {
      held.set(operation[1], operation[2]);
      while (held.size > this.max || total() > this.maxSize) held.delete(held.keys().next().value!);
    }
    return held;
  }
}

function expected(
  operations: readonly Operation[],
  max: number,
  maxSize: number,
): ReadonlyMap<number, string> {
  const model = new LatelyAddedModel(max, maxSize);
  let held: ReadonlyMap<number, string> = new Map();
  for (const operation of operations) held = model.apply(operation);
  return held;
}

const operation = fc.oneof(
  fc.tuple(fc.constant('set' as const), fc.integer({ min: 0, max: 20 }), fc.string({ maxLength: 12 })),
  fc.tuple(fc.constant('delete' as const), fc.integer({ min: 0, max: 20 })),
);

test('any sets and deletes: the newest entries within the count and the size, each read as last set', () => {
  fc.assert(
    fc.property(
      fc.array(operation, { maxLength: 80 }),
      fc.integer({ min: 1, max: 10 }),
      fc.integer({ min: 0, max: 40 }),
      (operations, max, maxSize) => {
        const lately = new LatelyAdded<number, string>(max, {
          maxSize,
          sizeOf: (value) => value.length,
        });
        for (const step of operations)
          if (step[0] === 'set') lately.set(step[1], step[2]);
          else lately.delete(step[1]);
        const held = expected(operations, max, maxSize);
        expect(lately.size).toBe(held.size);
        for (let key = 0; key <= 20; key++) expect(lately.get(key)).toBe(held.get(key));
      },
    ),
    { numRuns: 500 },
  );
});

test('long runs of sets and deletes (its order compacted along the way) hold what a plain model holds', () => {
  fc.assert(
    fc.property(
      fc.array(operation, { minLength: 2000, maxLength: 5000 }),
      fc.integer({ min: 1, max: 10 }),
      (operations, max) => {
        const lately = new LatelyAdded<number, string>(max, { maxSize: 60, sizeOf: (value) => value.length });
        const model = new LatelyAddedModel(max, 60);
        // Compared after every step: an entry kept too long may be set again later and so hide.
        for (const step of operations) {
          if (step[0] === 'set') lately.set(step[1], step[2]);
          else lately.delete(step[1]);
          const held = model.apply(step);
          if (lately.size !== held.size) expect(lately.size).toBe(held.size);
          for (let key = 0; key <= 20; key++)
            if (lately.get(key) !== held.get(key)) expect(lately.get(key)).toBe(held.get(key));
        }
      },
    ),
    { numRuns: 40 },
  );
});

test('without sizes only the count bounds it; deleteWhere removes exactly what it picks', () => {
  const lately = new LatelyAdded<string, { subject: string }>(3);
  for (const [key, subject] of [
    ['a', 'x'],
    ['b', 'y'],
    ['c', 'x'],
    ['d', 'y'],
  ] as const)
    lately.set(key, { subject });
  expect(lately.get('a')).toBeUndefined();
  lately.deleteWhere((entry) => entry.subject === 'y');
  expect([lately.get('b'), lately.get('c'), lately.get('d')]).toEqual([
    undefined,
    { subject: 'x' },
    undefined,
  ]);
  expect(lately.size).toBe(1);
  expect(() => new LatelyAdded(0)).toThrow('max');
});
