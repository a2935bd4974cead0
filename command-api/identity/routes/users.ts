import type { Request, Router } from 'express';
import {
  activateUser,
  createUser,
  createUserBody,
  deactivateUser,
  eraseUser as eraseUserOperation,
  eraseUserBody,
  setPasswordBody,
  setUserPassword,
  updateUser,
  updateUserBody,
} from '../../../contracts/api/users';
import { mount } from '../../../infra/http/operations';
import { isAdmin, type Principal } from '../../../contracts/auth';
import { PlatformError } from '../../../contracts/errors';
import { streamName } from '../../../contracts/streams';
import { validate } from '../../../contracts/validation';
import { idParam } from '../../../infra/http/params';
import type { CommandDeps } from '../../deps';
import { userDecider, type UserState } from '../domain/user';
import { actingUserOf, changePassword, eraseUser, registerUser, setUserActive } from '../commands';
import {
  authorize,
  authorizeAccount,
  commandContext,
  callerOf,
  idempotencyKey,
  preconditions,
  sendResult,
} from '../../kit/route-context';

/** Managing users is for administrators (and their credentials must allow it). */
function requireAdmin(req: Request, operation: 'create' | 'update'): Principal {
  const principal = authorize(req, 'user', operation);
  if (!isAdmin(principal)) throw new PlatformError('forbidden', 'only administrators manage users');
  return principal;
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
    const { userId, result } = await registerUser(deps, callerOf(req, principal), body, idempotencyKey(req));
    res.setHeader('Location', `${req.baseUrl}/user/${userId}`);
    sendResult(res, 201, result, userView(result.state));
  });

  mount(router, updateUser, async (req, res) => {
    const principal = requireAdmin(req, 'update');
    const body = validate(updateUserBody, req.body, 'body');
    const result = await deps.handler.handle(
      streamName('user', principal.tenant, idParam(req, 'userId')),
      userDecider,
      { kind: 'ChangeUser', caller: actingUserOf(principal), ...body },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, userView(result.state));
  });

  for (const action of ['deactivate', 'activate'] as const)
    mount(router, action === 'deactivate' ? deactivateUser : activateUser, async (req, res) => {
      const principal = requireAdmin(req, 'update');
      const result = await setUserActive(
        deps,
        callerOf(req, principal),
        idParam(req, 'userId'),
        action === 'activate',
        preconditions(req),
      );
      sendResult(res, 200, result, userView(result.state));
    });

  mount(router, eraseUserOperation, async (req, res) => {
    const principal = requireAdmin(req, 'update');
    const userId = idParam(req, 'userId');
    const { reason } = validate(eraseUserBody, req.body, 'body');
    const result = await eraseUser(deps, callerOf(req, principal), userId, reason);
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
    const result = await changePassword(deps, callerOf(req, principal), userId, self, body);
    sendResult(res, 200, result, { id: userId, passwordChanged: true });
  });
}
