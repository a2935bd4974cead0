import { PlatformError } from '../../contracts/errors';
import type { ApiTokenIssuedData, IdentityEvent } from '../../contracts/events/identity';
import type { Decider } from '../kit/decider';

export interface UserState {
  readonly status: 'none' | 'active';
  readonly userId: number;
  readonly email: string;
  readonly role: 'admin' | 'member';
  /** Live tokens by id. */
  readonly tokens: Readonly<Record<string, { readonly tokenHash: string; readonly bootstrap: boolean }>>;
}

export type UserCommand =
  | {
      readonly kind: 'RegisterUser';
      readonly userId: number;
      readonly email: string;
      readonly name: string;
      readonly role: 'admin' | 'member';
      readonly passwordHash: string | null;
    }
  | { readonly kind: 'IssueApiToken'; readonly token: Omit<ApiTokenIssuedData, 'userId'> }
  | { readonly kind: 'RevokeApiToken'; readonly tokenId: string };

export const userDecider: Decider<UserState, UserCommand, IdentityEvent> = {
  initialState: { status: 'none', userId: 0, email: '', role: 'member', tokens: {} },

  decide(command, state) {
    if (command.kind === 'RegisterUser') {
      if (state.status !== 'none') throw new PlatformError('conflict', `user ${state.userId} already exists`);
      const { kind: _kind, ...data } = command;
      return [{ type: 'UserRegistered', data }];
    }
    if (state.status !== 'active') throw new PlatformError('not_found', 'user not found');
    if (command.kind === 'IssueApiToken') {
      if (Object.hasOwn(state.tokens, command.token.tokenId))
        throw new PlatformError('conflict', `token ${command.token.tokenId} already exists`);
      return [{ type: 'ApiTokenIssued', data: { ...command.token, userId: state.userId } }];
    }
    const token = Object.hasOwn(state.tokens, command.tokenId) ? state.tokens[command.tokenId] : undefined;
    if (!token) throw new PlatformError('not_found', 'token not found');
    return [
      {
        type: 'ApiTokenRevoked',
        data: { userId: state.userId, tokenId: command.tokenId, tokenHash: token.tokenHash },
      },
    ];
  },

  evolve(state, event) {
    switch (event.type) {
      case 'UserRegistered':
        return {
          status: 'active',
          userId: event.data.userId,
          email: event.data.email,
          role: event.data.role,
          tokens: {},
        };
      case 'ApiTokenIssued':
        return {
          ...state,
          tokens: {
            ...state.tokens,
            [event.data.tokenId]: { tokenHash: event.data.tokenHash, bootstrap: event.data.bootstrap },
          },
        };
      case 'ApiTokenRevoked': {
        const { [event.data.tokenId]: _revoked, ...tokens } = state.tokens;
        return { ...state, tokens };
      }
    }
  },
};
