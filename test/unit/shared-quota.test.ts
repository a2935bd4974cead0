import type { AttemptLog } from '../../infra/attempts/port';
import { createSqliteAttemptLog } from '../../infra/attempts/sqlite';
import { ApiMeter } from '../../infra/http/metering';
import type { ReadStore } from '../../infra/read-store/port';

/** A tenant's per-minute API quota, shared by the processes of a deployment through the attempt log. */
const START = Date.parse('2026-11-23T08:00:00Z');
const unusedStore = {} as ReadStore;

let log: AttemptLog;
let clock: number;
const meter = (quotaPerMinute: number, shared: AttemptLog | null = log) =>
  new ApiMeter({ store: unusedStore, quotaPerMinute, now: () => clock, ...(shared && { shared }) });

beforeEach(() => {
  log = createSqliteAttemptLog({ path: ':memory:' });
  clock = START;
});
afterEach(() => log.close());

async function allowedOf(meters: readonly ApiMeter[], calls: number, tenant = 'acme'): Promise<number> {
  let allowed = 0;
  for (let call = 0; call < calls; call++)
    if ((await meters[call % meters.length]!.admit(tenant))!.allowed) allowed++;
  return allowed;
}

test('one process admits exactly its quota, and counts down RateLimit-Remaining call by call', async () => {
  const alone = meter(100);
  const remaining: number[] = [];
  for (let call = 0; call < 3; call++) remaining.push((await alone.admit('acme'))!.remaining);
  expect(remaining).toEqual([99, 98, 97]);
  expect(await allowedOf([alone], 200)).toBe(97);
});

test('three processes together never admit more than the quota, and leave at most a block each unused', async () => {
  const processes = [meter(100), meter(100), meter(100)];
  const allowed = await allowedOf(processes, 400);
  expect(allowed).toBeLessThanOrEqual(100);
  expect(allowed).toBeGreaterThanOrEqual(100 - 3 * 5);
  // Without the shared log each process would have admitted its own hundred.
  expect(await allowedOf([meter(100, null), meter(100, null)], 400)).toBe(200);
});

test('of calls sent at once to two processes, no more than the quota are admitted', async () => {
  const processes = [meter(7), meter(7)];
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, call) => processes[call % 2]!.admit('acme')),
  );
  expect(answers.filter((answer) => answer!.allowed).length).toBeLessThanOrEqual(7);
  expect(answers.filter((answer) => answer!.allowed).length).toBeGreaterThanOrEqual(6);
});

test('each tenant has its own quota, and a new minute a new one', async () => {
  const processes = [meter(10), meter(10)];
  expect(await allowedOf(processes, 30, 'acme')).toBe(10);
  expect(await allowedOf(processes, 30, 'globex')).toBe(10);
  clock += 60_000;
  expect(await allowedOf(processes, 30, 'acme')).toBe(10);
});
