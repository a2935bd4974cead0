import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { temporaryDirectory } from './temporary-directory';
import { PersonalDataEventStore } from '../../infra/event-store/personal-data';
import type { EventStore } from '../../infra/event-store/port';
import { localKeyWrapper } from '../../infra/keys/local-wrapper';
import { createSqliteDataKeyStore } from '../../infra/keys/sqlite';
import { MemoryEventStore } from './memory-event-store';

/** The platform's sealing event store over `inner` (an in-memory log by default), its keys in a fresh file. */
export function personalDataStore(inner: EventStore = new MemoryEventStore()): PersonalDataEventStore {
  return new PersonalDataEventStore(
    inner,
    createSqliteDataKeyStore({
      path: join(temporaryDirectory('data-keys-'), 'keys.db'),
      wrapper: localKeyWrapper(randomBytes(32)),
    }),
  );
}
