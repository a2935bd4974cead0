import { describeContract } from '../support/adapter-report';
import { fieldFilterE2e } from './field-filter';

jest.setTimeout(60_000);

describeContract('record field filters e2e', 'sqlite read store', { kind: 'embedded' }, () => {
  fieldFilterE2e(() => ({}));
});
