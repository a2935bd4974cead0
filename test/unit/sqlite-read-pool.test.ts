import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { READ_THREAD_ENTRY } from '../../bin/threads';
import { PlatformError } from '../../contracts/errors';
import type { StoreQuery } from '../../languages/filter/store-query';
import type { ReadModelChange } from '../../contracts/read-model-changes';
import { createSqliteReadStore, type SqliteReadStore } from '../../infra/read-store/sqlite';
import { SqliteReadPool, type SqliteReadPoolOptions } from '../../infra/read-store/sqlite-read-pool';
import { startTypeScriptWorker } from '../../infra/worker-thread';

const ROWS = 50_000;
/** Every row through the registered `like` function and an unindexed sort: tens of milliseconds. */
const HEAVY: StoreQuery = {
  filter: { kind: 'like', path: 'name', pattern: '%a%b%c%d%zz%', negate: false },
  sort: [{ path: 'note', direction: 'desc' }],
  limit: 10,
};
/**
 * Fifty `like` calls on every row (all fail, so the `or` evaluates each): seconds, and still far past
 * `BUDGET_MS` with the cheapest matcher, since each call into JavaScript costs a fraction of a microsecond.
 */
const TOO_HEAVY: StoreQuery = {
  filter: {
    kind: 'or',
    children: Array.from({ length: 50 }, (_, index) => ({
      kind: 'like' as const,
      path: 'name',
      pattern: `%a%b%c%d%z${index}%`,
      negate: false,
    })),
  },
  sort: [{ path: 'note', direction: 'desc' }],
  limit: 10,
};
/** Far below the cost of `TOO_HEAVY` and far above a cheap query's, even on a busy machine. */
const BUDGET_MS = 100;
const CHEAP: StoreQuery = { filter: { kind: 'compare', path: 'id', op: 'eq', value: 'r7' }, limit: 1 };

let directory: string;
let path: string;
let writer: SqliteReadStore;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'read-pool-'));
  path = join(directory, 'read-models.db');
  writer = createSqliteReadStore({ path });
  for (let start = 0; start < ROWS; start += 5000) {
    const changes: ReadModelChange[] = Array.from({ length: 5000 }, (_, offset) => {
      const n = start + offset;
      return {
        op: 'upsert',
        collection: 'records',
        position: 1n,
        doc: { id: `r${n}`, name: `abcd record ${n} ${'x'.repeat(40)}`, note: `${(n * 7919) % ROWS}` },
      };
    });
    await writer.apply(changes);
  }
});

afterAll(async () => {
  await writer.close();
  rmSync(directory, { recursive: true, force: true });
});

/** A pool whose started threads the test can see. */
async function startPool(
  options: Partial<SqliteReadPoolOptions> = {},
): Promise<{ pool: SqliteReadPool; workers: Worker[] }> {
  const workers: Worker[] = [];
  const pool = await SqliteReadPool.start({
    size: 1,
    budgetMs: 10_000,
    queuePerLane: 100,
    startWorker: () => {
      const worker = startTypeScriptWorker(READ_THREAD_ENTRY, { path });
      workers.push(worker);
      return worker;
    },
    ...options,
  });
  return { pool, workers };
}

function exitOf(worker: Worker): Promise<number> {
  return new Promise((resolve) => {
    if (worker.threadId === -1) resolve(0);
    else worker.once('exit', resolve);
  });
}

describe('SqliteReadPool', () => {
  test('a query past the budget is refused with E4220; its thread ends and another serves the next query', async () => {
    const { pool, workers } = await startPool({ budgetMs: BUDGET_MS });
    try {
      const refused = await pool.find('a', 'records', TOO_HEAVY).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(PlatformError);
      expect(refused).toMatchObject({ kind: 'query_too_expensive', code: 'E4220', status: 422 });
      expect((refused as Error).message).toMatch(/narrow the filter/);
      // Terminated inside its statement: the `like` function is where termination takes effect.
      await exitOf(workers[0]!);
      expect(workers).toHaveLength(2);
      await expect(pool.find('a', 'records', CHEAP)).resolves.toMatchObject({ items: [{ id: 'r7' }] });
    } finally {
      await pool.close();
    }
  });

  test('a count past the budget is refused the same way', async () => {
    const { pool } = await startPool({ budgetMs: BUDGET_MS });
    try {
      await expect(pool.count('a', 'records', { filter: TOO_HEAVY.filter! })).rejects.toMatchObject({
        code: 'E4220',
      });
      await expect(pool.count('a', 'records', { filter: CHEAP.filter! })).resolves.toBe(1);
    } finally {
      await pool.close();
    }
  });

  test("one lane's waiting queries delay another lane's by at most the query already running", async () => {
    const { pool } = await startPool();
    try {
      const finished: string[] = [];
      const track = (label: string, answer: Promise<unknown>): Promise<unknown> =>
        answer.then(() => finished.push(label));
      const heavy = Array.from({ length: 6 }, (_, index) =>
        track(`a${index}`, pool.find('a', 'records', HEAVY)),
      );
      const other = track('b', pool.find('b', 'records', CHEAP));
      const third = track('c', pool.count('c', 'records', { filter: CHEAP.filter! }));
      await Promise.all([...heavy, other, third]);
      // First in first served would have put b and c after all six of a's.
      expect(finished).toEqual(['a0', 'b', 'c', 'a1', 'a2', 'a3', 'a4', 'a5']);
    } finally {
      await pool.close();
    }
  });

  test('lanes take turns: two lanes with many queries each alternate', async () => {
    const { pool } = await startPool();
    try {
      const finished: string[] = [];
      const all = ['a', 'b'].flatMap((lane) =>
        Array.from({ length: 3 }, () => pool.find(lane, 'records', CHEAP).then(() => finished.push(lane))),
      );
      await Promise.all(all);
      expect(finished).toEqual(['a', 'b', 'a', 'b', 'a', 'b']);
    } finally {
      await pool.close();
    }
  });

  test('a lane may have only so many queries waiting; past that 429, while other lanes are still served', async () => {
    const { pool } = await startPool({ queuePerLane: 2 });
    try {
      const accepted = [0, 1, 2].map(() => pool.find('a', 'records', HEAVY));
      expect(pool.waiting('a')).toBe(2);
      for (const extra of [pool.find('a', 'records', CHEAP), pool.count('a', 'records', {})]) {
        await expect(extra).rejects.toMatchObject({ kind: 'rate_limited', status: 429 });
      }
      await expect(pool.find('b', 'records', CHEAP)).resolves.toMatchObject({ items: [{ id: 'r7' }] });
      await Promise.all(accepted);
      // Room again once the waiting ones ran.
      await expect(pool.find('a', 'records', CHEAP)).resolves.toMatchObject({ items: [{ id: 'r7' }] });
    } finally {
      await pool.close();
    }
  });

  test('a thread that dies under a query: the query is refused with 503, another thread serves the rest', async () => {
    const exits: number[] = [];
    const { pool, workers } = await startPool({ onThreadExit: (code) => exits.push(code) });
    try {
      const running = pool.find('a', 'records', HEAVY);
      const waiting = pool.find('b', 'records', CHEAP);
      await workers[0]!.terminate();
      await expect(running).rejects.toMatchObject({ kind: 'unavailable', status: 503 });
      await expect(waiting).resolves.toMatchObject({ items: [{ id: 'r7' }] });
      expect(exits).toHaveLength(1);
      expect(workers).toHaveLength(2);
    } finally {
      await pool.close();
    }
  });

  test('the store refuses a bad query on the thread: the same error class and message as on the main thread', async () => {
    const { pool } = await startPool();
    try {
      await expect(pool.find('a', 'records', { sort: [{ path: 'a..b', direction: 'asc' }] })).rejects.toThrow(
        TypeError,
      );
      await expect(pool.find('a', 'records', { offset: -1 })).rejects.toThrow(RangeError);
      await expect(pool.find('a', 'records', CHEAP)).resolves.toMatchObject({ items: [{ id: 'r7' }] });
    } finally {
      await pool.close();
    }
  });

  test('close refuses waiting queries, ends every thread and refuses later queries', async () => {
    const { pool, workers } = await startPool({ size: 2 });
    const queued = Array.from({ length: 4 }, () => pool.find('a', 'records', HEAVY));
    const outcomes = Promise.allSettled(queued);
    await pool.close();
    const settled = await outcomes;
    expect(settled.some((outcome) => outcome.status === 'rejected')).toBe(true);
    for (const outcome of settled) {
      if (outcome.status === 'rejected') expect(outcome.reason).toMatchObject({ kind: 'unavailable' });
    }
    expect(workers).toHaveLength(2);
    expect(workers.map((worker) => worker.threadId)).toEqual([-1, -1]);
    await expect(pool.find('a', 'records', CHEAP)).rejects.toMatchObject({ kind: 'unavailable' });
  });

  test('a pool over a file that does not exist fails to start, leaving no thread behind', async () => {
    const workers: Worker[] = [];
    await expect(
      SqliteReadPool.start({
        size: 1,
        budgetMs: 1000,
        queuePerLane: 1,
        startWorker: () => {
          const worker = startTypeScriptWorker(READ_THREAD_ENTRY, { path: join(directory, 'missing.db') });
          workers.push(worker);
          return worker;
        },
      }),
    ).rejects.toThrow(/read thread failed to start/);
    await exitOf(workers[0]!);
  });
});
