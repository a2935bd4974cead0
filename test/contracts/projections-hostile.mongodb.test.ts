import { createMongoReadStore } from '../../infra/read-store/mongodb';
import { describeContract, mongoAvailability } from '../support/adapter-report';
import { dropMongoDatabase } from '../support/mongo';
import { hostileProjectionsContract } from './projections-hostile';

const url = process.env.MONGO_URL;

describeContract('projections with hostile events', 'mongodb', mongoAvailability(url), () => {
  hostileProjectionsContract(async () => {
    if (!url) throw new Error('MONGO_URL not set');
    const database = `hostile_projections_${process.pid}_${Date.now()}`;
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
