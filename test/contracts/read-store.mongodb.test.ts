import { createMongoReadStore } from '../../infra/read-store/mongodb';
import { describeContract, mongoAvailability } from '../support/adapter-report';
import { dropMongoDatabase } from '../support/mongo';
import { readStoreContract } from './read-store';

const url = process.env.MONGO_URL;

const availability = mongoAvailability(url);

describeContract('read-store', 'mongodb', availability, () => {
  readStoreContract(async () => {
    if (!url) throw new Error('MONGO_URL not set');
    const database = `read_store_contract_${process.pid}_${Date.now()}`;
    const store = await createMongoReadStore({ url, database, queryBudgetMs: 2000 });
    return {
      store,
      cleanup: async () => {
        await store.close();
        await dropMongoDatabase(url, database);
      },
    };
  });
});
