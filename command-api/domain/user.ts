import type { ModulePermissions, Role } from '../../contracts/auth';
import { rightsBeyond } from '../../contracts/auth';
import { PlatformError } from '../../contracts/errors';
import type { ApiTokenIssuedData, IdentityEvent } from '../../contracts/events/identity';
import type { Decider } from '../kit/decider';

export interface TokenState {
  readonly tokenHash: string;
  readonly bootstrap: boolean;
  readonly permissions: ModulePermissions | null;
}

export interface UserState {
  readonly status: 'none' | 'active' | 'deactivated';
  readonly userId: number;
  readonly email: string;
  readonly name: string;
  readonly role: Role;
  /** A member's rights per module; null: every module. Admins have every right whatever this says. */
  readonly permissions: ModulePermissions | null;
  /** For signing in; null: the user signs in by token only. */
  readonly passwordHash: string | null;
  /** Live tokens by id. */
  readonly tokens: Readonly<Record<string, TokenState>>;
}

/** Who asks: the acting user, and the rights of the credential they act with (undefined: unlimited). */
export interface Caller {
  readonly userId: number | null;
  readonly credentialPermissions: ModulePermissions | undefined;
}

export type UserCommand =
  | {
      readonly kind: 'RegisterUser';
      readonly userId: number;
      readonly email: string;
      readonly name: string;
      readonly role: Role;
      readonly passwordHash: string | null;
      readonly permissions?: ModulePermissions | null;
    }
  | {
      readonly kind: 'ChangeUser';
      readonly caller: Caller;
      readonly name?: string;
      readonly role?: Role;
      readonly permissions?: ModulePermissions | null;
    }
  | { readonly kind: 'SetPassword'; readonly passwordHash: string }
  | { readonly kind: 'DeactivateUser'; readonly caller: Caller }
  | { readonly kind: 'ActivateUser' }
  /** `caller` is absent only for the bootstrap token, which the platform issues itself. */
  | {
      readonly kind: 'IssueApiToken';
      readonly token: Omit<ApiTokenIssuedData, 'userId'>;
      readonly caller?: Caller;
    }
  | {
      readonly kind: 'ChangeApiToken';
      readonly tokenId: string;
      readonly caller: Caller;
      readonly name?: string;
      readonly permissions?: ModulePermissions | null;
      readonly expiresAt?: string | null;
    }
  | { readonly kind: 'RevokeApiToken'; readonly tokenId: string }
  | {
      readonly kind: 'StartSession';
      readonly sessionHash: string;
      readonly csrfHash: string;
      readonly absoluteExpiresAt: string;
    }
  | { readonly kind: 'EndSession'; readonly sessionHash: string };

/** The user's own rights: undefined (all) for admins and members without limits. */
function rightsOf(state: UserState): ModulePermissions | undefined {
  return state.role === 'admin' || state.permissions === null ? undefined : state.permissions;
}

/** A token never has more rights than its owner, nor than the credential that sets its rights. */
function checkTokenRights(
  state: UserState,
  permissions: ModulePermissions | null,
  caller: Caller | undefined,
): void {
  const requested = permissions ?? undefined;
  // No rights of its own (null) means "the owner's, whatever they are": never beyond the owner.
  const beyondOwner = requested === undefined ? [] : rightsBeyond(requested, rightsOf(state));
  const beyondCaller = caller ? rightsBeyond(requested, caller.credentialPermissions) : [];
  if (beyondOwner.length === 0 && beyondCaller.length === 0) return;
  const problems = [
    ...(beyondOwner.length > 0
      ? [`beyond the rights of user ${state.userId}: ${beyondOwner.join(', ')}`]
      : []),
    ...(beyondCaller.length > 0
      ? [`beyond the rights of the credential in use: ${beyondCaller.join(', ')}`]
      : []),
  ];
  throw new PlatformError(
    'forbidden',
    `a token cannot have more rights than its owner or its maker; ${problems.join('; ')}`,
    problems.map((message) => ({ path: 'permissions', message })),
  );
}

function tokenOf(state: UserState, tokenId: string): TokenState {
  const token = Object.hasOwn(state.tokens, tokenId) ? state.tokens[tokenId] : undefined;
  if (!token) throw new PlatformError('not_found', `user ${state.userId} has no token ${tokenId}`);
  return token;
}

export const userDecider: Decider<UserState, UserCommand, IdentityEvent> = {
  initialState: {
    status: 'none',
    userId: 0,
    email: '',
    name: '',
    role: 'member',
    permissions: null,
    passwordHash: null,
    tokens: {},
  },

  decide(command, state) {
    if (command.kind === 'RegisterUser') {
      if (state.status !== 'none') throw new PlatformError('conflict', `user ${state.userId} already exists`);
      const { kind: _kind, permissions, ...data } = command;
      return [{ type: 'UserRegistered', data: { ...data, ...(permissions && { permissions }) } }];
    }
    if (state.status === 'none') throw new PlatformError('not_found', 'user not found');
    const { userId } = state;
    switch (command.kind) {
      case 'ActivateUser':
        return state.status === 'active' ? [] : [{ type: 'UserActivated', data: { userId } }];
      case 'DeactivateUser':
        if (command.caller.userId === userId)
          throw new PlatformError('conflict', 'you cannot deactivate yourself: ask another administrator');
        return state.status === 'deactivated' ? [] : [{ type: 'UserDeactivated', data: { userId } }];
      case 'SetPassword':
        return [{ type: 'UserPasswordSet', data: { userId, passwordHash: command.passwordHash } }];
      case 'ChangeUser': {
        if (command.caller.userId === userId && state.role === 'admin' && command.role === 'member')
          throw new PlatformError(
            'conflict',
            'you cannot give up your own admin role: ask another administrator',
          );
        const data = {
          ...(command.name !== undefined && command.name !== state.name && { name: command.name }),
          ...(command.role !== undefined && command.role !== state.role && { role: command.role }),
          ...(command.permissions !== undefined &&
            JSON.stringify(command.permissions) !== JSON.stringify(state.permissions) && {
              permissions: command.permissions,
            }),
        };
        return Object.keys(data).length === 0 ? [] : [{ type: 'UserChanged', data: { userId, ...data } }];
      }
      default:
    }
    if (state.status !== 'active') throw new PlatformError('conflict', `user ${userId} is deactivated`);
    switch (command.kind) {
      case 'IssueApiToken':
        if (Object.hasOwn(state.tokens, command.token.tokenId))
          throw new PlatformError('conflict', `token ${command.token.tokenId} already exists`);
        checkTokenRights(state, command.token.permissions, command.caller);
        return [{ type: 'ApiTokenIssued', data: { ...command.token, userId } }];
      case 'ChangeApiToken': {
        const token = tokenOf(state, command.tokenId);
        if (command.permissions !== undefined) checkTokenRights(state, command.permissions, command.caller);
        const changes = {
          ...(command.name !== undefined && { name: command.name }),
          ...(command.permissions !== undefined && { permissions: command.permissions }),
          ...(command.expiresAt !== undefined && { expiresAt: command.expiresAt }),
        };
        return Object.keys(changes).length === 0
          ? []
          : [
              {
                type: 'ApiTokenChanged',
                data: { userId, tokenId: command.tokenId, tokenHash: token.tokenHash, ...changes },
              },
            ];
      }
      case 'StartSession': {
        const { kind: _kind, ...session } = command;
        return [{ type: 'SessionStarted', data: { userId, ...session } }];
      }
      case 'EndSession':
        return [
          { type: 'SessionEnded', data: { userId, sessionHash: command.sessionHash, reason: 'logout' } },
        ];
      case 'RevokeApiToken': {
        const token = tokenOf(state, command.tokenId);
        return [
          { type: 'ApiTokenRevoked', data: { userId, tokenId: command.tokenId, tokenHash: token.tokenHash } },
        ];
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'UserRegistered':
        return {
          status: 'active',
          userId: event.data.userId,
          email: event.data.email,
          name: event.data.name,
          role: event.data.role,
          permissions: event.data.permissions ?? null,
          passwordHash: event.data.passwordHash,
          tokens: {},
        };
      case 'UserChanged': {
        const { userId: _userId, ...changes } = event.data;
        return { ...state, ...changes };
      }
      case 'UserPasswordSet':
        return { ...state, passwordHash: event.data.passwordHash };
      case 'UserDeactivated':
        return { ...state, status: 'deactivated' };
      case 'UserActivated':
        return { ...state, status: 'active' };
      case 'ApiTokenIssued': {
        const { tokenId, tokenHash, bootstrap, permissions } = event.data;
        return { ...state, tokens: { ...state.tokens, [tokenId]: { tokenHash, bootstrap, permissions } } };
      }
      case 'ApiTokenChanged': {
        const { tokenId, permissions } = event.data;
        const token = state.tokens[tokenId];
        if (!token || permissions === undefined) return state;
        return { ...state, tokens: { ...state.tokens, [tokenId]: { ...token, permissions } } };
      }
      case 'ApiTokenRevoked': {
        const { [event.data.tokenId]: _revoked, ...tokens } = state.tokens;
        return { ...state, tokens };
      }
      case 'SessionStarted':
      case 'SessionEnded':
        return state;
    }
  },
};
