import { createEventStoreDbEventStore } from '../../infra/event-store/eventstoredb';
import { eventStoreContract } from './event-store';
import { describeContract, type AdapterRun } from '../support/adapter-report';

const connectionString = process.env.ESDB_URL;
const availability: AdapterRun = connectionString
  ? { kind: 'real-server', where: connectionString }
  : { kind: 'skipped', reason: 'ESDB_URL not set' };

describeContract('event-store', 'eventstoredb', availability, () => {
  eventStoreContract(
    async () => {
      if (!connectionString) throw new Error('ESDB_URL not set');
      const store = createEventStoreDbEventStore({ connectionString });
      return { store, cleanup: () => store.close() };
    },
    { readsPages: false },
  );
});
