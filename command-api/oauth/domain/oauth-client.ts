import { PlatformError } from '../../../contracts/errors';
import type { OAuthClientEvent, OAuthClientRegisteredData } from '../../../contracts/events/oauth';
import type { GrantType } from '../../../contracts/oauth';
import type { Decider } from '../../kit/decider';

export interface OAuthClientState {
  readonly status: 'none' | 'active' | 'deleted';
  readonly client: Omit<OAuthClientRegisteredData, 'secretHash'> | null;
  readonly secretHash: string;
}

type ClientSettings = {
  readonly clientName?: string;
  readonly redirectUris?: readonly string[];
  readonly scope?: string;
  readonly grantTypes?: readonly GrantType[];
};

export type OAuthClientCommand =
  | { readonly kind: 'RegisterClient'; readonly client: OAuthClientRegisteredData }
  | ({ readonly kind: 'ChangeClient'; readonly secretHash?: string } & ClientSettings)
  | { readonly kind: 'DeleteClient' };

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** An OAuth client registration: created with a secret, changed, its secret rotated, deleted. */
export const oauthClientDecider: Decider<OAuthClientState, OAuthClientCommand, OAuthClientEvent> = {
  initialState: { status: 'none', client: null, secretHash: '' },

  decide(command, state) {
    if (command.kind === 'RegisterClient') {
      if (state.status !== 'none') throw new PlatformError('conflict', 'this client id is taken');
      return [{ type: 'OAuthClientRegistered', data: command.client }];
    }
    if (state.status !== 'active' || !state.client)
      throw new PlatformError('not_found', 'OAuth client not found');
    const { clientId } = state.client;
    if (command.kind === 'DeleteClient') return [{ type: 'OAuthClientDeleted', data: { clientId } }];
    const current = state.client;
    const changes = Object.fromEntries(
      (['clientName', 'redirectUris', 'scope', 'grantTypes'] as const)
        .filter((key) => command[key] !== undefined && !same(command[key], current[key]))
        .map((key) => [key, command[key]]),
    );
    return [
      ...(Object.keys(changes).length > 0
        ? [{ type: 'OAuthClientChanged' as const, data: { clientId, ...changes } }]
        : []),
      ...(command.secretHash !== undefined
        ? [{ type: 'OAuthClientSecretSet' as const, data: { clientId, secretHash: command.secretHash } }]
        : []),
    ];
  },

  evolve(state, event) {
    switch (event.type) {
      case 'OAuthClientRegistered': {
        const { secretHash, ...client } = event.data;
        return { status: 'active', client, secretHash };
      }
      case 'OAuthClientChanged': {
        if (!state.client) return state;
        const { clientId: _clientId, ...changes } = event.data;
        return { ...state, client: { ...state.client, ...changes } };
      }
      case 'OAuthClientSecretSet':
        return { ...state, secretHash: event.data.secretHash };
      case 'OAuthClientDeleted':
        return { ...state, status: 'deleted' };
    }
  },
};
