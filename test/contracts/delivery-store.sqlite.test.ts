import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteDeliveryStore } from '../../infra/deliveries/sqlite';
import { describeContract } from '../support/adapter-report';
import { deliveryStoreContract } from './delivery-store';

describeContract('delivery-store', 'sqlite', { kind: 'embedded' }, () => {
  deliveryStoreContract(async () => {
    const directory = mkdtempSync(join(tmpdir(), 'delivery-store-sqlite-'));
    return {
      open: async () => createSqliteDeliveryStore({ path: join(directory, 'deliveries.db') }),
      cleanup: async () => rmSync(directory, { recursive: true, force: true }),
    };
  });
});
