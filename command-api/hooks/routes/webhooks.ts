import type { Request, Response, Router } from 'express';
import {
  clearHookQueue,
  createHookBody,
  deleteHookQueueItem,
  disableHook,
  enableHook,
  eraseHookRequest,
  eraseHookRequestBody,
  HOOK_OPERATIONS,
  redetermineHookStructure,
  updateHookBody,
} from '../../../contracts/api/integrator';
import { isAdmin } from '../../../contracts/auth';
import { PlatformError } from '../../../contracts/errors';
import { validate } from '../../../contracts/validation';
import { mount } from '../../../infra/http/operations';
import { idParam, optionalId } from '../../../infra/http/params';
import type { WebhookCommand, WebhookState } from '../domain/webhook';
import type { CommandDeps } from '../../deps';
import { requestHash } from '../../kit/idempotency';
import {
  authorize,
  callerOf,
  commandContext,
  idempotencyKey,
  preconditions,
  sendAt,
  sendResult,
} from '../../kit/route-context';
import { changeWebhook, createWebhook, removeFromQueue, updateWebhook, webhookView } from '../commands';
import { eraseHookRequest as eraseRequest } from '../erasure';

/** Webhooks: create (with their address), change, enable, disable, re-determine, delete; their queue. */
export function addWebhookRoutes(router: Router, deps: CommandDeps): void {
  const view = (state: WebhookState) => webhookView(state, deps.hooks, deps.hooks.now());

  mount(router, HOOK_OPERATIONS.create, async (req, res) => {
    const principal = authorize(req, 'webhook', 'create');
    const body = validate(createHookBody, req.body, 'body');
    const result = await createWebhook(deps, callerOf(req, principal), body, {
      key: idempotencyKey(req),
      hash: () => requestHash('POST', '/webhook', body),
    });
    res.setHeader('Location', `${req.baseUrl}/webhook/${result.state.webhookId}`);
    sendResult(res, 201, result, view(result.state));
  });

  async function change(req: Request, res: Response, command: () => WebhookCommand) {
    const principal = authorize(req, 'webhook', 'update');
    const webhookId = idParam(req, 'webhookId');
    const result = await changeWebhook(
      deps,
      callerOf(req, principal),
      webhookId,
      command(),
      preconditions(req),
    );
    sendResult(res, 200, result, view(result.state));
  }

  const update = async (req: Request, res: Response) => {
    const body = validate(updateHookBody, req.body, 'body');
    const { id: bodyId, ...settings } = body;
    const webhookId = optionalId(req, 'webhookId') ?? bodyId;
    if (webhookId === undefined)
      throw new PlatformError(
        'validation_failed',
        'the webhook id is missing: PUT /webhook/{webhookId} or a body "id"',
      );
    if (bodyId !== undefined && bodyId !== webhookId)
      throw new PlatformError(
        'validation_failed',
        `the body id ${bodyId} differs from the path id ${webhookId}`,
      );
    const principal = authorize(req, 'webhook', 'update');
    const result = await updateWebhook(
      deps,
      callerOf(req, principal),
      webhookId,
      settings,
      preconditions(req),
    );
    sendResult(res, 200, result, view(result.state));
  };
  mount(router, HOOK_OPERATIONS.update, update);
  mount(router, HOOK_OPERATIONS.updateById, update);
  mount(router, enableHook, (req, res) =>
    change(req, res, () => ({ kind: 'EnableWebhook', now: deps.hooks.now() })),
  );
  mount(router, disableHook, (req, res) => change(req, res, () => ({ kind: 'DisableWebhook' })));
  mount(router, redetermineHookStructure, (req, res) => change(req, res, () => ({ kind: 'Redetermine' })));

  mount(router, HOOK_OPERATIONS.delete, async (req, res) => {
    const principal = authorize(req, 'webhook', 'delete');
    const webhookId = idParam(req, 'webhookId');
    const result = await changeWebhook(
      deps,
      callerOf(req, principal),
      webhookId,
      { kind: 'DeleteWebhook' },
      preconditions(req),
    );
    sendResult(res, 200, result, { id: webhookId, deleted: true });
  });

  async function removeQueued(req: Request, res: Response, only: string | null) {
    const principal = authorize(req, 'webhook', 'delete');
    const webhookId = idParam(req, 'webhookId');
    const { result, removed } = await removeFromQueue(deps, callerOf(req, principal), webhookId, only);
    sendResult(res, 200, { ...result, revision: undefined }, { webhookId, removed });
  }
  mount(router, clearHookQueue, (req, res) => removeQueued(req, res, null));
  mount(router, deleteHookQueueItem, (req, res) =>
    removeQueued(req, res, validate(deleteHookQueueItem.params, req.params, 'path').requestId),
  );

  /** Administrators erase what a request's sender sent (crypto-shredding), whatever became of it. */
  mount(router, eraseHookRequest, async (req, res) => {
    const principal = authorize(req, 'webhook', 'delete');
    if (!isAdmin(principal))
      throw new PlatformError('forbidden', "only administrators erase a hook request's data");
    const webhookId = idParam(req, 'webhookId');
    const { requestId } = validate(eraseHookRequest.params, req.params, 'path');
    const { reason } = validate(eraseHookRequestBody, req.body, 'body');
    const { runs, position } = await eraseRequest(
      deps,
      commandContext(req, principal, deps.newCommandId()),
      webhookId,
      requestId,
      reason,
    );
    sendAt(res, 200, position, { webhookId, requestId, erased: true, runs });
  });
}
