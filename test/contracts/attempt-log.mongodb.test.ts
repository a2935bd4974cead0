import { createMongoAttemptLog } from '../../infra/attempts/mongodb';
import { describeContract, mongoAvailability } from '../support/adapter-report';
import { dropMongoDatabase } from '../support/mongo';
import { attemptLogContract } from './attempt-log';

const url = process.env.MONGO_URL;

describeContract('attempt-log', 'mongodb', mongoAvailability(url), () => {
  attemptLogContract(async () => {
    if (!url) throw new Error('MONGO_URL not set');
    const database = `attempt_log_contract_${process.pid}_${Date.now()}`;
    return {
      open: () => createMongoAttemptLog({ url, database, queryBudgetMs: 2000 }),
      cleanup: () => dropMongoDatabase(url, database),
    };
  });
});
