import type { Request, Router } from 'express';
import {
  activateUser,
  createUser,
  createUserBody,
  deactivateUser,
  setPasswordBody,
  setUserPassword,
  updateUser,
  updateUserBody,
} from '../../../contracts/api/users';
import { mount } from '../../../infra/http/operations';
import { isAdmin, type Principal } from '../../../contracts/auth';
import { PlatformError } from '../../../contracts/errors';
import { uuidV5 } from '../../../contracts/ids';
import { streamName } from '../../../contracts/streams';
import { validate } from '../../../contracts/validation';
import { idParam } from '../../../infra/http/params';
import type { CommandDeps } from '../../deps';
import { emailClaimDecider, emailClaimStream } from '../domain/email-claim';
import { userDecider, type Caller, type UserState } from '../domain/user';
import { requestHash } from '../../kit/idempotency';
import { hashPassword, verifyPassword } from '../passwords';
import { revokeGrantsOf } from '../../oauth/commands';
import {
  authorize,
  authorizeAccount,
  commandContext,
  idempotencyKey,
  preconditions,
  sendResult,
} from '../../kit/route-context';

/** The acting user and the rights of the credential in use, for rules that depend on who asks. */
export function callerOf(principal: Principal): Caller {
  const userId = Number(principal.userId);
  return {
    userId: Number.isSafeInteger(userId) ? userId : null,
    credentialPermissions: principal.credentialPermissions,
  };
}

/** Managing users is for administrators (and their credentials must allow it). */
function requireAdmin(req: Request, operation: 'create' | 'update'): Principal {
  const principal = authorize(req, 'user', operation);
  if (!isAdmin(principal)) throw new PlatformError('forbidden', 'only administrators manage users');
  return principal;
}

/** The session making a change to its own account stays; the account's other sessions end (SE-05). */
export function keptSession(principal: Principal, self: boolean): { keepSession?: string } {
  const sessionHash = principal.credential.sessionHash;
  return self && sessionHash !== undefined ? { keepSession: sessionHash } : {};
}

export function userView(state: UserState): Record<string, unknown> {
  return {
    id: state.userId,
    email: state.email,
    name: state.name,
    role: state.role,
    active: state.status === 'active',
    permissions: state.permissions,
  };
}

/** Users of a tenant: created, changed, deactivated and activated by administrators. */
export function addUserRoutes(router: Router, deps: CommandDeps): void {
  mount(router, createUser, async (req, res) => {
    const principal = requireAdmin(req, 'create');
    const body = validate(createUserBody, req.body, 'body');
    const { tenant } = principal;
    const identity = await deps.idempotency.identify(
      tenant,
      principal.credential.id,
      idempotencyKey(req),
      () => requestHash('POST', '/user', body),
      () => deps.ids.next(tenant, 'user'),
    );
    const userId = identity.entityId!;
    // The address first: its stream is the uniqueness rule. A claim whose user never came to be is stale.
    const claimStream = emailClaimStream(tenant, body.email);
    const claim = await deps.handler.load(claimStream, emailClaimDecider);
    const holder =
      claim.state.userId === null
        ? null
        : await deps.handler.load(streamName('user', tenant, claim.state.userId), userDecider);
    await deps.handler.handle(
      claimStream,
      emailClaimDecider,
      { kind: 'ClaimEmail', email: body.email, userId, holderExists: holder?.state.status !== 'none' },
      // Its own command id: event ids derive from it, and the user's events come from the request's.
      commandContext(req, principal, uuidV5(`email-claim:${identity.commandId}`)),
    );
    const result = await deps.handler.handle(
      streamName('user', tenant, userId),
      userDecider,
      {
        kind: 'RegisterUser',
        userId,
        email: body.email,
        name: body.name,
        role: body.role,
        passwordHash: body.password === undefined ? null : await hashPassword(body.password),
        ...(body.permissions !== undefined && { permissions: body.permissions }),
      },
      commandContext(req, principal, identity.commandId),
      identity.mayBeRepeat ? { mayBeRepeat: true } : { newStream: true },
    );
    res.setHeader('Location', `${req.baseUrl}/user/${userId}`);
    sendResult(res, 201, result, userView(result.state));
  });

  mount(router, updateUser, async (req, res) => {
    const principal = requireAdmin(req, 'update');
    const body = validate(updateUserBody, req.body, 'body');
    const result = await deps.handler.handle(
      streamName('user', principal.tenant, idParam(req, 'userId')),
      userDecider,
      { kind: 'ChangeUser', caller: callerOf(principal), ...body },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, userView(result.state));
  });

  for (const action of ['deactivate', 'activate'] as const)
    mount(router, action === 'deactivate' ? deactivateUser : activateUser, async (req, res) => {
      const principal = requireAdmin(req, 'update');
      const result = await deps.handler.handle(
        streamName('user', principal.tenant, idParam(req, 'userId')),
        userDecider,
        action === 'deactivate'
          ? { kind: 'DeactivateUser', caller: callerOf(principal) }
          : { kind: 'ActivateUser' },
        commandContext(req, principal, deps.newCommandId()),
        preconditions(req),
      );
      if (action === 'deactivate')
        await revokeGrantsOf(deps, principal.tenant, result.state.userId, () =>
          commandContext(req, principal, deps.newCommandId()),
        );
      sendResult(res, 200, result, userView(result.state));
    });

  /** Administrators set anyone's password; users change their own with the current one. */
  mount(router, setUserPassword, async (req, res) => {
    const userId = idParam(req, 'userId');
    const { principal, self } = authorizeAccount(
      req,
      userId,
      'user',
      'update',
      "only administrators set another user's password",
    );
    const body = validate(setPasswordBody, req.body, 'body');
    const stream = streamName('user', principal.tenant, userId);
    if (self && !isAdmin(principal)) {
      const user = await deps.handler.load(stream, userDecider);
      if (
        body.currentPassword === undefined ||
        !(await verifyPassword(body.currentPassword, user.state.passwordHash))
      )
        throw new PlatformError('forbidden', 'the current password is missing or wrong');
    }
    const result = await deps.handler.handle(
      stream,
      userDecider,
      {
        kind: 'SetPassword',
        passwordHash: await hashPassword(body.password),
        ...keptSession(principal, self),
      },
      commandContext(req, principal, deps.newCommandId()),
    );
    await revokeGrantsOf(deps, principal.tenant, userId, () =>
      commandContext(req, principal, deps.newCommandId()),
    );
    sendResult(res, 200, result, { id: userId, passwordChanged: true });
  });
}
