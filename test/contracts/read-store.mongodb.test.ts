import { MongoClient } from 'mongodb';
import { createMongoReadStore } from '../../infra/read-store/mongodb';
import { describeContract, mongoAvailability } from '../support/adapter-report';
import { readStoreContract } from './read-store';

const url = process.env.MONGO_URL;

const availability = mongoAvailability(url);

describeContract('read-store', 'mongodb', availability, () => {
  readStoreContract(async () => {
    if (!url) throw new Error('MONGO_URL not set');
    const database = `read_store_contract_${process.pid}_${Date.now()}`;
    const store = await createMongoReadStore({ url, database });
    return {
      store,
      cleanup: async () => {
        await store.close();
        const client = await MongoClient.connect(url);
        try {
          await client.db(database).dropDatabase();
        } finally {
          await client.close();
        }
      },
    };
  });
});
