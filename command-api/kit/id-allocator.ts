import { streamName } from '../../contracts/streams';
import { eventIdFor, newId } from '../../contracts/ids';
import type { IdBlockReservedData } from '../../contracts/events/system';
import type { EventStore } from '../../infra/event-store/port';
import { WrongExpectedRevisionError } from '../../infra/event-store/port';
import { bookkeepingContext, toNewEvent } from './handler';

/**
 * Per-tenant integer ids (the spec's paths use them), allocated in blocks (hi/lo): a block is reserved by
 * appending `IdBlockReserved` to `sequence-<tenant>.<name>` with an exact expected revision, so processes
 * sharing a store never hand out the same id. Ids of a block a process did not use are skipped, never reused.
 */
export class IdAllocator {
  private readonly blocks = new Map<string, { next: number; to: number }>();
  private readonly refills = new Map<string, Promise<void>>();

  constructor(
    private readonly store: EventStore,
    private readonly blockSize = 1000,
  ) {}

  async next(tenant: string, sequence: string): Promise<number> {
    const key = `${tenant}.${sequence}`;
    for (;;) {
      const block = this.blocks.get(key);
      if (block && block.next <= block.to) return block.next++;
      let refill = this.refills.get(key);
      if (!refill) {
        refill = this.reserve(tenant, sequence, key).finally(() => this.refills.delete(key));
        this.refills.set(key, refill);
      }
      await refill;
    }
  }

  private async reserve(tenant: string, sequence: string, key: string): Promise<void> {
    const stream = streamName('sequence', tenant, sequence);
    for (let attempt = 0; attempt < 50; attempt++) {
      let revision: bigint | undefined;
      let lastTo = 0;
      for await (const event of this.store.readStream(stream, { direction: 'backwards', maxCount: 1 })) {
        revision = event.revision;
        lastTo = (event.data as IdBlockReservedData).to;
      }
      const data: IdBlockReservedData = { sequence, from: lastTo + 1, to: lastTo + this.blockSize };
      const commandId = newId();
      try {
        await this.store.append(
          stream,
          [
            toNewEvent(
              { type: 'IdBlockReserved', data },
              eventIdFor(tenant, commandId, 0),
              bookkeepingContext(tenant, commandId),
            ),
          ],
          { expectedRevision: revision ?? 'no_stream' },
        );
        this.blocks.set(key, { next: data.from, to: data.to });
        return;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
      }
    }
    throw new Error(`could not reserve an id block for ${stream}`);
  }
}
