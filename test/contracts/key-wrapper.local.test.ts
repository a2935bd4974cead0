import { randomBytes } from 'node:crypto';
import { localKeyWrapper } from '../../infra/keys/local-wrapper';
import { createSealer } from '../../infra/secrets/sealer';
import { describeContract } from '../support/adapter-report';
import { keyWrapperContract } from './key-wrapper';

const masterKey = randomBytes(32);

describeContract('key-wrapper', 'local (SECRETS_KEY)', { kind: 'embedded' }, () => {
  keyWrapperContract(async () => ({
    open: async () => localKeyWrapper(createSealer(masterKey).derivedKey('data-keys')),
    stranger: async () => localKeyWrapper(createSealer(randomBytes(32)).derivedKey('data-keys')),
  }));
});
