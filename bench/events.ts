import type { NewEvent } from '../contracts/events/envelope';
import { eventIdFor, newId } from '../contracts/ids';
import { personalSubject, type DataPath } from '../contracts/personal-data';

/** An event of the `bench` system by its user 1, as the benchmarks that write the log directly append them. */
export function benchEvent(type: string, data: unknown, commandId: string, index: number): NewEvent {
  return {
    id: eventIdFor('bench', commandId, index),
    type,
    schemaVersion: 1,
    data,
    metadata: {
      tenant: 'bench',
      actor: { userId: '1', credentialId: 'token:bench' },
      correlationId: commandId,
      causationId: commandId,
      commandId,
      occurredAt: new Date().toISOString(),
    },
  };
}

/**
 * The two events of record `recordId` in `npm run bench`'s rebuild (bench/projection-rebuild.ts): a create of a
 * name, an amount and a stage, then an update of the amount. `sealed`: with the `sealing` the records decider
 * gives them in bench/server.ts's module (`stage` a select field, `amount` a number), so only the name.
 */
export function benchRecordEvents(recordId: number, sealed: boolean): NewEvent[] {
  const commandId = newId();
  const sealing = (paths: DataPath[]): Pick<NewEvent, 'sealing'> =>
    sealed ? { sealing: { subject: personalSubject('record', 'bench', recordId), paths } } : {};
  return [
    {
      ...benchEvent(
        'RecordCreated',
        {
          recordId,
          moduleId: 1 + (recordId % 20),
          spaceId: 1,
          name: `Record ${recordId}`,
          fields: { amount: recordId % 1000, stage: `s${recordId % 7}` },
        },
        commandId,
        0,
      ),
      ...sealing([['name']]),
    },
    {
      ...benchEvent(
        'RecordUpdated',
        { recordId, changes: [{ field: 'fields.amount', from: recordId % 1000, to: (recordId % 1000) + 1 }] },
        commandId,
        1,
      ),
      ...sealing([]),
    },
  ];
}
