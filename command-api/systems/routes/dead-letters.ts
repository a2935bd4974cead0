import type { Request, Router } from 'express';
import { deadLetterPath, listDeadLetters, retryDeadLetter } from '../../../contracts/api/dead-letters';
import { isAdmin } from '../../../contracts/auth';
import { PlatformError } from '../../../contracts/errors';
import { parseListParams, resolveListParams } from '../../../contracts/query/list-params';
import { catalogue } from '../../../languages/filter/resolve';
import { validate } from '../../../contracts/validation';
import { mount } from '../../../infra/http/operations';
import { sendJson } from '../../../infra/http/respond';
import type { DeadLetters } from '../../../projections/dead-letters';
import type { CommandDeps } from '../../deps';
import { authorize } from '../../kit/route-context';

const DEAD_LETTER_FIELDS = catalogue({
  projection: { path: 'projection', type: 'string' },
  version: { path: 'version', type: 'integer' },
  tenant: { path: 'tenant', type: 'string' },
  type: { path: 'type', type: 'string' },
  stream: { path: 'stream', type: 'string' },
  eventId: { path: 'eventId', type: 'string' },
  at: { path: 'at', type: 'datetime' },
});

/**
 * `/dead-letter`: the events projections went past. Operator administrators only, as for a system's model
 * (`system-ai.ts`): a dead letter names an event of any system, and a retry writes read models of all.
 */
export function addDeadLetterRoutes(
  router: Router,
  deps: Pick<CommandDeps, 'operatorTenant'>,
  deadLetters: DeadLetters,
): void {
  const operator = (req: Request, operation: 'read' | 'update') => {
    const principal = authorize(req, 'system', operation);
    if (principal.tenant !== deps.operatorTenant || !isAdmin(principal))
      throw new PlatformError('forbidden', 'only administrators of the operator system see dead letters');
    return principal;
  };

  mount(router, listDeadLetters, async (req, res) => {
    operator(req, 'read');
    const params = parseListParams(req.query);
    const query = resolveListParams(params, DEAD_LETTER_FIELDS, [{ path: 'at', direction: 'desc' }]);
    const page = await deadLetters.list(query);
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, 200, {
      items: page.items,
      meta: { total: page.total, offset: params.offset, limit: params.limit },
    });
  });

  mount(router, retryDeadLetter, async (req, res) => {
    operator(req, 'update');
    const { deadLetterId } = validate(deadLetterPath, req.params, 'path');
    const outcome = await deadLetters.retry(deadLetterId);
    if (outcome.kind === 'not-found') throw new PlatformError('not_found', `no dead letter ${deadLetterId}`);
    if (outcome.kind === 'failed')
      throw new PlatformError('conflict', `the event still cannot be applied: ${outcome.error}`);
    sendJson(res, 200, outcome.deadLetter);
  });
}
