import { createHash } from 'node:crypto';
import { PlatformError } from '../../contracts/errors';
import { newId, uuidV5 } from '../../contracts/ids';
import { streamName } from '../../contracts/streams';
import type { IdempotencyKeyClaimedData } from '../../contracts/events/system';
import type { EventStore } from '../../infra/event-store/port';
import { WrongExpectedRevisionError } from '../../infra/event-store/port';
import { bookkeepingContext, toNewEvent } from './handler';

/**
 * `Idempotency-Key` on POST. The first request with a key claims it by appending `IdempotencyKeyClaimed`
 * (command id, request hash, the id of the entity it creates) to a stream of its own with `no_stream`.
 * A repeat finds the claim and re-runs the command with the same command id and entity id: the handler
 * then finds the command's events in the entity stream and answers as the first time, appending nothing.
 */
export interface CommandIdentity {
  readonly commandId: string;
  readonly entityId: number | null;
  /** True when this key was claimed before: the command may already have been applied. */
  readonly mayBeRepeat: boolean;
}

/** A bulk create's identity: one command id for the request, one entity id per item. */
export interface BulkIdentity {
  readonly commandId: string;
  readonly entityIds: readonly number[];
  readonly mayBeRepeat: boolean;
}

const KEY = /^[\x21-\x7e]{1,255}$/;

export function requestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${JSON.stringify(body ?? null)}`)
    .digest('hex');
}

export class IdempotencyKeys {
  constructor(private readonly store: EventStore) {}

  /**
   * @param newEntityId allocates the id of the entity the command creates (called only on a first claim).
   */
  async identify(
    tenant: string,
    credentialId: string,
    key: string | undefined,
    /** The request's hash, computed only when a key is sent. */
    hashOfRequest: () => string,
    newEntityId: (() => Promise<number>) | null,
  ): Promise<CommandIdentity> {
    const claim = await this.claim(tenant, credentialId, key, hashOfRequest, async () => ({
      entityId: newEntityId ? await newEntityId() : null,
    }));
    return { commandId: claim.commandId, entityId: claim.entityId, mayBeRepeat: claim.mayBeRepeat };
  }

  /**
   * The claim an earlier request made with this key, when it was the same request (another request with the
   * key is refused as `identify` refuses it); null when the key is new. Claims nothing.
   */
  async earlier(
    tenant: string,
    credentialId: string,
    key: string,
    hashOfRequest: () => string,
  ): Promise<CommandIdentity | null> {
    if (!KEY.test(key))
      throw new PlatformError('validation_failed', 'Idempotency-Key must be 1-255 visible ASCII characters');
    const existing = await this.claimOf(this.streamOf(tenant, credentialId, key));
    if (!existing) return null;
    const repeat = this.repeat(existing, hashOfRequest());
    return { commandId: repeat.commandId, entityId: repeat.entityId, mayBeRepeat: true };
  }

  /** As `identify`, for a bulk create of `count` entities: a repeat gets the same ids, in the same order. */
  async identifyBulk(
    tenant: string,
    credentialId: string,
    key: string | undefined,
    hashOfRequest: () => string,
    count: number,
    newEntityId: () => Promise<number>,
  ): Promise<BulkIdentity> {
    const claim = await this.claim(tenant, credentialId, key, hashOfRequest, async () => {
      const entityIds: number[] = [];
      for (let index = 0; index < count; index++) entityIds.push(await newEntityId());
      return { entityId: entityIds[0] ?? null, entityIds };
    });
    return { commandId: claim.commandId, entityIds: claim.entityIds ?? [], mayBeRepeat: claim.mayBeRepeat };
  }

  private async claim(
    tenant: string,
    credentialId: string,
    key: string | undefined,
    hashOfRequest: () => string,
    allocate: () => Promise<Pick<IdempotencyKeyClaimedData, 'entityId' | 'entityIds'>>,
  ): Promise<IdempotencyKeyClaimedData & { mayBeRepeat: boolean }> {
    if (key === undefined)
      return { requestHash: '', commandId: newId(), ...(await allocate()), mayBeRepeat: false };
    const hash = hashOfRequest();
    if (!KEY.test(key))
      throw new PlatformError('validation_failed', 'Idempotency-Key must be 1-255 visible ASCII characters');
    const stream = this.streamOf(tenant, credentialId, key);
    const existing = await this.claimOf(stream);
    if (existing) return this.repeat(existing, hash);
    const claim: IdempotencyKeyClaimedData = { requestHash: hash, commandId: newId(), ...(await allocate()) };
    try {
      await this.store.append(
        stream,
        [
          toNewEvent(
            { type: 'IdempotencyKeyClaimed', data: claim },
            // Not eventIdFor(tenant, commandId, 0): that is the id of the command's own first event (event ids are unique store-wide).
            uuidV5(`idempotency-key-claim:${claim.commandId}`),
            bookkeepingContext(tenant, claim.commandId, { userId: null, credentialId }),
          ),
        ],
        { expectedRevision: 'no_stream' },
      );
      return { ...claim, mayBeRepeat: false };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      const raced = await this.claimOf(stream);
      if (!raced) throw error;
      return this.repeat(raced, hash);
    }
  }

  /** Where a credential's key is claimed: a hash of both, so neither shows in a stream name. */
  private streamOf(tenant: string, credentialId: string, key: string): string {
    return streamName(
      'idempotency',
      tenant,
      createHash('sha256').update(`${credentialId}\n${key}`).digest('hex').slice(0, 40),
    );
  }

  private repeat(
    claim: IdempotencyKeyClaimedData,
    hash: string,
  ): IdempotencyKeyClaimedData & { mayBeRepeat: boolean } {
    if (claim.requestHash !== hash) {
      throw new PlatformError(
        'idempotency_key_reused',
        'this Idempotency-Key was used for a different request; use a new key',
      );
    }
    return { ...claim, mayBeRepeat: true };
  }

  private async claimOf(stream: string): Promise<IdempotencyKeyClaimedData | null> {
    for await (const event of this.store.readStream(stream, { maxCount: 1 })) {
      return event.data as IdempotencyKeyClaimedData;
    }
    return null;
  }
}
