import type { AttemptLog } from '../../infra/attempts/port';

/**
 * The attempt-log contract: every adapter must pass all of it, unchanged. Tests share one log and use keys
 * of their own, so the suite can run against a shared server.
 */
export interface AttemptLogUnderTest {
  /** A new handle on the store: the suite opens two, as two processes would (and closes them). */
  readonly open: () => Promise<AttemptLog>;
  /** After the handles are closed. */
  readonly cleanup: () => Promise<void>;
}

const T = Date.parse('2026-11-23T10:00:00Z');
let keySequence = 0;

function uniqueKey(label: string): string {
  keySequence += 1;
  return `t${keySequence}-${process.pid}-${label}`;
}

export function attemptLogContract(store: () => Promise<AttemptLogUnderTest>): void {
  let under: AttemptLogUnderTest;
  let log: AttemptLog;
  let other: AttemptLog;

  beforeAll(async () => {
    under = await store();
    log = await under.open();
    other = await under.open();
  });

  afterAll(async () => {
    await log.close();
    await other.close();
    await under.cleanup();
  });

  test('an add answers the key’s attempts so far, this one included, oldest first', async () => {
    const key = uniqueKey('add');
    expect(await log.list(key, T)).toEqual([]);
    expect((await log.add(key, T + 20, T + 60_000)).times).toEqual([T + 20]);
    expect((await log.add(key, T + 10, T + 60_000)).times).toEqual([T + 10, T + 20]);
    expect((await log.add(key, T + 30, T + 60_000)).times).toEqual([T + 10, T + 20, T + 30]);
    expect(await log.list(key, T + 40)).toEqual([T + 10, T + 20, T + 30]);
    expect(await log.list(uniqueKey('other'), T + 40)).toEqual([]);
  });

  test('equal times are separate attempts', async () => {
    const key = uniqueKey('equal');
    await log.add(key, T, T + 1000);
    expect((await log.add(key, T, T + 1000)).times).toEqual([T, T]);
  });

  test('an attempt counts until its expiry, then never again', async () => {
    const key = uniqueKey('expiry');
    await log.add(key, T, T + 1000);
    await log.add(key, T + 500, T + 5000);
    expect(await log.list(key, T + 999)).toEqual([T, T + 500]);
    expect(await log.list(key, T + 1000)).toEqual([T + 500]);
    expect((await log.add(key, T + 2000, T + 9000)).times).toEqual([T + 500, T + 2000]);
    expect(await log.list(key, T + 5000)).toEqual([T + 2000]);
  });

  test('remove forgets one attempt, named by the id its add answered', async () => {
    const key = uniqueKey('remove');
    const kept = await log.add(key, T, T + 1000);
    const removed = await log.add(key, T + 1, T + 1000);
    expect(removed.id).not.toBe(kept.id);
    await log.remove(key, removed.id);
    expect(await log.list(key, T)).toEqual([T]);
    // Another key's id, an id removed already, and ids no add answered change nothing.
    const elsewhere = await log.add(uniqueKey('elsewhere'), T, T + 1000);
    for (const id of [elsewhere.id, removed.id, 'not-an-id', '0', '']) await other.remove(key, id);
    expect(await other.list(key, T)).toEqual([T]);
  });

  test('clear forgets one key only', async () => {
    const key = uniqueKey('clear');
    const kept = uniqueKey('kept');
    await log.add(key, T, T + 1000);
    await log.add(kept, T, T + 1000);
    await log.clear(key);
    await log.clear(uniqueKey('never-used'));
    expect(await log.list(key, T)).toEqual([]);
    expect(await log.list(kept, T)).toEqual([T]);
  });

  test('sweep deletes what expired, of every key, and nothing else', async () => {
    // Far in the past: no other test's attempts expire this early.
    const past = Date.parse('2001-01-01T00:00:00Z');
    const first = uniqueKey('sweep-a');
    const second = uniqueKey('sweep-b');
    await log.add(first, past, past + 10);
    await log.add(second, past, past + 10);
    await log.add(second, past + 5, past + 1000);
    expect(await log.sweep(past + 10)).toBe(2);
    expect(await log.sweep(past + 10)).toBe(0);
    expect(await log.list(second, past)).toEqual([past + 5]);
  });

  test('another handle on the same store sees the attempts, and concurrent adds all count', async () => {
    const key = uniqueKey('shared');
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        (index % 2 === 0 ? log : other).add(key, T + index, T + 60_000),
      ),
    );
    expect(await other.list(key, T)).toHaveLength(10);
    expect(await log.list(key, T)).toHaveLength(10);
    // Each add saw itself and every add stored before it: at most k answers hold k attempts or fewer, so
    // a limit of k checked on the answers lets k attempts through, however they interleave.
    const sizes = answers.map(({ times }) => times.length).sort((a, b) => a - b);
    sizes.forEach((size, rank) => expect(size).toBeGreaterThanOrEqual(rank + 1));
    expect(sizes[sizes.length - 1]).toBe(10);
  });

  test('keys are hashes or short names; anything else is refused', async () => {
    await expect(log.add('has space', T, T + 1)).rejects.toThrow('not valid');
    await expect(log.list('', T)).rejects.toThrow('not valid');
    await expect(log.add('x'.repeat(201), T, T + 1)).rejects.toThrow('not valid');
    await expect(log.add(uniqueKey('time'), 1.5, T)).rejects.toThrow('whole milliseconds');
  });
}
