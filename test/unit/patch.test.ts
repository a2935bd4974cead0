import { applyPatch } from '../../infra/read-store/patch';

describe('applyPatch', () => {
  test('given a document sharing nested objects with an event, when patched, then neither is modified', () => {
    const fields = { a: 1, b: { c: 2 } };
    const doc = { id: 'x', fields, name: 'n' };
    const patched = applyPatch(doc, {
      op: 'patch',
      collection: 'c',
      id: 'x',
      position: 1n,
      set: { 'fields.a': 5, 'fields.b.d': 3, 'new.path': true },
      unset: ['fields.b.c', 'name'],
    });
    expect(patched).toEqual({ id: 'x', fields: { a: 5, b: { d: 3 } }, new: { path: true } });
    expect(doc).toEqual({ id: 'x', fields: { a: 1, b: { c: 2 } }, name: 'n' });
    expect(fields.b).toEqual({ c: 2 });
  });

  test('given a numeric field, when incremented, then the copy holds the sum and missing counts as 0', () => {
    const doc = { id: 'x', counts: { n: 2 } };
    expect(
      applyPatch(doc, {
        op: 'patch',
        collection: 'c',
        id: 'x',
        position: 1n,
        inc: { 'counts.n': 3, 'counts.m': 1 },
      }),
    ).toEqual({ id: 'x', counts: { n: 5, m: 1 } });
    expect(doc.counts).toEqual({ n: 2 });
  });
});
