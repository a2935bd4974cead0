import { createHash } from 'node:crypto';
import { PlatformError } from '../../../contracts/errors';
import { streamName } from '../../../contracts/streams';
import type { EmailClaimEvent } from '../../../contracts/events/identity';
import { withPersonalValues, type Decider } from '../../kit/decider';

export interface EmailClaimState {
  /** The user holding the address (null: nobody). */
  readonly userId: number | null;
}

export interface ClaimEmail {
  readonly kind: 'ClaimEmail';
  readonly email: string;
  readonly userId: number;
  /** Whether the current holder exists (the route reads it): a claim whose user was never made is stale. */
  readonly holderExists: boolean;
}

/** An email address belongs to one user of a tenant: the claim stream is the uniqueness rule. */
export const emailClaimDecider: Decider<EmailClaimState, ClaimEmail, EmailClaimEvent> = {
  initialState: { userId: null },

  decide(command, state) {
    if (state.userId === command.userId) return [];
    if (state.userId !== null && command.holderExists)
      throw new PlatformError('conflict', `a user with the email ${command.email} already exists`);
    return [
      withPersonalValues<EmailClaimEvent>(
        { type: 'EmailClaimed', data: { email: command.email, userId: command.userId } },
        { kind: 'user', id: command.userId, paths: [['email']] },
      ),
    ];
  },

  evolve(_state, event) {
    return { userId: event.data.userId };
  },
};

/** The claim stream of an address (case-insensitive; hashed, so addresses stay out of stream names). */
export function emailClaimStream(tenant: string, email: string): string {
  return streamName(
    'email',
    tenant,
    createHash('sha256').update(email.toLowerCase()).digest('hex').slice(0, 32),
  );
}
