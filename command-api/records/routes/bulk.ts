import type { Request, Response, Router } from 'express';
import {
  bulkDeleteBody,
  bulkWriteBody,
  createRecordsInBulk,
  deleteRecordsInBulk,
  updateRecordsInBulk,
} from '../../../contracts/api/files';
import { errorBody } from '../../../contracts/errors';
import { validate } from '../../../contracts/validation';
import { contextOf } from '../../../infra/http/context';
import { mount } from '../../../infra/http/operations';
import { sendJson } from '../../../infra/http/respond';
import type { CommandDeps } from '../../deps';
import { authorize, commandContext, commandOrigin, idempotencyKey } from '../../kit/route-context';
import type { ItemOutcome, RecordCommands } from '../commands';

/**
 * Answers the items' outcomes (`status` for those that succeeded) with the highest position written as
 * `X-Position`.
 */
function sendItemResults(
  req: Request,
  res: Response,
  outcomes: readonly ItemOutcome[],
  status: number,
): void {
  let position = 0n;
  const results = outcomes.map((outcome, index) => {
    if (!outcome.ok)
      return {
        index,
        status: outcome.error.status,
        error: errorBody(outcome.error, contextOf(req).requestId),
      };
    const reached = outcome.result.position;
    if (reached !== undefined && reached > position) position = reached;
    return { index, status, id: outcome.id };
  });
  if (position > 0n) res.setHeader('X-Position', position.toString());
  const failed = outcomes.filter((outcome) => !outcome.ok).length;
  sendJson(res, 200, { items: results, meta: { succeeded: results.length - failed, failed } });
}

/**
 * Bulk create, update and delete of records: every item is its own command with its own result (an item
 * that fails writes nothing and does not stop the others). Answered 200 with `items` (one result per item,
 * in order) and `meta` (how many succeeded and failed); `X-Position` is the highest position written.
 */
export function addBulkRecordRoutes(router: Router, deps: CommandDeps, records: RecordCommands): void {
  mount(router, createRecordsInBulk, async (req, res) => {
    const principal = authorize(req, 'record', 'create');
    const body = validate(bulkWriteBody, req.body, 'body');
    const outcomes = await records.createMany(
      commandOrigin(req, principal),
      { holder: principal.credential.id, key: idempotencyKey(req) },
      body.items,
    );
    sendItemResults(req, res, outcomes, 201);
  });

  mount(router, updateRecordsInBulk, async (req, res) => {
    const principal = authorize(req, 'record', 'update');
    const body = validate(bulkWriteBody, req.body, 'body');
    const outcomes = await records.updateMany(
      () => commandContext(req, principal, deps.newCommandId()),
      body.items,
    );
    sendItemResults(req, res, outcomes, 200);
  });

  mount(router, deleteRecordsInBulk, async (req, res) => {
    const principal = authorize(req, 'record', 'delete');
    const body = validate(bulkDeleteBody, req.body, 'body');
    const outcomes = await records.deleteMany(
      () => commandContext(req, principal, deps.newCommandId()),
      body.ids,
    );
    sendItemResults(req, res, outcomes, 200);
  });
}
