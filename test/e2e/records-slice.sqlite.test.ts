import { describeContract } from '../support/adapter-report';
import { recordsSlice } from './records-slice';

describeContract('records slice e2e', 'sqlite read store', { kind: 'embedded' }, () => {
  recordsSlice(() => ({}));
});
