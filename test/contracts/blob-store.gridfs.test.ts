import { MongoClient } from 'mongodb';
import { createGridFsBlobStore } from '../../infra/blob-store/gridfs';
import { describeContract, mongoAvailability } from '../support/adapter-report';
import { blobStoreContract } from './blob-store';

const url = process.env.MONGO_URL;

const availability = mongoAvailability(url);

describeContract('blob-store', 'gridfs', availability, () => {
  blobStoreContract(async () => {
    if (!url) throw new Error('MONGO_URL not set');
    const database = `blob_store_contract_${process.pid}_${Date.now()}`;
    const store = await createGridFsBlobStore({ url, database, queryBudgetMs: 2000 });
    const client = await MongoClient.connect(url);
    const db = client.db(database);
    return {
      store,
      // Chunks without a files document are what an unfinished upload leaves behind.
      leftovers: async () => {
        const complete = (await db.collection('blobs.files').find({}).toArray()).map((file) =>
          String(file._id),
        );
        const chunks = await db
          .collection('blobs.chunks')
          .find({}, { projection: { files_id: 1 } })
          .toArray();
        return chunks.filter((chunk) => !complete.includes(String(chunk.files_id))).length;
      },
      cleanup: async () => {
        await store.close();
        try {
          await db.dropDatabase();
        } finally {
          await client.close();
        }
      },
    };
  });
});
