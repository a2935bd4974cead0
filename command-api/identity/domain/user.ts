import type { CredentialSource, ModulePermissions, Role } from '../../../contracts/auth';
import { CREDENTIAL_SOURCES } from '../../../contracts/auth';
import { rightsBeyond } from '../../../contracts/auth';
import { PlatformError } from '../../../contracts/errors';
import type { ApiTokenIssuedData, IdentityEvent } from '../../../contracts/events/identity';
import { ERASED_VALUE } from '../../../contracts/personal-data';
import { withPersonalValues, type Decider } from '../../kit/decider';

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
  readonly twoFactor: TwoFactorState;
  /** Hashes of the sessions started and not ended (the latest ones), so a password change can end them. */
  readonly sessions: readonly string[];
  /** Its profile data was erased: deactivated for good, its name and email read as erased. */
  readonly erased?: true;
}

export interface TwoFactorDevice {
  readonly name: string;
  readonly sealedSecret: string;
  readonly confirmed: boolean;
  /** The last TOTP step accepted from this device: a code of that step or earlier is never taken again. */
  readonly lastTimeStep: number;
}

export interface TwoFactorState {
  readonly devices: Readonly<Record<string, TwoFactorDevice>>;
  readonly recoveryCodeHashes: readonly string[];
  /** Pending logins already completed (the latest ones; each pending-login token is short-lived). */
  readonly usedPendingLogins: readonly string[];
}

export const MAX_TWO_FACTOR_DEVICES = 5;
const REMEMBERED_PENDING_LOGINS = 100;
/** Sessions remembered per user: beyond it the oldest are forgotten (their 12-hour cap has likely passed). */
const REMEMBERED_SESSIONS = 200;

type SessionEndReason = 'password-changed' | 'two-factor-changed' | 'deactivated';

/** SE-05: a change to how a user signs in ends their other sessions (`keep`: the one making the change). */
function endOtherSessions(state: UserState, reason: SessionEndReason, keep?: string): IdentityEvent[] {
  return state.sessions
    .filter((sessionHash) => sessionHash !== keep)
    .map((sessionHash) => ({
      type: 'SessionEnded' as const,
      data: { userId: state.userId, sessionHash, reason },
    }));
}

/**
 * A deactivation is final for credentials: every API token of the user is revoked for good (their sessions
 * end, their OAuth grants are revoked); a reactivation gives back only the right to sign in.
 */
function revokeAllTokens(state: UserState): IdentityEvent[] {
  return Object.entries(state.tokens).map(([tokenId, token]) => ({
    type: 'ApiTokenRevoked' as const,
    data: { userId: state.userId, tokenId, tokenHash: token.tokenHash },
  }));
}

/** Whether signing in takes a second factor: some device is confirmed. */
export function hasTwoFactor(state: UserState): boolean {
  return Object.values(state.twoFactor.devices).some((device) => device.confirmed);
}

/** How a pending login proves the second factor (the route checked the TOTP code against the device's seed). */
export type SecondFactorProof =
  | { readonly kind: 'totp'; readonly deviceId: string; readonly timeStep: number }
  | { readonly kind: 'recovery'; readonly codeHash: string };

interface NewSession {
  readonly sessionHash: string;
  readonly csrfHash: string;
  readonly absoluteExpiresAt: string;
}

/** Who asks: the acting user, and the rights of the credential they act with (undefined: unlimited). */
export interface ActingUser {
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
      readonly caller: ActingUser;
      readonly name?: string;
      readonly role?: Role;
      readonly permissions?: ModulePermissions | null;
    }
  | { readonly kind: 'SetPassword'; readonly passwordHash: string; readonly keepSession?: string }
  | { readonly kind: 'DeactivateUser'; readonly caller: ActingUser }
  | { readonly kind: 'EraseUser'; readonly caller: ActingUser; readonly reason: string }
  | { readonly kind: 'ActivateUser' }
  /** `caller` is absent only for the bootstrap token, which the platform issues itself. */
  | {
      readonly kind: 'IssueApiToken';
      readonly token: Omit<ApiTokenIssuedData, 'userId'>;
      readonly caller?: ActingUser;
    }
  | {
      readonly kind: 'ChangeApiToken';
      readonly tokenId: string;
      readonly caller: ActingUser;
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
  | { readonly kind: 'EndSession'; readonly sessionHash: string }
  | {
      readonly kind: 'AddTwoFactorDevice';
      readonly deviceId: string;
      readonly name: string;
      readonly sealedSecret: string;
    }
  /** `recoveryCodeHashes`: issued with the first confirmed device. */
  | {
      readonly kind: 'ConfirmTwoFactorDevice';
      readonly deviceId: string;
      readonly timeStep: number;
      readonly recoveryCodeHashes: readonly string[];
      readonly keepSession?: string;
    }
  | { readonly kind: 'RemoveTwoFactorDevice'; readonly deviceId: string; readonly keepSession?: string }
  | { readonly kind: 'IssueRecoveryCodes'; readonly codeHashes: readonly string[] }
  | { readonly kind: 'SetTokenPriority'; readonly order: readonly CredentialSource[] }
  | {
      readonly kind: 'CompleteSecondFactor';
      readonly pendingLogin: string;
      readonly proof: SecondFactorProof;
      readonly session: NewSession;
    };

/** The user's own rights: undefined (all) for admins and members without limits. */
function rightsOf(state: UserState): ModulePermissions | undefined {
  return state.role === 'admin' || state.permissions === null ? undefined : state.permissions;
}

/** A token never has more rights than its owner, nor than the credential that sets its rights. */
function checkTokenRights(
  state: UserState,
  permissions: ModulePermissions | null,
  caller: ActingUser | undefined,
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

function deviceOf(state: UserState, deviceId: string): TwoFactorDevice {
  const device = Object.hasOwn(state.twoFactor.devices, deviceId)
    ? state.twoFactor.devices[deviceId]
    : undefined;
  if (!device) throw new PlatformError('not_found', `user ${state.userId} has no device ${deviceId}`);
  return device;
}

function withDevice(state: UserState, deviceId: string, device: TwoFactorDevice): UserState {
  return {
    ...state,
    twoFactor: { ...state.twoFactor, devices: { ...state.twoFactor.devices, [deviceId]: device } },
  };
}

const SECOND_FACTOR_REFUSED = 'the code is wrong, used already, or expired';

/** The second step of a login: a fresh code of a confirmed device, or an unused recovery code. */
function completeSecondFactor(
  state: UserState,
  command: Extract<UserCommand, { kind: 'CompleteSecondFactor' }>,
): IdentityEvent[] {
  const { userId } = state;
  if (state.twoFactor.usedPendingLogins.includes(command.pendingLogin))
    throw new PlatformError('unauthorized', 'this pending login was completed already: sign in again');
  const { proof } = command;
  let used: IdentityEvent;
  if (proof.kind === 'totp') {
    const device = Object.hasOwn(state.twoFactor.devices, proof.deviceId)
      ? state.twoFactor.devices[proof.deviceId]
      : undefined;
    if (!device?.confirmed || proof.timeStep <= device.lastTimeStep)
      throw new PlatformError('unauthorized', SECOND_FACTOR_REFUSED);
    used = {
      type: 'TwoFactorCodeUsed',
      data: { userId, deviceId: proof.deviceId, timeStep: proof.timeStep },
    };
  } else {
    if (!state.twoFactor.recoveryCodeHashes.includes(proof.codeHash))
      throw new PlatformError('unauthorized', SECOND_FACTOR_REFUSED);
    used = { type: 'RecoveryCodeUsed', data: { userId, codeHash: proof.codeHash } };
  }
  return [
    used,
    { type: 'SessionStarted', data: { userId, ...command.session, pendingLogin: command.pendingLogin } },
  ];
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
    twoFactor: { devices: {}, recoveryCodeHashes: [], usedPendingLogins: [] },
    sessions: [],
  },

  decide(command, state) {
    if (command.kind === 'RegisterUser') {
      if (state.status !== 'none') throw new PlatformError('conflict', `user ${state.userId} already exists`);
      const { kind: _kind, permissions, ...data } = command;
      return [
        withPersonalValues<IdentityEvent>(
          { type: 'UserRegistered', data: { ...data, ...(permissions && { permissions }) } },
          { kind: 'user', id: command.userId, paths: [['email'], ['name']] },
        ),
      ];
    }
    if (state.status === 'none') throw new PlatformError('not_found', 'user not found');
    const { userId } = state;
    if (command.kind === 'EraseUser') {
      if (command.caller.userId === userId)
        throw new PlatformError('conflict', 'you cannot erase yourself: ask another administrator');
      if (state.erased) return [];
      return [
        ...(state.status === 'active'
          ? [
              { type: 'UserDeactivated', data: { userId } } as const,
              ...revokeAllTokens(state),
              ...endOtherSessions(state, 'deactivated'),
            ]
          : []),
        withPersonalValues<IdentityEvent>(
          { type: 'UserErased', data: { userId, reason: command.reason } },
          { kind: 'user', id: userId, paths: [] },
        ),
      ];
    }
    if (state.erased && (command.kind === 'ActivateUser' || command.kind === 'ChangeUser'))
      throw new PlatformError(
        'gone',
        `the profile of user ${userId} was erased: it cannot be changed or activated`,
      );
    switch (command.kind) {
      // A token left from before deactivations revoked them (older data) is revoked now, not brought back.
      case 'ActivateUser':
        return state.status === 'active'
          ? []
          : [...revokeAllTokens(state), { type: 'UserActivated', data: { userId } }];
      case 'DeactivateUser':
        if (command.caller.userId === userId)
          throw new PlatformError('conflict', 'you cannot deactivate yourself: ask another administrator');
        return state.status === 'deactivated'
          ? []
          : [
              { type: 'UserDeactivated', data: { userId } },
              ...revokeAllTokens(state),
              ...endOtherSessions(state, 'deactivated'),
            ];
      case 'SetPassword':
        return [
          { type: 'UserPasswordSet', data: { userId, passwordHash: command.passwordHash } },
          ...endOtherSessions(state, 'password-changed', command.keepSession),
        ];
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
        if (Object.keys(data).length === 0) return [];
        const changed: IdentityEvent = { type: 'UserChanged', data: { userId, ...data } };
        return [
          data.name === undefined
            ? changed
            : withPersonalValues(changed, { kind: 'user', id: userId, paths: [['name']] }),
        ];
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
      case 'AddTwoFactorDevice':
        if (Object.keys(state.twoFactor.devices).length >= MAX_TWO_FACTOR_DEVICES)
          throw new PlatformError(
            'conflict',
            `a user has at most ${MAX_TWO_FACTOR_DEVICES} authenticator devices`,
          );
        return [
          {
            type: 'TwoFactorDeviceAdded',
            data: {
              userId,
              deviceId: command.deviceId,
              name: command.name,
              sealedSecret: command.sealedSecret,
            },
          },
        ];
      case 'ConfirmTwoFactorDevice': {
        const device = deviceOf(state, command.deviceId);
        if (device.confirmed)
          throw new PlatformError('conflict', `device ${command.deviceId} is confirmed already`);
        const first = !hasTwoFactor(state);
        return [
          {
            type: 'TwoFactorDeviceConfirmed',
            data: { userId, deviceId: command.deviceId, timeStep: command.timeStep },
          },
          ...(first
            ? [
                {
                  type: 'RecoveryCodesIssued' as const,
                  data: { userId, codeHashes: [...command.recoveryCodeHashes] },
                },
              ]
            : []),
          ...endOtherSessions(state, 'two-factor-changed', command.keepSession),
        ];
      }
      case 'RemoveTwoFactorDevice': {
        deviceOf(state, command.deviceId);
        const remaining = Object.entries(state.twoFactor.devices).filter(
          ([id, device]) => id !== command.deviceId && device.confirmed,
        );
        return [
          { type: 'TwoFactorDeviceRemoved', data: { userId, deviceId: command.deviceId } },
          // Without a device, 2FA is off: recovery codes would be a way in that nothing else guards.
          ...(remaining.length === 0 && state.twoFactor.recoveryCodeHashes.length > 0
            ? [{ type: 'RecoveryCodesIssued' as const, data: { userId, codeHashes: [] } }]
            : []),
          ...endOtherSessions(state, 'two-factor-changed', command.keepSession),
        ];
      }
      case 'IssueRecoveryCodes':
        if (!hasTwoFactor(state))
          throw new PlatformError(
            'conflict',
            'recovery codes come with two-factor authentication: confirm a device first',
          );
        return [{ type: 'RecoveryCodesIssued', data: { userId, codeHashes: [...command.codeHashes] } }];
      case 'CompleteSecondFactor':
        return completeSecondFactor(state, command);
      case 'SetTokenPriority':
        if (new Set(command.order).size !== CREDENTIAL_SOURCES.length)
          throw new PlatformError('validation_failed', `name each of ${CREDENTIAL_SOURCES.join(', ')} once`);
        return [{ type: 'TokenPriorityChanged', data: { userId, order: [...command.order] } }];
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
          twoFactor: { devices: {}, recoveryCodeHashes: [], usedPendingLogins: [] },
          sessions: [],
        };
      case 'UserChanged': {
        const { userId: _userId, ...changes } = event.data;
        return { ...state, ...changes };
      }
      case 'UserPasswordSet':
        return { ...state, passwordHash: event.data.passwordHash };
      case 'UserDeactivated':
        return { ...state, status: 'deactivated' };
      case 'UserErased':
        return { ...state, status: 'deactivated', erased: true, name: ERASED_VALUE, email: ERASED_VALUE };
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
      case 'SessionStarted': {
        const { pendingLogin, sessionHash } = event.data;
        const sessions = [...state.sessions, sessionHash].slice(-REMEMBERED_SESSIONS);
        if (pendingLogin === undefined) return { ...state, sessions };
        const usedPendingLogins = [...state.twoFactor.usedPendingLogins, pendingLogin].slice(
          -REMEMBERED_PENDING_LOGINS,
        );
        return { ...state, sessions, twoFactor: { ...state.twoFactor, usedPendingLogins } };
      }
      case 'SessionEnded':
        return {
          ...state,
          sessions: state.sessions.filter((sessionHash) => sessionHash !== event.data.sessionHash),
        };
      case 'TokenPriorityChanged':
        return state;
      case 'TwoFactorDeviceAdded': {
        const { deviceId, name, sealedSecret } = event.data;
        return withDevice(state, deviceId, { name, sealedSecret, confirmed: false, lastTimeStep: -1 });
      }
      case 'TwoFactorDeviceConfirmed':
      case 'TwoFactorCodeUsed': {
        const device = state.twoFactor.devices[event.data.deviceId];
        if (!device) return state;
        return withDevice(state, event.data.deviceId, {
          ...device,
          confirmed: true,
          lastTimeStep: event.data.timeStep,
        });
      }
      case 'TwoFactorDeviceRemoved': {
        const { [event.data.deviceId]: _removed, ...devices } = state.twoFactor.devices;
        return { ...state, twoFactor: { ...state.twoFactor, devices } };
      }
      case 'RecoveryCodesIssued':
        return { ...state, twoFactor: { ...state.twoFactor, recoveryCodeHashes: event.data.codeHashes } };
      case 'RecoveryCodeUsed':
        return {
          ...state,
          twoFactor: {
            ...state.twoFactor,
            recoveryCodeHashes: state.twoFactor.recoveryCodeHashes.filter(
              (hash) => hash !== event.data.codeHash,
            ),
          },
        };
    }
  },
};
