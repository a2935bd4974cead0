import type { Request, Response, Router } from 'express';
import { randomInt, randomUUID } from 'node:crypto';
import {
  clearHookQueue,
  createHookBody,
  deleteHookQueueItem,
  disableHook,
  enableHook,
  HOOK_OPERATIONS,
  redetermineHookStructure,
  updateHookBody,
} from '../../../contracts/api/integrator';
import { PlatformError } from '../../../contracts/errors';
import {
  DEFAULT_WEBHOOK_SETTINGS,
  HOOK_KEY_LENGTH,
  hookAddressOf,
  type HookKind,
  type HookPublication,
  type WebhookSettings,
  withDefaults,
} from '../../../contracts/integrator';
import { streamName } from '../../../contracts/streams';
import { validate } from '../../../contracts/validation';
import { mount } from '../../../infra/http/operations';
import { idParam, optionalId } from '../../../infra/http/params';
import { hookQueueDecider } from '../domain/hook-queue';
import {
  effectiveStatus,
  webhookDecider,
  webhookKeyDecider,
  type WebhookCommand,
  type WebhookState,
} from '../domain/webhook';
import type { CommandDeps } from '../../deps';
import type { CommandResult } from '../../kit/handler';
import type { Principal } from '../../../contracts/auth';
import { requestHash } from '../../kit/idempotency';
import { assertStructureExists } from '../../structure/commands';
import {
  authorize,
  commandContext,
  idempotencyKey,
  preconditions,
  sendResult,
} from '../../kit/route-context';

const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A hook id: 32 characters drawn uniformly from 62 (190 bits), unguessable since it is the only credential. */
function newHookKey(): string {
  let key = '';
  for (let index = 0; index < HOOK_KEY_LENGTH; index++) key += KEY_ALPHABET[randomInt(KEY_ALPHABET.length)];
  return key;
}

export function webhookView(
  state: WebhookState,
  publication: HookPublication,
  now: Date,
): Record<string, unknown> {
  const status = effectiveStatus(state, now);
  return {
    id: state.webhookId,
    name: state.settings.name,
    kind: state.kind,
    ...hookAddressOf(state.kind, state.key, publication),
    key: state.key,
    udid: state.udid,
    status: status === 'none' ? 'deactivated' : status,
    scenarioId: state.scenarioId,
    unboundSince: state.unboundSince,
    ipRestrictions: state.settings.ipRestrictions,
    dataStructure: state.settings.dataStructure,
    dataStructureId: state.settings.dataStructureId ?? null,
    determinedStructure: state.determinedStructure,
    redetermining: state.redetermining,
    getRequestHeaders: state.settings.getRequestHeaders,
    getRequestMethod: state.settings.getRequestMethod,
    jsonPassThrough: state.settings.jsonPassThrough,
    maxResults: state.settings.maxResults,
    queueCapacity: state.settings.queueCapacity,
  };
}

/** How a create is recognised when it comes again: its Idempotency-Key (if any) and the request's hash. */
export interface CreateIdentity {
  readonly key: string | undefined;
  readonly hash: () => string;
}

/** The id and command id of a create: new ones, or the first attempt's when it comes again. */
export function identifyCreate(
  deps: CommandDeps,
  principal: Principal,
  create: CreateIdentity,
  noun: 'webhook' | 'scenario' | 'dataStructure',
): ReturnType<CommandDeps['idempotency']['identify']> {
  return deps.idempotency.identify(principal.tenant, principal.credential.id, create.key, create.hash, () =>
    deps.ids.next(principal.tenant, noun),
  );
}

/** Creates a webhook with a new address (a repeat of the same create keeps the first one's). */
export async function createWebhook(
  deps: CommandDeps,
  req: Request,
  principal: Principal,
  hook: { readonly kind: HookKind; readonly settings: WebhookSettings },
  create: CreateIdentity,
): Promise<CommandResult<WebhookState>> {
  const identity = await identifyCreate(deps, principal, create, 'webhook');
  const webhookId = identity.entityId!;
  const stream = streamName('webhook', principal.tenant, webhookId);
  // A repeat keeps the address the first attempt gave the hook.
  const earlier = identity.mayBeRepeat ? (await deps.handler.load(stream, webhookDecider)).state : null;
  const key = earlier && earlier.status !== 'none' ? earlier.key : newHookKey();
  const udid = earlier && earlier.status !== 'none' ? earlier.udid : randomUUID();
  const context = commandContext(req, principal, identity.commandId);
  await deps.handler.handle(
    streamName('hookKey', deps.operatorTenant, key),
    webhookKeyDecider,
    { kind: 'AssignKey', key, tenant: principal.tenant, webhookId },
    { ...context, commandId: `${identity.commandId}:key` },
    { newStream: !identity.mayBeRepeat },
  );
  return deps.handler.handle(
    stream,
    webhookDecider,
    {
      kind: 'CreateWebhook',
      webhookId,
      key,
      udid,
      hookKind: hook.kind,
      settings: hook.settings,
      now: deps.hooks.now(),
    },
    context,
    identity.mayBeRepeat ? { mayBeRepeat: true } : { newStream: true },
  );
}

/** Webhooks: create (with their address), change, enable, disable, re-determine, delete; their queue. */
export function addWebhookRoutes(router: Router, deps: CommandDeps): void {
  const view = (state: WebhookState) => webhookView(state, deps.hooks, deps.hooks.now());
  const hookStream = (tenant: string, webhookId: number) => streamName('webhook', tenant, webhookId);

  mount(router, HOOK_OPERATIONS.create, async (req, res) => {
    const principal = authorize(req, 'webhook', 'create');
    const body = validate(createHookBody, req.body, 'body');
    const { kind = 'web', ...given } = body;
    const settings = withDefaults<WebhookSettings>({ ...DEFAULT_WEBHOOK_SETTINGS, name: given.name }, given);
    await assertStructureExists(deps.handler, principal.tenant, settings.dataStructureId);
    const result = await createWebhook(
      deps,
      req,
      principal,
      { kind, settings },
      {
        key: idempotencyKey(req),
        hash: () => requestHash('POST', '/webhook', body),
      },
    );
    res.setHeader('Location', `${req.baseUrl}/webhook/${result.state.webhookId}`);
    sendResult(res, 201, result, view(result.state));
  });

  async function change(req: Request, res: Response, command: (webhookId: number) => WebhookCommand) {
    const principal = authorize(req, 'webhook', 'update');
    const webhookId = idParam(req, 'webhookId');
    const result = await deps.handler.handle(
      hookStream(principal.tenant, webhookId),
      webhookDecider,
      command(webhookId),
      commandContext(req, principal, deps.newCommandId()),
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
    req.params.webhookId = String(webhookId);
    await assertStructureExists(
      deps.handler,
      authorize(req, 'webhook', 'update').tenant,
      settings.dataStructureId,
    );
    await change(req, res, () => ({ kind: 'UpdateWebhook', settings }));
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
    const result = await deps.handler.handle(
      hookStream(principal.tenant, webhookId),
      webhookDecider,
      { kind: 'DeleteWebhook' },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, { id: webhookId, deleted: true });
  });

  async function removeFromQueue(req: Request, res: Response, only: string | null) {
    const principal = authorize(req, 'webhook', 'delete');
    const webhookId = idParam(req, 'webhookId');
    const hook = await deps.handler.load(hookStream(principal.tenant, webhookId), webhookDecider);
    if (hook.state.status === 'none' || hook.state.status === 'deleted')
      throw new PlatformError('not_found', `webhook ${webhookId} not found`);
    const queueStream = streamName('hookQueue', principal.tenant, webhookId);
    const queue = await deps.handler.load(queueStream, hookQueueDecider);
    if (only !== null && !queue.state.requestIds.includes(only))
      throw new PlatformError('not_found', `request ${only} is not in the queue of webhook ${webhookId}`);
    const requestIds = only === null ? queue.state.requestIds : [only];
    const result = await deps.handler.handle(
      queueStream,
      hookQueueDecider,
      { kind: 'RemoveItems', webhookId, requestIds, reason: only === null ? 'cleared' : 'deleted' },
      commandContext(req, principal, deps.newCommandId()),
    );
    sendResult(res, 200, { ...result, revision: undefined }, { webhookId, removed: requestIds.length });
  }
  mount(router, clearHookQueue, (req, res) => removeFromQueue(req, res, null));
  mount(router, deleteHookQueueItem, (req, res) =>
    removeFromQueue(req, res, validate(deleteHookQueueItem.params, req.params, 'path').requestId),
  );
}
