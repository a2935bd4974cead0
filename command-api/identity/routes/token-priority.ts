import type { Router } from 'express';
import { setTokenPriority, tokenPriorityBody } from '../../../contracts/api/auth';
import { mount } from '../../../infra/http/operations';
import { streamName } from '../../../contracts/streams';
import { validate } from '../../../contracts/validation';
import { principalOf } from '../../../infra/http/context';
import type { CommandDeps } from '../../deps';
import { userDecider } from '../domain/user';
import { authorizeAccount, commandContext, sendResult } from '../../kit/route-context';

/** `PUT /auth/token-priority`: the calling user's order of credentials, for requests that carry several. */
export function addTokenPriorityRoute(router: Router, deps: CommandDeps): void {
  mount(router, setTokenPriority, async (req, res) => {
    const userId = Number(principalOf(req).userId);
    const { principal } = authorizeAccount(
      req,
      userId,
      'user',
      'update',
      'only users set their own priority',
    );
    const body = validate(tokenPriorityBody, req.body, 'body');
    const result = await deps.handler.handle(
      streamName('user', principal.tenant, userId),
      userDecider,
      { kind: 'SetTokenPriority', order: body.order },
      commandContext(req, principal, deps.newCommandId()),
    );
    sendResult(res, 200, result, { order: body.order });
  });
}
