import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QdrantVectorIndex } from '../../infra/vector-index/qdrant';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';
import { json, startPlatform, type Entity, type TestPlatform } from '../support/platform';
import { describeWithQdrantServer, startQdrantServer, type QdrantServer } from '../support/qdrant';

/**
 * Qdrant goes away in the middle of the vector projection (killed while records are written and embedded):
 * searches answer 503 while it is away and writes go on; when it is back, on the same storage, the projection
 * goes on from its checkpoint (no rebuild) and catches up, every live record in the index once. The test
 * starts a Qdrant server of its own (it must stop it), so it needs the server's start script, not QDRANT_URL.
 */
jest.setTimeout(180_000);

const DIMENSION = 64;

describeWithQdrantServer('vector index outage e2e', 'Qdrant killed and restarted', (script) => {
  let storage: string;
  let qdrant: QdrantServer;
  let model: FakeOpenAi;
  let platform: TestPlatform;

  beforeAll(async () => {
    storage = mkdtempSync(join(tmpdir(), 'qdrant-outage-'));
    qdrant = await startQdrantServer(script, storage);
    // The loopback model: this is about the index, and its vectors come at once.
    model = await startFakeOpenAi(DIMENSION);
    platform = await startPlatform({
      SEMANTIC_SEARCH: 'true',
      VECTOR_INDEX: 'qdrant',
      QDRANT_URL: qdrant.url,
      EMBEDDINGS: 'openai',
      EMBEDDINGS_URL: model.baseUrl,
      EMBEDDINGS_API_KEY: 'test-key',
      EMBEDDINGS_DIMENSION: String(DIMENSION),
      EMBEDDINGS_REQUEST_DIMENSION: 'true',
    });
  });

  afterAll(async () => {
    await platform?.stop();
    await model?.close();
    await qdrant?.stop();
    rmSync(storage, { recursive: true, force: true });
  });

  test('searches answer 503 while it is away; back, the projection goes on from its checkpoint and no record is missing or twice', async () => {
    const space = await json<Entity>(await platform.call('POST', '/space', { body: { name: 'Outage' } }));
    const module = await json<Entity>(
      await platform.call('POST', '/module', { body: { spaceId: space.id, name: 'Notes' } }),
    );
    const similar = (query: string, limit: number, minPosition?: bigint) =>
      platform.call(
        'GET',
        `/record/vector/similar?space_id=${space.id}&limit=${limit}&query=${encodeURIComponent(query)}`,
        minPosition === undefined ? {} : { headers: { 'X-Min-Position': String(minPosition) } },
      );

    let acknowledged = 0;
    let highest = 0n;
    let writing = true;
    let refusedWrite: string | undefined;
    const write = async (name: string) => {
      const response = await platform.call('POST', '/record', { body: { moduleId: module.id, name } });
      if (response.status !== 201) refusedWrite = `${response.status} ${await response.text()}`;
      else {
        acknowledged++;
        const position = BigInt(response.headers.get('x-position')!);
        if (position > highest) highest = position;
      }
    };
    const writer = async (worker: number) => {
      for (let n = 0; writing && refusedWrite === undefined; n++)
        await write(`Note ${worker}-${n} about topic ${(worker * 7 + n) % 11}`);
    };
    const writers = Array.from({ length: 3 }, (_, worker) => writer(worker));
    // Writes never depend on the index: one refused ends the wait (and the test) with its answer.
    const until = async (condition: () => boolean | Promise<boolean>) => {
      while (!(await condition())) {
        expect(refusedWrite).toBeUndefined();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };

    // Mid-projection: some records already in the index, more being written and embedded.
    const probe = await QdrantVectorIndex.open(qdrant.url, DIMENSION);
    await until(async () => acknowledged >= 40 && (await probe.checkpoint()) > 0n);
    const identity = await probe.identity();
    const checkpointBefore = await probe.checkpoint();
    await qdrant.kill();
    const acknowledgedAtKill = acknowledged;

    // Away: writes go on; searches say the index is away.
    await until(() => acknowledged >= acknowledgedAtKill + 40);
    const refused = await similar('topic', 10);
    expect(refused.status).toBe(503);
    expect((await json<{ message: string }>(refused)).message).toMatch(/vector index did not answer/);
    writing = false;
    await Promise.all(writers);

    await qdrant.restart();
    // The index kept what it held: same identity, a checkpoint no older than before (no rebuild from 0).
    expect(await probe.identity()).toBe(identity);
    expect(await probe.checkpoint()).toBeGreaterThanOrEqual(checkpointBefore);
    // Writes go on once it is back, while the projection catches up.
    for (let n = 0; n < 20; n++) await write(`Back again ${n} about topic ${n % 11}`);
    expect(refusedWrite).toBeUndefined();

    const records = await json<{ items: Array<{ id: number; name: string }>; meta: { total: number } }>(
      await platform.call('GET', `/record?filter=moduleId=${module.id}&limit=1000`),
    );
    expect(records.meta.total).toBe(acknowledged);
    // Caught up once the index includes the last write (504 while the projection's retry is still waiting).
    let answer = await similar('note', 1000, highest);
    while (answer.status === 504) answer = await similar('note', 1000, highest);
    expect(answer.status).toBe(200);
    const found = await json<{ items: Array<{ id: number }>; meta: { searched: number } }>(answer);
    expect(found.meta.searched).toBe(records.meta.total);
    expect(found.items.map((item) => item.id).sort((a, b) => a - b)).toEqual(
      records.items.map((record) => record.id).sort((a, b) => a - b),
    );
    // Each record is found first by its own text, including those written while the index was away.
    for (const record of records.items.filter((_, index) => index % 10 === 0)) {
      const own = await json<{ items: Array<{ id: number; similarity: number }> }>(
        await similar(record.name, 1),
      );
      expect(own.items[0]).toMatchObject({ id: record.id });
      expect(own.items[0]!.similarity).toBeGreaterThan(0.999);
    }
    await probe.close();
  });
});
