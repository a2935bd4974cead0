import { MongoClient } from 'mongodb';
import { createMongoReadStore } from '../../infra/read-store/mongodb';
import { describeContract, type AdapterRun } from '../support/adapter-report';
import { readStoreContract } from './read-store';

const url = process.env.MONGO_URL;

/** The URL as shown in reports, without credentials. */
function redacted(value: string): string {
  return value.replace(/\/\/[^@/]*@/, '//***@');
}

const availability: AdapterRun = url
  ? { kind: 'real-server', where: redacted(url) }
  : { kind: 'skipped', reason: 'MONGO_URL not set' };

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
