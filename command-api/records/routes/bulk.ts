import type { Request, Response, Router } from 'express';
import {
  bulkDeleteBody,
  bulkWriteBody,
  createRecordsInBulk,
  deleteRecordsInBulk,
  updateRecordsInBulk,
} from '../../../contracts/api/files';
import { mount } from '../../../infra/http/operations';
import { errorBody, PlatformError } from '../../../contracts/errors';
import { childId } from '../../../contracts/ids';
import { streamName } from '../../../contracts/streams';
import { validate } from '../../../contracts/validation';
import { contextOf } from '../../../infra/http/context';
import { sendJson } from '../../../infra/http/respond';
import type { CommandDeps } from '../../deps';
import { recordDecider, type RecordCommand } from '../domain/record';
import { loadingEachStreamOnce, type CommandResult, type NewStreamCommand } from '../../kit/handler';
import { requestHash } from '../../kit/idempotency';
import { authorize, commandContext, idempotencyKey } from '../../kit/route-context';
import { recordResource } from './records';

/** Items per bulk request. */
/**
 * Items of an update, delete or repeated create decided at once: their appends share group commits without
 * holding a whole request in flight.
 */
const CONCURRENT_ITEMS = 100;

type ItemResult =
  | { readonly index: number; readonly status: number; readonly id: number }
  | { readonly index: number; readonly status: number; readonly id?: number; readonly error: unknown };

/** The result of an item a `PlatformError` refused; any other error fails the whole request. */
function failedItem(req: Request, index: number, error: unknown): ItemResult {
  if (!(error instanceof PlatformError)) throw error;
  return { index, status: error.status, error: errorBody(error, contextOf(req).requestId) };
}

/** Answers the items' results, with the highest position written as `X-Position`. */
function sendItemResults(res: Response, results: readonly ItemResult[], position: bigint): void {
  if (position > 0n) res.setHeader('X-Position', position.toString());
  const failed = results.filter((result) => 'error' in result).length;
  sendJson(res, 200, { items: results, meta: { succeeded: results.length - failed, failed } });
}

function highestPosition(position: bigint, result: CommandResult<unknown>): bigint {
  return result.position !== undefined && result.position > position ? result.position : position;
}

/**
 * Bulk create, update and delete of records: every item is its own command with its own result (an item
 * that fails writes nothing and does not stop the others). Answered 200 with `items` (one result per item,
 * in order) and `meta` (how many succeeded and failed); `X-Position` is the highest position written.
 */
export function addBulkRecordRoutes(router: Router, deps: CommandDeps): void {
  const records = recordResource(deps.handler);

  async function runItems(
    req: Request,
    res: Response,
    count: number,
    runItem: (index: number) => Promise<{ id: number; status: number; result: CommandResult<unknown> }>,
  ): Promise<void> {
    const results: ItemResult[] = [];
    let position = 0n;
    for (let start = 0; start < count; start += CONCURRENT_ITEMS) {
      const chunk = Array.from(
        { length: Math.min(CONCURRENT_ITEMS, count - start) },
        (_, offset) => start + offset,
      );
      results.push(
        ...(await Promise.all(
          chunk.map(async (index): Promise<ItemResult> => {
            try {
              const { id, status, result } = await runItem(index);
              position = highestPosition(position, result);
              return { index, status, id };
            } catch (error) {
              return failedItem(req, index, error);
            }
          }),
        )),
      );
    }
    sendItemResults(res, results, position);
  }

  mount(router, createRecordsInBulk, async (req, res) => {
    const principal = authorize(req, 'record', 'create');
    const body = validate(bulkWriteBody, req.body, 'body');
    const identity = await deps.idempotency.identifyBulk(
      principal.tenant,
      principal.credential.id,
      idempotencyKey(req),
      () => requestHash('POST', '/record/bulk', body),
      body.items.length,
      () => deps.ids.next(principal.tenant, 'record'),
    );
    const itemContext = (index: number) =>
      commandContext(req, principal, childId(identity.commandId, `:${index}`));
    if (identity.mayBeRepeat) {
      // A repeated Idempotency-Key: each item looks for the events of its first run before deciding again.
      await runItems(req, res, body.items.length, async (index) => {
        const item = validate(records.createBody, body.items[index], `item ${index}`);
        const id = identity.entityIds[index]!;
        const command = (await records.prepareCreate(item, principal.tenant))(id);
        const result = await deps.handler.handle(
          streamName('record', principal.tenant, id),
          recordDecider,
          command,
          itemContext(index),
          { mayBeRepeat: true },
        );
        return { id, status: 201, result };
      });
      return;
    }
    // A first run: every item's id is new, so the valid items are decided without reading their streams and
    // appended together. The items share one read of each module they name.
    const recordsSharingReads = recordResource(loadingEachStreamOnce(deps.handler));
    const results = new Array<ItemResult>(body.items.length);
    const commands: NewStreamCommand<RecordCommand>[] = [];
    const commandItems: number[] = [];
    for (const [index, candidate] of body.items.entries()) {
      try {
        const item = validate(recordsSharingReads.createBody, candidate, `item ${index}`);
        const id = identity.entityIds[index]!;
        commands.push({
          streamId: streamName('record', principal.tenant, id),
          command: (await recordsSharingReads.prepareCreate(item, principal.tenant))(id),
          context: itemContext(index),
        });
        commandItems.push(index);
      } catch (error) {
        results[index] = failedItem(req, index, error);
      }
    }
    let position = 0n;
    const outcomes = await deps.handler.handleNewStreams(recordDecider, commands);
    outcomes.forEach((outcome, commandIndex) => {
      const index = commandItems[commandIndex]!;
      if (!outcome.ok) {
        results[index] = failedItem(req, index, outcome.error);
        return;
      }
      position = highestPosition(position, outcome.result);
      results[index] = { index, status: 201, id: identity.entityIds[index]! };
    });
    sendItemResults(res, results, position);
  });

  mount(router, updateRecordsInBulk, async (req, res) => {
    const principal = authorize(req, 'record', 'update');
    const body = validate(bulkWriteBody, req.body, 'body');
    await runItems(req, res, body.items.length, async (index) => {
      const item = validate(records.updateBody, body.items[index], `item ${index}`);
      const { id } = item;
      if (id === undefined)
        throw new PlatformError('validation_failed', `item ${index}: every item needs the record's "id"`, [
          { path: 'id', message: 'required' },
        ]);
      const result = await deps.handler.handle(
        streamName('record', principal.tenant, id),
        recordDecider,
        await records.prepareUpdate(item, principal.tenant, id),
        commandContext(req, principal, deps.newCommandId()),
      );
      return { id, status: 200, result };
    });
  });

  mount(router, deleteRecordsInBulk, async (req, res) => {
    const principal = authorize(req, 'record', 'delete');
    const body = validate(bulkDeleteBody, req.body, 'body');
    await runItems(req, res, body.ids.length, async (index) => {
      const id = body.ids[index]!;
      const result = await deps.handler.handle(
        streamName('record', principal.tenant, id),
        recordDecider,
        await records.prepareDelete(principal.tenant, id),
        commandContext(req, principal, deps.newCommandId()),
      );
      return { id, status: 200, result };
    });
  });
}
