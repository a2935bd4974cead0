import { unitVector } from '../../infra/ai/embeddings/port';
import { SpaceVectors } from '../../infra/vector-index/space-vectors';

const DIMENSION = 64;

/** A seeded random generator (mulberry32), so a failure can be run again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Vectors around a few centres, as texts on a few topics are. */
function dataset(count: number, seed: number): Float32Array[] {
  const next = random(seed);
  const centres = Array.from({ length: 8 }, () =>
    Float32Array.from({ length: DIMENSION }, () => next() * 2 - 1),
  );
  return Array.from({ length: count }, () => {
    const centre = centres[Math.floor(next() * centres.length)]!;
    return unitVector(centre.map((value) => value + (next() * 2 - 1) * 0.8));
  });
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, index) => sum + value * b[index]!, 0);

describe('the vectors of a space', () => {
  test('the scan finds the records an exact search finds, nearest and farthest, by their best chunk', async () => {
    const space = await SpaceVectors.create(DIMENSION);
    const vectors = dataset(2000, 1);
    // Records 1..1000 with two chunks each.
    const chunks = new Map<number, Float32Array[]>();
    for (let recordId = 1; recordId <= 1000; recordId++) {
      const own = [vectors[2 * recordId - 2]!, vectors[2 * recordId - 1]!];
      chunks.set(recordId, own);
      space.set(recordId, recordId % 3, own);
    }
    expect(space.size).toBe(1000);
    const exact = (query: Float32Array) =>
      [...chunks].map(([recordId, own]) => ({ recordId, score: Math.max(...own.map((v) => dot(v, query))) }));
    let found = 0;
    let farFound = 0;
    const queries = dataset(20, 2);
    for (const query of queries) {
      const truth = exact(query).sort((a, b) => b.score - a.score);
      const near = space.scan({ vector: query, count: 40, order: 'nearest', records: null, modules: null });
      const top20 = new Set(near.slice(0, 40).map((hit) => hit.recordId));
      found += truth.slice(0, 20).filter((hit) => top20.has(hit.recordId)).length;
      for (const hit of near) {
        const score = truth.find((entry) => entry.recordId === hit.recordId)!.score;
        expect(Math.abs(hit.estimate - score)).toBeLessThan(0.02);
      }
      const far = space.scan({ vector: query, count: 40, order: 'farthest', records: null, modules: null });
      const farthest = new Set(far.map((hit) => hit.recordId));
      farFound += truth.slice(-20).filter((hit) => farthest.has(hit.recordId)).length;
    }
    // The true top 20 are within the scan's top 40 (twice the limit: the caller re-ranks them exactly).
    expect(found / (20 * queries.length)).toBeGreaterThanOrEqual(0.99);
    expect(farFound / (20 * queries.length)).toBeGreaterThanOrEqual(0.99);
  });

  test('records and modules restrict the scan; removed and replaced records are gone or changed', async () => {
    const space = await SpaceVectors.create(DIMENSION);
    const vectors = dataset(300, 3);
    for (let recordId = 1; recordId <= 300; recordId++)
      space.set(recordId, recordId <= 150 ? 1 : 2, [vectors[recordId - 1]!]);
    const query = vectors[9]!;
    const all = space.scan({ vector: query, count: 5, order: 'nearest', records: null, modules: null });
    expect(all[0]).toMatchObject({ recordId: 10 });
    expect(all[0]!.estimate).toBeCloseTo(1, 1);
    const onlyModule2 = space.scan({
      vector: query,
      count: 300,
      order: 'nearest',
      records: null,
      modules: new Set([2]),
    });
    expect(onlyModule2).toHaveLength(150);
    expect(onlyModule2.every((hit) => hit.recordId > 150)).toBe(true);
    const some = space.scan({
      vector: query,
      count: 10,
      order: 'nearest',
      records: new Set([3, 10, 200, 999]),
      modules: new Set([1]),
    });
    expect(some.map((hit) => hit.recordId).sort((a, b) => a - b)).toEqual([3, 10]);

    space.remove(10);
    expect(space.has(10)).toBe(false);
    expect(
      space
        .scan({ vector: query, count: 300, order: 'nearest', records: null, modules: null })
        .some((hit) => hit.recordId === 10),
    ).toBe(false);
    // Every other record is still found with its own vector (rows moved into holes keep their record).
    for (const recordId of [1, 150, 299, 300]) {
      const [hit] = space.scan({
        vector: vectors[recordId - 1]!,
        count: 1,
        order: 'nearest',
        records: null,
        modules: null,
      });
      expect(hit!.recordId).toBe(recordId);
    }
    space.set(11, 1, [vectors[100]!, vectors[101]!]);
    const [moved] = space.scan({
      vector: vectors[101]!,
      count: 1,
      order: 'nearest',
      records: new Set([11, 102]),
      modules: null,
    });
    expect(moved!.recordId).toBe(11);
    expect(space.size).toBe(299);
  });

  test('grows past its first memory and stays right', async () => {
    const space = await SpaceVectors.create(DIMENSION);
    const vectors = dataset(5000, 4);
    vectors.forEach((vector, index) => space.set(index + 1, 1, [vector]));
    for (let recordId = 1; recordId <= 5000; recordId += 2) space.remove(recordId);
    expect(space.size).toBe(2500);
    const [hit] = space.scan({
      vector: vectors[4999]!,
      count: 1,
      order: 'nearest',
      records: null,
      modules: null,
    });
    expect(hit!.recordId).toBe(5000);
    expect(space.bytes).toBeGreaterThan(5000 * DIMENSION);
  });

  test('refuses a dimension the kernel cannot take and vectors of another dimension', async () => {
    await expect(SpaceVectors.create(10)).rejects.toThrow(/multiple of 16/);
    const space = await SpaceVectors.create(DIMENSION);
    expect(() => space.set(1, 1, [new Float32Array(32)])).toThrow(/32 dimensions/);
    expect(
      space.scan({
        vector: new Float32Array(DIMENSION),
        count: 5,
        order: 'nearest',
        records: null,
        modules: null,
      }),
    ).toEqual([]);
  });
});
