import { applyPatch, copiedDocument } from '../../infra/read-store/patch';

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

  test('keys a prototype has (__proto__, constructor) become own keys of the copy, and no prototype changes', () => {
    const doc = { id: 'x' };
    const patched = applyPatch(doc, {
      op: 'patch',
      collection: 'c',
      id: 'x',
      position: 1n,
      set: { '__proto__.polluted': true, constructor: 'c', 'toString.x': 1 },
      inc: { 'valueOf.n': 2 },
    });
    expect(Object.keys(patched).sort()).toEqual(['__proto__', 'constructor', 'id', 'toString', 'valueOf']);
    expect(Object.getOwnPropertyDescriptor(patched, '__proto__')?.value).toEqual({ polluted: true });
    expect(patched.constructor).toBe('c');
    expect(patched.toString).toEqual({ x: 1 });
    expect(Object.getPrototypeOf(patched)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
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

describe('copiedDocument', () => {
  test('given a source, when copied with set, then the copy has the target id in its place and the source is unchanged', () => {
    const source = { fields: { a: 1, b: { c: 2 } }, id: 'r', name: 'n' };
    const copy = copiedDocument(source, {
      op: 'copy',
      collection: 'versions',
      id: 'r@2',
      from: { collection: 'records', id: 'r' },
      set: { 'fields.b.d': 3, validFrom: 2, skipped: undefined },
      position: 2n,
    });
    expect(JSON.stringify(copy)).toBe(
      JSON.stringify({ fields: { a: 1, b: { c: 2, d: 3 } }, id: 'r@2', name: 'n', validFrom: 2 }),
    );
    expect(source).toEqual({ fields: { a: 1, b: { c: 2 } }, id: 'r', name: 'n' });
  });

  test('given a set inside a non-object value, when copied, then it is refused, naming the copy', () => {
    expect(() =>
      copiedDocument(
        { id: 'r', name: 'n' },
        {
          op: 'copy',
          collection: 'versions',
          id: 'r@2',
          from: { collection: 'records', id: 'r' },
          set: { 'name.first': 'x' },
          position: 2n,
        },
      ),
    ).toThrow('copy to r@2: cannot create name.first inside the non-object value at name');
  });
});
