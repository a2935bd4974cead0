import type { NewEvent } from '../../contracts/events/envelope';
import { newId } from '../../contracts/ids';
import type { TextEmbedder } from '../../infra/ai/embeddings/port';
import { createSqliteEventStore } from '../../infra/event-store/sqlite';
import { createLogger } from '../../infra/logging';
import type { ReadModels } from '../../infra/read-store/read-models';
import type { VectorIndex } from '../../infra/vector-index/port';
import { VectorProjection } from '../../projections/vectors/vector-projection';

function hookEvent(): NewEvent {
  const id = newId();
  return {
    id,
    type: 'WebhookRequestReceived',
    schemaVersion: 1,
    data: {},
    metadata: {
      tenant: 'acme',
      actor: { userId: '1' },
      correlationId: id,
      causationId: id,
      commandId: id,
      occurredAt: new Date().toISOString(),
    },
  };
}

/** An index that only keeps its checkpoint, and counts the saves (no record is embedded in these tests). */
function checkpointIndex(): { index: VectorIndex; saves: bigint[] } {
  const saves: bigint[] = [];
  let identity: string | null = null;
  const index: Pick<VectorIndex, 'identity' | 'reset' | 'checkpoint' | 'saveCheckpoint'> = {
    identity: async () => identity,
    reset: async (made) => void (identity = made),
    checkpoint: async () => saves.at(-1) ?? 0n,
    saveCheckpoint: async (position) => void saves.push(position),
  };
  return { index: index as VectorIndex, saves };
}

describe('the vector projection over events it does not embed', () => {
  test('their positions are saved at most once a second while it runs, and the last one when it stops', async () => {
    const events = createSqliteEventStore({ path: ':memory:', pollIntervalMs: 5 });
    const { index, saves } = checkpointIndex();
    const embedder: TextEmbedder = {
      model: 'test-model',
      dimension: 3,
      embed: () => Promise.reject(new Error('nothing is embedded here')),
    } as unknown as TextEmbedder;
    const projection = new VectorProjection({
      events,
      readModels: {} as ReadModels,
      index,
      embedder,
      waitForReadModels: async () => undefined,
      logger: createLogger('silent'),
    });
    await projection.start();
    const started = Date.now();
    for (let hook = 0; hook < 40; hook++) {
      await events.append(`webhook-acme.${hook}`, [hookEvent()]);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const head = await events.headPosition();
    expect(await projection.waitFor(head, 5_000)).toBe(true);
    const elapsedS = (Date.now() - started) / 1000;
    // One save per page of passing events would be about 40; at most one a second, and the first at once.
    expect(saves.length).toBeLessThanOrEqual(Math.ceil(elapsedS) + 1);
    await projection.stop();
    expect(saves.at(-1)).toBe(head);
    await events.close();
  });
});
