import type { ReadModelChange } from '../../contracts/read-model-changes';
import { InMemoryReadModels } from '../support/given-when-then';

// The projection tests' fold must copy as the read stores do (test/contracts/read-store.ts).
describe('the in-memory read models', () => {
  const copy = (id: string, position: bigint, set?: Record<string, unknown>): ReadModelChange => ({
    op: 'copy',
    collection: 'versions',
    id,
    from: { collection: 'records', id: 'r' },
    position,
    ...(set ? { set } : {}),
  });

  test('given a record, when copied with set and then changed, then the copy is the record as it was, under its id', () => {
    const readModels = new InMemoryReadModels();
    readModels.apply([
      { op: 'upsert', collection: 'records', doc: { id: 'r', v: 1, fields: { a: 1 } }, position: 1n },
      copy('r@1', 2n, { validFrom: 1, 'fields.b': 2, skipped: undefined }),
      { op: 'patch', collection: 'records', id: 'r', set: { v: 2, 'fields.a': 9 }, position: 3n },
    ]);
    expect(readModels.documents('versions')).toEqual([
      { id: 'r@1', v: 1, fields: { a: 1, b: 2 }, validFrom: 1 },
    ]);
  });

  test('given a copy not newer than its target or of a missing source, when applied, then nothing changes', () => {
    const readModels = new InMemoryReadModels();
    readModels.apply([
      copy('missing', 1n),
      { op: 'upsert', collection: 'records', doc: { id: 'r', v: 1 }, position: 2n },
      { op: 'upsert', collection: 'versions', doc: { id: 'v', old: true }, position: 5n },
      copy('v', 5n),
      copy('v', 4n),
    ]);
    expect(readModels.documents('versions')).toEqual([{ id: 'v', old: true }]);
    readModels.apply([copy('v', 6n)]);
    expect(readModels.documents('versions')).toEqual([{ id: 'v', v: 1 }]);
  });
});
