import { ApiMeter } from '../../infra/http/metering';
import type { ReadStore } from '../../infra/read-store/port';
import { createSqliteReadStore } from '../../infra/read-store/sqlite';

/** API usage counts: kept until the read store takes them, so a failed flush loses nothing it can still write. */
const NOW = Date.parse('2026-11-29T10:00:00Z');

let store: ReadStore;
let refusing: boolean;
let flaky: ReadStore;

beforeEach(async () => {
  store = await createSqliteReadStore({ path: ':memory:' });
  refusing = false;
  flaky = new Proxy(store, {
    get: (target, name, receiver) =>
      name === 'apply' && refusing
        ? () => Promise.reject(new Error('disk full'))
        : (Reflect.get(target, name, receiver) as unknown),
  });
});
afterEach(() => store.close());

test('given counts a flush could not write, when the store takes them again, then none is lost', async () => {
  const meter = new ApiMeter({ store: flaky, now: () => NOW });
  meter.record('acme', 'token-1');
  meter.record('acme', 'token-1');
  meter.record('acme', 'token-2');
  meter.record('globex', 'token-1');
  expect(meter.pendingCounts).toBe(3);

  refusing = true;
  await expect(meter.flush()).rejects.toThrow('disk full');
  expect(meter.pendingCounts).toBe(3);
  meter.record('acme', 'token-2');

  refusing = false;
  await meter.flush();
  expect(meter.pendingCounts).toBe(0);
  expect(await meter.usage('acme', '2026-11-29', '2026-11-29')).toEqual(
    expect.arrayContaining([
      { day: '2026-11-29', credential: 'token-1', calls: 2 },
      { day: '2026-11-29', credential: 'token-2', calls: 2 },
    ]),
  );
  expect(await meter.usage('globex', '2026-11-29', '2026-11-29')).toEqual([
    { day: '2026-11-29', credential: 'token-1', calls: 1 },
  ]);
});

test('given nothing counted since the last flush, then nothing is pending and a flush writes nothing', async () => {
  const meter = new ApiMeter({ store: flaky, now: () => NOW });
  meter.record('acme', 'token-1');
  await meter.flush();
  refusing = true;
  expect(meter.pendingCounts).toBe(0);
  await expect(meter.flush()).resolves.toBeUndefined();
});
