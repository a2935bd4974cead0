import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkpointName } from '../../contracts/read-models';
import { streamName } from '../../contracts/streams';
import { createSqliteEventStore } from '../../infra/event-store/sqlite';
import { createLogger } from '../../infra/logging';
import { createSqliteReadStore } from '../../infra/read-store/sqlite';
import { ProjectionRunner } from '../../projections/runner';
import { spacesProjection } from '../../projections/read-models/spaces-and-modules';
import { newEvent } from '../contracts/event-store';

/** The stored checkpoint is what a query API in another process waits on for `X-Min-Position`. */
test('a projection that skips the last events still stores a checkpoint past them within the idle interval', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'projection-runner-'));
  const events = createSqliteEventStore({ path: join(dir, 'events.db'), pollIntervalMs: 20 });
  const readStore = createSqliteReadStore({ path: join(dir, 'read.db') });
  const runner = new ProjectionRunner(spacesProjection, 1, {
    events,
    readStore,
    logger: createLogger('silent'),
  });
  const stored = async () => BigInt((await readStore.getCheckpoint(checkpointName('spaces', 1))) ?? '0');
  const until = async (done: () => Promise<boolean>, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await done()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  try {
    await runner.start();
    const space = await events.append(streamName('space', 'test', 1), [
      newEvent('SpaceCreated', { spaceId: 1, name: 'Sales' }),
    ]);
    await until(async () => (await stored()) >= space.position, 5000);
    expect(await stored()).toBe(space.position);

    // Right after a write: these events of another category are skipped, their checkpoint held back.
    let last = space.position;
    for (let index = 0; index < 3; index++) {
      last = (await events.append(streamName('record', 'test', index + 1), [newEvent()])).position;
    }
    await until(async () => runner.position >= last, 5000);
    expect(runner.position).toBe(last);

    await until(async () => (await stored()) >= last, 3000);
    expect(await stored()).toBe(last);
  } finally {
    await runner.stop();
    await readStore.close();
    await events.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
