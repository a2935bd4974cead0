import type { Request, Router } from 'express';
import {
  createToken,
  createTokenBody,
  revokeToken,
  tokenParams,
  updateToken,
  updateTokenBody,
} from '../../../contracts/api/users';
import { mount } from '../../../infra/http/operations';
import type { Principal } from '../../../contracts/auth';
import { streamName } from '../../../contracts/streams';
import { validate } from '../../../contracts/validation';
import { idParam } from '../../../infra/http/params';
import type { CommandDeps } from '../../deps';
import { userDecider } from '../domain/user';
import {
  authorizeAccount,
  commandContext,
  callerOf,
  idempotencyKey,
  preconditions,
  sendResult,
} from '../../kit/route-context';
import { actingUserOf, issueApiToken } from '../commands';

/** A user's tokens are theirs and their administrators' to manage (never another member's). */
function tokenOwner(
  req: Request,
  operation: 'create' | 'update' | 'delete',
): { principal: Principal; userId: number } {
  const userId = idParam(req, 'userId');
  const { principal } = authorizeAccount(
    req,
    userId,
    'token',
    operation,
    "only the user and administrators manage a user's tokens",
  );
  return { principal, userId };
}

/** Private API tokens: `/auth/{userId}/token…`. The value is in the creation answer only. */
export function addTokenRoutes(router: Router, deps: CommandDeps): void {
  mount(router, createToken, async (req, res) => {
    const { principal, userId } = tokenOwner(req, 'create');
    const body = validate(createTokenBody, req.body, 'body');
    const { result, token, value } = await issueApiToken(
      deps,
      callerOf(req, principal),
      userId,
      body,
      idempotencyKey(req),
    );
    const { tokenHash: _hash, bootstrap: _bootstrap, tokenId, ...shown } = token;
    res.setHeader('Location', `${req.baseUrl}/auth/${userId}/token/${tokenId}`);
    res.setHeader('Cache-Control', 'no-store');
    sendResult(res, 201, result, { id: tokenId, userId, ...shown, token: value });
  });

  mount(router, updateToken, async (req, res) => {
    const { principal, userId } = tokenOwner(req, 'update');
    const { tokenId } = validate(tokenParams, req.params, 'path');
    const body = validate(updateTokenBody, req.body, 'body');
    const result = await deps.handler.handle(
      streamName('user', principal.tenant, userId),
      userDecider,
      { kind: 'ChangeApiToken', tokenId, caller: actingUserOf(principal), ...body },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, { id: tokenId, userId, ...body });
  });

  mount(router, revokeToken, async (req, res) => {
    const { principal, userId } = tokenOwner(req, 'delete');
    const { tokenId } = validate(tokenParams, req.params, 'path');
    const result = await deps.handler.handle(
      streamName('user', principal.tenant, userId),
      userDecider,
      { kind: 'RevokeApiToken', tokenId },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, { id: tokenId, userId, revoked: true });
  });
}
