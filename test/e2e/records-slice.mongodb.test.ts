import { randomUUID } from 'node:crypto';
import { describeContract, mongoAvailability } from '../support/adapter-report';
import { recordsSlice } from './records-slice';

const url = process.env.MONGO_URL;
const run = mongoAvailability(url);

describeContract('records slice e2e', 'mongodb read store', run, () => {
  recordsSlice(() => ({
    READ_STORE: 'mongodb',
    MONGO_URL: url!,
    MONGO_DATABASE: `slice_${randomUUID().slice(0, 8)}`,
  }));
});
