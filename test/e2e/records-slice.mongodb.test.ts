import { randomUUID } from 'node:crypto';
import { describeContract, type AdapterRun } from '../support/adapter-report';
import { recordsSlice } from './records-slice';

const url = process.env.MONGO_URL;
const run: AdapterRun = url
  ? { kind: 'real-server', where: url }
  : { kind: 'skipped', reason: 'MONGO_URL not set' };

describeContract('records slice e2e', 'mongodb read store', run, () => {
  recordsSlice(() => ({
    READ_STORE: 'mongodb',
    MONGO_URL: url!,
    MONGO_DATABASE: `slice_${randomUUID().slice(0, 8)}`,
  }));
});
