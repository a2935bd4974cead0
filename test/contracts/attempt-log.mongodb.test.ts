import { MongoClient } from 'mongodb';
import { createMongoAttemptLog } from '../../infra/attempts/mongodb';
import { describeContract, mongoAvailability } from '../support/adapter-report';
import { attemptLogContract } from './attempt-log';

const url = process.env.MONGO_URL;

describeContract('attempt-log', 'mongodb', mongoAvailability(url), () => {
  attemptLogContract(async () => {
    if (!url) throw new Error('MONGO_URL not set');
    const database = `attempt_log_contract_${process.pid}_${Date.now()}`;
    const log = await createMongoAttemptLog({ url, database });
    const other = await createMongoAttemptLog({ url, database });
    return {
      log,
      other,
      cleanup: async () => {
        await log.close();
        await other.close();
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
