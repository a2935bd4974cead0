import { OneAtATime } from '../../command-api/kit/one-at-a-time';

/** A promise and its resolve, to let a task finish when the test says so. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

test('tasks of one key run one after another, even when one fails; other keys do not wait', async () => {
  const queue = new OneAtATime();
  const started: string[] = [];
  const firstMayEnd = deferred();
  const first = queue.run('a', async () => {
    started.push('a1');
    await firstMayEnd.promise;
    throw new Error('a1 failed');
  });
  const second = queue.run('a', async () => {
    started.push('a2');
    return 'a2 done';
  });
  const other = queue.run('b', async () => {
    started.push('b1');
    return 'b1 done';
  });
  await expect(other).resolves.toBe('b1 done');
  expect(started).toEqual(['a1', 'b1']);
  firstMayEnd.resolve();
  await expect(first).rejects.toThrow('a1 failed');
  await expect(second).resolves.toBe('a2 done');
  expect(started).toEqual(['a1', 'b1', 'a2']);
});
