import type { NewEvent } from '../contracts/events/envelope';
import { eventIdFor } from '../contracts/ids';

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
