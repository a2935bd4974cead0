import fc from 'fast-check';
import { LatelyAdded } from '../../infra/event-store/lately-added';

type Operation = readonly ['set', number, string] | readonly ['delete', number];

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.tuple(fc.constant('set' as const), fc.integer({ min: 0, max: 20 }), fc.string({ maxLength: 4 })),
  fc.tuple(fc.constant('delete' as const), fc.integer({ min: 0, max: 20 })),
);

/**
 * Any sets and deletes, long enough that the order is compacted along the way, compared after every step
 * with a plain model (the newest `max` entries, oldest dropped first): an entry kept too long may be set again
 * later and so hide by the end.
 */
test('any sets and deletes: the newest entries up to the count, each read as last set, in the order added', () => {
  fc.assert(
    fc.property(
      fc.array(operation, { minLength: 1, maxLength: 3000 }),
      fc.integer({ min: 1, max: 10 }),
      (operations, max) => {
        const lately = new LatelyAdded<number, string>(max);
        const model = new Map<number, string>();
        for (const step of operations) {
          model.delete(step[1]);
          if (step[0] === 'set') {
            lately.set(step[1], step[2]);
            model.set(step[1], step[2]);
            if (model.size > max) model.delete(model.keys().next().value!);
          } else lately.delete(step[1]);
          if (lately.size !== model.size) expect(lately.size).toBe(model.size);
          for (let key = 0; key <= 20; key++)
            if (lately.get(key) !== model.get(key)) expect(lately.get(key)).toBe(model.get(key));
        }
        expect([...lately.entries()]).toEqual([...model.entries()]);
      },
    ),
    { numRuns: 60 },
  );
  expect(() => new LatelyAdded(0)).toThrow('max');
});
