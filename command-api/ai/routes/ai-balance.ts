import type { Router } from 'express';
import { topUpAiBalance, topUpBody } from '../../../contracts/api/ai';
import { isAdmin } from '../../../contracts/auth';
import { PlatformError } from '../../../contracts/errors';
import { validate } from '../../../contracts/validation';
import { mount } from '../../../infra/http/operations';
import { balanceView } from '../domain/ai-balance';
import type { CommandDeps } from '../../deps';
import { requestHash } from '../../kit/idempotency';
import { authorize, callerOf, idempotencyKey, sendResult } from '../../kit/route-context';
import { topUpBalance } from '../commands';

/** `POST /ai/balance/top-up`: an administrator adds tokens to the system's AI token balance. */
export function addAiBalanceRoutes(router: Router, deps: CommandDeps): void {
  mount(router, topUpAiBalance, async (req, res) => {
    const principal = authorize(req, 'aiBalance', 'update');
    if (!isAdmin(principal))
      throw new PlatformError('forbidden', 'only administrators add tokens to the AI token balance');
    const body = validate(topUpBody, req.body, 'body');
    const result = await topUpBalance(deps, callerOf(req, principal), body, {
      key: idempotencyKey(req),
      hash: () => requestHash('POST', '/ai/balance/top-up', body),
    });
    sendResult(res, 201, result, balanceView(result.state, deps.hooks.now()));
  });
}
