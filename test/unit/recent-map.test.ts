import fc from 'fast-check';
import { RecentMap } from '../../infra/recent-map';

/** What a `RecentMap` must hold after the operations: a model kept as a list, oldest first. */
function modelAfter(operations: readonly Operation[], max: number, maxSize: number): Array<[string, number]> {
  let entries: Array<[string, number]> = [];
  for (const operation of operations) {
    entries = entries.filter(([key]) => key !== operation.key);
    if (operation.kind === 'set') entries.push([operation.key, operation.value]);
    while (entries.length > max || entries.reduce((sum, [, value]) => sum + value, 0) > maxSize)
      entries.shift();
  }
  return entries;
}

type Operation = { kind: 'set'; key: string; value: number } | { kind: 'delete'; key: string };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({
    kind: fc.constant('set' as const),
    key: fc.constantFrom('a', 'b', 'c', 'd', 'e', '__proto__'),
    value: fc.nat(20),
  }),
  fc.record({
    kind: fc.constant('delete' as const),
    key: fc.constantFrom('a', 'b', 'c', 'd', 'e', '__proto__'),
  }),
);

describe('RecentMap', () => {
  test('holds what was set last within its count and weight, oldest dropped first, whatever the operations', () => {
    fc.assert(
      fc.property(
        fc.array(operation, { maxLength: 60 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 60 }),
        (operations, max, maxSize) => {
          const map = new RecentMap<string, number>({ max, maxSize, sizeOf: (value) => value });
          for (const step of operations)
            if (step.kind === 'set') map.set(step.key, step.value);
            else map.delete(step.key);
          const expected = modelAfter(operations, max, maxSize);
          expect(map.size).toBe(expected.length);
          for (const key of ['a', 'b', 'c', 'd', 'e', '__proto__'])
            expect(map.get(key)).toBe(expected.find(([held]) => held === key)?.[1]);
        },
      ),
    );
  });

  test('long runs of operations over many keys, the order of setting forgotten as it goes, hold what the model holds', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant('set' as const), key: fc.nat(300).map(String), value: fc.nat(5) }),
            fc.record({ kind: fc.constant('delete' as const), key: fc.nat(300).map(String) }),
          ),
          { minLength: 2000, maxLength: 5000 },
        ),
        fc.integer({ min: 1, max: 200 }),
        (operations, max) => {
          const map = new RecentMap<string, number>({ max, maxSize: 3 * max, sizeOf: (value) => value });
          for (const step of operations)
            if (step.kind === 'set') map.set(step.key, step.value);
            else map.delete(step.key);
          const expected = new Map(modelAfter(operations, max, 3 * max));
          expect(map.size).toBe(expected.size);
          for (let key = 0; key <= 300; key++) expect(map.get(String(key))).toBe(expected.get(String(key)));
        },
      ),
      { numRuns: 20 },
    );
  });

  test('a read does not keep an entry longer; deleteWhere drops exactly the entries picked', () => {
    const map = new RecentMap<string, { subject: string }>({ max: 2 });
    map.set('x', { subject: 's1' });
    map.set('y', { subject: 's2' });
    expect(map.get('x')).toEqual({ subject: 's1' });
    map.set('z', { subject: 's1' });
    expect(map.get('x')).toBeUndefined();
    map.deleteWhere((entry) => entry.subject === 's1');
    expect([map.get('y'), map.get('z'), map.size]).toEqual([{ subject: 's2' }, undefined, 1]);
    expect(() => new RecentMap({ max: 0 })).toThrow(RangeError);
  });
});
