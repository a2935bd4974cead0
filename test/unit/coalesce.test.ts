import { coalesceChanges } from '../../projections/coalesce';
import type { ReadModelChange } from '../../contracts/read-model-changes';
import { InMemoryReadModels } from '../support/given-when-then';

const upsert = (id: string, position: bigint, doc: Record<string, unknown> = {}): ReadModelChange => ({
  op: 'upsert',
  collection: 'c',
  doc: { id, ...doc },
  position,
});
const patch = (
  id: string,
  position: bigint,
  set: Record<string, unknown>,
  extra: Partial<Extract<ReadModelChange, { op: 'patch' }>> = {},
): ReadModelChange => ({
  op: 'patch',
  collection: 'c',
  id,
  set,
  position,
  ...extra,
});
const remove = (id: string, position: bigint): ReadModelChange => ({
  op: 'delete',
  collection: 'c',
  id,
  position,
});

/** Applying the coalesced batch must give the same documents as applying the batch change by change. */
function expectSameOutcome(stored: readonly ReadModelChange[], batch: readonly ReadModelChange[]): void {
  const oneByOne = new InMemoryReadModels();
  const coalesced = new InMemoryReadModels();
  oneByOne.apply(stored);
  coalesced.apply(stored);
  oneByOne.apply(batch);
  coalesced.apply(coalesceChanges(batch));
  expect(coalesced.documents('c')).toEqual(oneByOne.documents('c'));
}

describe('coalescing a batch of read-model changes', () => {
  test('given an upsert then patches of one document, when coalesced, then one upsert of the patched document', () => {
    const batch = [
      upsert('a', 1n, { name: 'x', n: 1 }),
      patch('a', 2n, { name: 'y' }, { unset: ['n'] }),
      patch('a', 3n, { 'f.k': 1 }),
    ];
    expect(coalesceChanges(batch)).toEqual([upsert('a', 3n, { name: 'y', f: { k: 1 } })]);
    expectSameOutcome([], batch);
  });

  test('given changes of several documents, when coalesced, then each keeps its own chain in last-change order', () => {
    const batch = [upsert('a', 1n), upsert('b', 2n), patch('a', 3n, { v: 1 })];
    expect(coalesceChanges(batch)).toEqual([upsert('b', 2n), upsert('a', 3n, { v: 1 })]);
  });

  test('given a delete after an upsert or a patch, when coalesced, then only the delete remains', () => {
    expect(coalesceChanges([upsert('a', 1n), patch('a', 2n, { v: 1 }), remove('a', 3n)])).toEqual([
      remove('a', 3n),
    ]);
    expectSameOutcome([upsert('a', 0n, { v: 0 })], [patch('a', 2n, { v: 1 }), remove('a', 3n)]);
  });

  test('given a patch after a patch, a patch after a delete, or an increment, when coalesced, then they stay apart', () => {
    const patches = [patch('a', 1n, { v: 1 }), patch('a', 2n, { w: 2 })];
    expect(coalesceChanges(patches)).toEqual(patches);
    const afterDelete = [remove('a', 1n), patch('a', 2n, { v: 1 })];
    expect(coalesceChanges(afterDelete)).toEqual(afterDelete);
    const increments = [upsert('a', 1n, { n: 1 }), patch('a', 2n, {}, { inc: { n: 1 } })];
    expect(coalesceChanges(increments)).toEqual(increments);
  });

  test('given a replay over a stored document newer than the upsert, when coalesced, then the outcome equals change by change', () => {
    const chain = [upsert('a', 1n, { v: 1 }), patch('a', 2n, { v: 2 }), patch('a', 3n, { w: 3 })];
    expectSameOutcome([chain[0]!, chain[1]!], chain);
    expectSameOutcome([upsert('a', 5n, { v: 9 })], chain);
  });

  test('given an upsert after a delete, when coalesced, then the upsert wins', () => {
    expect(coalesceChanges([remove('a', 1n), upsert('a', 2n, { v: 1 })])).toEqual([
      upsert('a', 2n, { v: 1 }),
    ]);
  });
});
