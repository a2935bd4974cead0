import { unitVector } from '../../infra/ai/embeddings/port';
import type { RecordVectors, VectorIndex, VectorQuery } from '../../infra/vector-index/port';

export const CONTRACT_DIMENSION = 32;

/** A unit vector leaning on axis `axis` (with a little of `axis + 1`), so scores are known in advance. */
export function axisVector(axis: number, lean = 0.2): Float32Array {
  const vector = new Float32Array(CONTRACT_DIMENSION);
  vector[axis % CONTRACT_DIMENSION] = 1;
  vector[(axis + 1) % CONTRACT_DIMENSION] = lean;
  return unitVector(vector);
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, index) => sum + value * b[index]!, 0);

export interface VectorIndexUnderTest {
  readonly index: VectorIndex;
  cleanup(): Promise<void>;
}

/** The vector-index port's contract: every adapter passes the same suite. */
export function vectorIndexContract(open: () => Promise<VectorIndexUnderTest>): void {
  let subject: VectorIndexUnderTest;
  let index: VectorIndex;
  let tenant: string;
  let counter = 0;
  beforeEach(async () => {
    subject = await open();
    index = subject.index;
    // A system of its own per test: adapters on a shared server keep other tests' points.
    tenant = `t${Date.now().toString(36)}${counter++}`;
  });
  afterEach(async () => {
    await subject.cleanup();
  });

  const record = (
    recordId: number,
    vectors: Float32Array[],
    more: Partial<RecordVectors> = {},
  ): RecordVectors => ({
    tenant,
    recordId,
    spaceId: 1,
    moduleId: 10,
    position: 100n,
    vectors,
    ...more,
  });
  const query = (vector: Float32Array, more: Partial<VectorQuery> = {}): VectorQuery => ({
    tenant,
    spaceId: 1,
    vector,
    limit: 10,
    order: 'nearest',
    records: null,
    modules: null,
    ...more,
  });

  test('an identity and a checkpoint are kept; a reset empties the index under a new one', async () => {
    await index.reset('model-a/recipe-1');
    expect(await index.identity()).toBe('model-a/recipe-1');
    expect(await index.checkpoint()).toBe(0n);
    await index.saveCheckpoint(12_345_678_901n);
    expect(await index.checkpoint()).toBe(12_345_678_901n);
    await index.upsert([record(1, [axisVector(0)])]);
    expect(await index.count(tenant, 1)).toBe(1);
    await index.reset('model-b/recipe-1');
    expect(await index.identity()).toBe('model-b/recipe-1');
    expect(await index.checkpoint()).toBe(0n);
    expect(await index.count(tenant, 1)).toBe(0);
    expect(await index.search(query(axisVector(0)))).toEqual([]);
  });

  test('nearest first, with exact cosine similarities, within one space and system, up to the limit', async () => {
    await index.upsert([
      record(1, [axisVector(0)]),
      record(2, [axisVector(1)]),
      record(3, [axisVector(0, 0.6)]),
      record(4, [axisVector(0)], { spaceId: 2 }),
      { ...record(5, [axisVector(0)]), tenant: `${tenant}x` },
    ]);
    const probe = axisVector(0);
    const hits = await index.search(query(probe));
    expect(hits.map((hit) => hit.recordId)).toEqual([1, 3, 2]);
    expect(hits[0]!.similarity).toBeCloseTo(1, 5);
    expect(hits[1]!.similarity).toBeCloseTo(dot(probe, axisVector(0, 0.6)), 5);
    expect(hits[2]!.similarity).toBeCloseTo(dot(probe, axisVector(1)), 5);
    expect((await index.search(query(probe, { limit: 2 }))).map((hit) => hit.recordId)).toEqual([1, 3]);
    expect(await index.count(tenant, 1)).toBe(3);
    expect(await index.count(tenant, 2)).toBe(1);
  });

  test('farthest first for outliers; floors drop the too alike and the too unlike', async () => {
    await index.upsert([
      record(1, [axisVector(0)]),
      record(2, [axisVector(5)]),
      record(3, [axisVector(0, 0.6)]),
    ]);
    const probe = axisVector(0);
    const far = await index.search(query(probe, { order: 'farthest' }));
    expect(far.map((hit) => hit.recordId)).toEqual([2, 3, 1]);
    // Distances: record 2 about 1, record 3 about 0.13, record 1 zero.
    expect(
      (await index.search(query(probe, { order: 'farthest', minDistance: 0.5 }))).map((hit) => hit.recordId),
    ).toEqual([2]);
    expect((await index.search(query(probe, { minSimilarity: 0.8 }))).map((hit) => hit.recordId)).toEqual([
      1, 3,
    ]);
  });

  test("a record's score is its best chunk's", async () => {
    await index.upsert([record(1, [axisVector(3), axisVector(0)]), record(2, [axisVector(0, 0.5)])]);
    const hits = await index.search(query(axisVector(0)));
    expect(hits.map((hit) => hit.recordId)).toEqual([1, 2]);
    expect(hits[0]!.similarity).toBeCloseTo(1, 5);
  });

  test('records of many chunks come once each, ranked by their best, up to the limit', async () => {
    const leaning = (from: number) => [0, 1, 2, 3, 4].map((step) => axisVector(0, from + step / 10));
    await index.upsert([record(1, leaning(0.1)), record(2, leaning(0.6)), record(3, [axisVector(5)])]);
    const probe = axisVector(0, 0);
    const two = await index.search(query(probe, { limit: 2 }));
    expect(two.map((hit) => hit.recordId)).toEqual([1, 2]);
    expect(two[0]!.similarity).toBeCloseTo(dot(probe, axisVector(0, 0.1)), 5);
    expect(two[1]!.similarity).toBeCloseTo(dot(probe, axisVector(0, 0.6)), 5);
    expect((await index.search(query(probe, { limit: 3 }))).map((hit) => hit.recordId)).toEqual([1, 2, 3]);
    expect(
      (await index.search(query(probe, { order: 'farthest', limit: 2 }))).map((hit) => hit.recordId),
    ).toEqual([3, 2]);
  });

  test('outliers rank a record by its most alike chunk: one close chunk keeps it from being far', async () => {
    await index.upsert([
      record(1, [axisVector(0, 0), axisVector(5)]),
      record(2, [axisVector(0, 1)]),
      record(3, [axisVector(0, 0.3)]),
      record(4, [axisVector(6), axisVector(0, 0.05)]),
    ]);
    const probe = axisVector(0, 0);
    const far = await index.search(query(probe, { order: 'farthest' }));
    expect(far.map((hit) => hit.recordId)).toEqual([2, 3, 4, 1]);
    expect(far[0]!.similarity).toBeCloseTo(dot(probe, axisVector(0, 1)), 5);
    expect(far[3]!.similarity).toBeCloseTo(1, 5);
    // The two least alike chunks are records 1's and 4's, whose other chunks are close: neither is an answer.
    expect(
      (await index.search(query(probe, { order: 'farthest', limit: 1 }))).map((hit) => hit.recordId),
    ).toEqual([2]);
    expect(
      (await index.search(query(probe, { order: 'farthest', minDistance: 0.2 }))).map((hit) => hit.recordId),
    ).toEqual([2]);
  });

  test('only the records and modules asked for', async () => {
    await index.upsert([
      record(1, [axisVector(0)]),
      record(2, [axisVector(0, 0.3)], { moduleId: 11 }),
      record(3, [axisVector(0, 0.4)]),
    ]);
    const probe = axisVector(0);
    expect(
      (await index.search(query(probe, { records: new Set([2, 3, 99]) }))).map((hit) => hit.recordId),
    ).toEqual([2, 3]);
    expect((await index.search(query(probe, { modules: new Set([11]) }))).map((hit) => hit.recordId)).toEqual(
      [2],
    );
    expect(await index.search(query(probe, { records: new Set([2]), modules: new Set([10]) }))).toEqual([]);
  });

  test('a later position wins whatever the order of arrival; a removal holds against older writes', async () => {
    await index.upsert([record(1, [axisVector(0)], { position: 200n })]);
    await index.upsert([record(1, [axisVector(7)], { position: 150n })]);
    expect((await index.search(query(axisVector(0))))[0]!.similarity).toBeCloseTo(1, 5);
    await index.remove(tenant, [1], 180n);
    expect(await index.count(tenant, 1)).toBe(1);
    await index.remove(tenant, [1], 300n);
    expect(await index.count(tenant, 1)).toBe(0);
    await index.upsert([record(1, [axisVector(0)], { position: 250n })]);
    expect(await index.search(query(axisVector(0)))).toEqual([]);
    // A restore comes later still.
    await index.upsert([record(1, [axisVector(0)], { position: 400n })]);
    expect((await index.search(query(axisVector(0)))).map((hit) => hit.recordId)).toEqual([1]);
    // The same write again changes nothing.
    await index.upsert([record(1, [axisVector(0)], { position: 400n })]);
    expect(await index.count(tenant, 1)).toBe(1);
  });

  test('a record moved to another space is found there only; one without text is not found', async () => {
    await index.upsert([record(1, [axisVector(0)]), record(2, [axisVector(0)])]);
    expect(await index.search(query(axisVector(0)))).toHaveLength(2);
    await index.upsert([
      record(1, [axisVector(0)], { spaceId: 2, position: 101n }),
      record(2, [], { position: 101n }),
    ]);
    expect(await index.search(query(axisVector(0)))).toEqual([]);
    expect((await index.search(query(axisVector(0), { spaceId: 2 }))).map((hit) => hit.recordId)).toEqual([
      1,
    ]);
  });

  test('what the index holds of a record: its space, module and text digest; a removed one has none', async () => {
    await index.upsert([
      record(1, [axisVector(0)], { textHash: 'h1', spaceId: 2, moduleId: 11 }),
      record(2, [axisVector(1)]),
    ]);
    await index.remove(tenant, [2], 200n);
    const held = await index.held(tenant, [1, 2, 3]);
    expect(held.get(1)).toEqual({ spaceId: 2, moduleId: 11, textHash: 'h1' });
    expect(held.get(2)?.textHash ?? null).toBeNull();
    expect(held.has(3)).toBe(false);
  });

  test('vectors of another dimension are refused', async () => {
    await expect(index.upsert([record(1, [new Float32Array(CONTRACT_DIMENSION + 1)])])).rejects.toThrow(
      RangeError,
    );
    await expect(index.search(query(new Float32Array(8)))).rejects.toThrow(RangeError);
  });
}
