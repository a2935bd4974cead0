import type { Router } from 'express';
import { topUpAiBalance, topUpBody } from '../../../contracts/api/ai';
import { isAdmin } from '../../../contracts/auth';
import { PlatformError } from '../../../contracts/errors';
import { streamName } from '../../../contracts/streams';
import { validate } from '../../../contracts/validation';
import { mount } from '../../../infra/http/operations';
import { AI_BALANCE_STREAM_ID, aiBalanceDecider, balanceView } from '../domain/ai-balance';
import type { CommandDeps } from '../../deps';
import { requestHash } from '../../kit/idempotency';
import { authorize, commandContext, idempotencyKey, sendResult } from '../../kit/route-context';

/** `POST /ai/balance/top-up`: an administrator adds tokens to the system's AI token balance. */
export function addAiBalanceRoutes(router: Router, deps: CommandDeps): void {
  mount(router, topUpAiBalance, async (req, res) => {
    const principal = authorize(req, 'aiBalance', 'update');
    if (!isAdmin(principal))
      throw new PlatformError('forbidden', 'only administrators add tokens to the AI token balance');
    const body = validate(topUpBody, req.body, 'body');
    const identity = await deps.idempotency.identify(
      principal.tenant,
      principal.credential.id,
      idempotencyKey(req),
      () => requestHash('POST', '/ai/balance/top-up', body),
      null,
    );
    const result = await deps.handler.handle(
      streamName('aiBalance', principal.tenant, AI_BALANCE_STREAM_ID),
      aiBalanceDecider,
      { kind: 'TopUp', tokens: body.tokens, note: body.note ?? null, userId: principal.userId },
      commandContext(req, principal, identity.commandId),
      identity.mayBeRepeat ? { mayBeRepeat: true } : {},
    );
    sendResult(res, 201, result, balanceView(result.state, deps.hooks.now()));
  });
}
