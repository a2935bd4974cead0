import { randomUUID } from 'node:crypto';
import { QdrantVectorIndex } from '../../infra/vector-index/qdrant';
import { describeContract } from '../support/adapter-report';
import { CONTRACT_DIMENSION, vectorIndexContract } from './vector-index';

/**
 * The vector-index contract against a real Qdrant: `QDRANT_URL=http://127.0.0.1:6333 npx jest
 * test/contracts/vector-index.qdrant.test.ts` (`docker compose up qdrant` publishes none by default: add
 * `ports: ['6333:6333']`). No registry ships Qdrant, so without `QDRANT_URL` the suite is listed as not run.
 */
const url = process.env.QDRANT_URL;

describeContract(
  'vector-index',
  'Qdrant',
  url ? { kind: 'real-server', where: url } : { kind: 'skipped', reason: 'QDRANT_URL not set' },
  () => {
    vectorIndexContract(async () => {
      const index = await QdrantVectorIndex.open(url!, CONTRACT_DIMENSION);
      // A collection of its own per test (the contract expects an empty index at first).
      await index.reset(`contract/${randomUUID()}`);
      return { index, cleanup: () => index.close() };
    });
  },
);
