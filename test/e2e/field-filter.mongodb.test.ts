import { randomUUID } from 'node:crypto';
import { describeContract, mongoAvailability } from '../support/adapter-report';
import { fieldFilterE2e } from './field-filter';

jest.setTimeout(120_000);

const url = process.env.MONGO_URL;
const run = mongoAvailability(url);

describeContract('record field filters e2e', 'mongodb read store', run, () => {
  fieldFilterE2e(() => ({
    READ_STORE: 'mongodb',
    MONGO_URL: url!,
    MONGO_DATABASE: `fields_${randomUUID().slice(0, 8)}`,
  }));
});
