import { createMongoDataKeyStore } from '../../infra/keys/mongodb';
import { describeContract, mongoAvailability } from '../support/adapter-report';
import { dropMongoDatabase } from '../support/mongo';
import { dataKeyStoreContract } from './data-key-store';

const url = process.env.MONGO_URL;

describeContract('data-key-store', 'mongodb', mongoAvailability(url), () => {
  dataKeyStoreContract(async () => {
    if (!url) throw new Error('MONGO_URL not set');
    const database = `data_key_store_contract_${process.pid}_${Date.now()}`;
    return {
      open: (wrapper) => createMongoDataKeyStore({ url, database, queryBudgetMs: 2000, wrapper }),
      cleanup: () => dropMongoDatabase(url, database),
    };
  });
});
