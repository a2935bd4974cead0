import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { PersonalDataEventStore } from '../../infra/event-store/personal-data';
import { createSqliteEventStore } from '../../infra/event-store/sqlite';
import { localKeyWrapper } from '../../infra/keys/local-wrapper';
import { createSqliteDataKeyStore } from '../../infra/keys/sqlite';
import { describeContract } from '../support/adapter-report';
import { temporaryDirectory } from '../support/temporary-directory';
import { eventStoreContract } from './event-store';

// The store the platform's code uses is the SQLite store behind the decorator that seals and opens personal
// values: it is an event store of its own (its reads hand events on through an iterator of its own), so it
// keeps the port's whole contract for events that carry nothing personal.
describeContract('event-store', 'sqlite, personal values sealed', { kind: 'embedded' }, () => {
  eventStoreContract(
    async () => {
      const directory = temporaryDirectory('event-store-personal-');
      const store = new PersonalDataEventStore(
        createSqliteEventStore({ path: join(directory, 'events.db'), pollIntervalMs: 50 }),
        createSqliteDataKeyStore({
          path: join(directory, 'data-keys.db'),
          wrapper: localKeyWrapper(randomBytes(32)),
        }),
      );
      return { store, cleanup: () => store.close() };
    },
    { readsPages: false },
  );
});
