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
/** A copy to collection `v` of document `from` of `c`. */
const copy = (id: string, from: string, position: bigint, collection = 'v'): ReadModelChange => ({
  op: 'copy',
  collection,
  id,
  from: { collection: 'c', id: from },
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
  for (const collection of ['c', 'v'])
    expect(coalesced.documents(collection)).toEqual(oneByOne.documents(collection));
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

  test('given changes of a source around a copy, when coalesced, then the changes before it stay before it', () => {
    const batch = [
      upsert('a', 1n, { v: 1 }),
      copy('a@1', 'a', 2n),
      patch('a', 3n, { v: 2 }),
      copy('a@3', 'a', 4n),
      remove('a', 5n),
      copy('a@5', 'a', 6n),
    ];
    expect(coalesceChanges(batch)).toEqual(batch);
    expectSameOutcome([], batch);
    expectSameOutcome([upsert('a', 0n, { v: 0 })], batch);
  });

  test('given a copy and later changes of its source, when coalesced, then only those later changes merge', () => {
    const batch = [
      upsert('a', 1n, { v: 1 }),
      copy('a@1', 'a', 2n),
      upsert('a', 3n, { v: 2 }),
      patch('a', 4n, { w: 1 }),
    ];
    expect(coalesceChanges(batch)).toEqual([
      upsert('a', 1n, { v: 1 }),
      copy('a@1', 'a', 2n),
      upsert('a', 4n, { v: 2, w: 1 }),
    ]);
    expectSameOutcome([], batch);
  });

  test('given a copy of a copy made in the batch, when its source changes later, then nothing moves past it', () => {
    const batch = [
      upsert('a', 1n, { v: 1 }),
      copy('x', 'a', 2n, 'c'),
      copy('y', 'x', 3n),
      upsert('x', 4n, { replaced: true }),
    ];
    expect(coalesceChanges(batch)).toEqual(batch);
    expectSameOutcome([], batch);
  });

  test('given changes of a copy target, when coalesced, then a copy never merges into them, and an upsert or delete replaces it', () => {
    const beforeCopy = [upsert('t', 1n, { v: 1 }), copy('t', 'a', 2n, 'c'), patch('t', 3n, { w: 1 })];
    expect(coalesceChanges(beforeCopy)).toEqual(beforeCopy);
    expectSameOutcome([upsert('a', 0n, { from: 'a' })], beforeCopy);
    expectSameOutcome([], beforeCopy);
    expect(coalesceChanges([copy('t', 'a', 1n), copy('t', 'b', 2n)])).toHaveLength(2);
    const replaced = [copy('t', 'a', 1n, 'c'), upsert('t', 2n, { v: 2 })];
    expect(coalesceChanges(replaced)).toEqual([upsert('t', 2n, { v: 2 })]);
    expectSameOutcome([upsert('a', 0n)], replaced);
    const removed = [copy('t', 'a', 1n, 'c'), remove('t', 2n)];
    expect(coalesceChanges(removed)).toEqual([remove('t', 2n)]);
    expectSameOutcome([upsert('a', 0n)], removed);
  });

  test('given an upsert after a delete, when coalesced, then the upsert wins', () => {
    expect(coalesceChanges([remove('a', 1n), upsert('a', 2n, { v: 1 })])).toEqual([
      upsert('a', 2n, { v: 1 }),
    ]);
  });
});
