import { parentPort, workerData } from 'node:worker_threads';
import { createSqliteReadStore } from '../infra/read-store/sqlite';
import type { FromReadThread, ReadThreadData, ToReadThread } from '../infra/read-store/sqlite-read-pool';

/**
 * A thread of the SQLite read pool (see `SqliteReadPool`): the read store on a read-only connection of its
 * own (with the same registered functions as every connection), running one list or count query at a time.
 */
function main(): void {
  const port = parentPort;
  if (!port) throw new Error('read-thread must run as a worker thread');
  const post = (message: FromReadThread): void => port.postMessage(message);
  const { path } = workerData as ReadThreadData;
  let store: ReturnType<typeof createSqliteReadStore>;
  try {
    store = createSqliteReadStore({ path, readOnly: true });
  } catch (error) {
    post({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
    return;
  }
  port.on('message', (message: ToReadThread) => {
    if (message.kind === 'stop') {
      void store.close().then(() => {
        post({ kind: 'stopped' });
        port.close();
      });
      return;
    }
    const { id } = message;
    const answer =
      message.kind === 'find'
        ? store.find(message.collection, message.query)
        : store.count(message.collection, message.query);
    answer.then(
      (value) => post({ kind: 'result', id, value }),
      (error: unknown) =>
        post({
          kind: 'error',
          id,
          name: error instanceof Error ? error.name : 'Error',
          message: error instanceof Error ? error.message : String(error),
        }),
    );
  });
  post({ kind: 'ready' });
}

main();
