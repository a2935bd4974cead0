import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { QdrantClient } from '@qdrant/js-client-rest';
import { parse } from 'yaml';
import { QdrantVectorIndex } from '../../infra/vector-index/qdrant';
import { describeContract } from '../support/adapter-report';
import { dropCollections, qdrantAvailability, testCollectionPrefix } from '../support/qdrant';
import { axisVector, CONTRACT_DIMENSION, vectorIndexContract } from './vector-index';

/**
 * The vector-index contract against a real Qdrant: `QDRANT_URL=http://127.0.0.1:6333 npx jest
 * test/contracts/vector-index.qdrant.test.ts`. `.ci/run` starts one (`.ci/start-qdrant.sh`); without
 * `QDRANT_URL` the suite is listed as not run. Each test keeps to collections of its own prefix.
 */
const url = process.env.QDRANT_URL;

const ROOT = join(__dirname, '..', '..');

describeContract('vector-index', 'Qdrant', qdrantAvailability(), () => {
  test('the server tested is the release docker-compose.yml runs, and the client is of its minor or the one before', async () => {
    const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as {
      services: { qdrant: { image: string } };
    };
    const server = (await (await fetch(`${url!}/`)).json()) as { version: string };
    expect(compose.services.qdrant.image).toBe(`qdrant/qdrant:v${server.version}`);
    // Qdrant tests each server release with the clients of its own minor version and of the one before.
    const manifest = JSON.parse(
      readFileSync(join(ROOT, 'node_modules', '@qdrant', 'js-client-rest', 'package.json'), 'utf8'),
    ) as { version: string };
    const [serverMajor, serverMinor] = server.version.split('.').map(Number);
    const [clientMajor, clientMinor] = manifest.version.split('.').map(Number);
    expect(clientMajor).toBe(serverMajor);
    expect([serverMinor! - 1, serverMinor]).toContain(clientMinor);
  });

  vectorIndexContract(async () => {
    const prefix = testCollectionPrefix();
    const index = await QdrantVectorIndex.open(url!, CONTRACT_DIMENSION, { collectionPrefix: prefix });
    await index.reset(`contract/${randomUUID()}`);
    return {
      index,
      cleanup: async () => {
        await index.close();
        await dropCollections(url!, prefix);
      },
    };
  });

  test('a reset that another process’s reset of the same identity overtakes succeeds, and the index works', async () => {
    const prefix = testCollectionPrefix();
    const client = new QdrantClient({ url: url!, checkCompatibility: false });
    const open = () => QdrantVectorIndex.open(url!, CONTRACT_DIMENSION, { collectionPrefix: prefix });
    try {
      for (let round = 0; round < 3; round++) {
        const [first, second] = await Promise.all([open(), open()]);
        const identity = `model/recipe-${round}`;
        const firstReset = first.reset(identity);
        // The second deletes the collection the first has just made, while the first gives it its indexes.
        const made = async () =>
          (await client.getCollections()).collections.some((collection) =>
            collection.name.startsWith(`${prefix}record_vectors`),
          );
        while (!(await made())) await new Promise((resolve) => setImmediate(resolve));
        await Promise.all([firstReset, second.reset(identity)]);
        await first.upsert([
          { tenant: 'a', recordId: 1, spaceId: 1, moduleId: 1, position: 1n, vectors: [axisVector(0)] },
        ]);
        expect(await second.count('a', 1)).toBe(1);
        await dropCollections(url!, prefix);
      }
    } finally {
      await dropCollections(url!, prefix);
    }
  });

  test('two processes that create the same collections at once both succeed, and share them', async () => {
    const prefix = testCollectionPrefix();
    try {
      // Two clients, as two processes starting together would be: the server sees the same race.
      const open = () => QdrantVectorIndex.open(url!, CONTRACT_DIMENSION, { collectionPrefix: prefix });
      const [first, second] = await Promise.all([open(), open()]);
      await Promise.all([first.reset('model/recipe'), second.reset('model/recipe')]);
      expect([await first.identity(), await second.identity()]).toEqual(['model/recipe', 'model/recipe']);
      await first.upsert([
        { tenant: 'a', recordId: 1, spaceId: 1, moduleId: 1, position: 1n, vectors: [axisVector(0)] },
      ]);
      const hits = await second.search({
        tenant: 'a',
        spaceId: 1,
        vector: axisVector(0),
        limit: 5,
        order: 'nearest',
        records: null,
        modules: null,
      });
      expect(hits.map((hit) => hit.recordId)).toEqual([1]);
    } finally {
      await dropCollections(url!, prefix);
    }
  });
});
