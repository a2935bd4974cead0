import { randomInt, randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { createHookBody } from '../../contracts/api/integrator';
import type { Principal } from '../../contracts/auth';
import { PlatformError } from '../../contracts/errors';
import {
  DEFAULT_WEBHOOK_SETTINGS,
  HOOK_KEY_LENGTH,
  hookAddressOf,
  type HookKind,
  type HookPublication,
  type WebhookSettings,
  withDefaults,
} from '../../contracts/integrator';
import { streamName } from '../../contracts/streams';
import type { CommandDeps } from '../deps';
import type { Caller, RepeatIdentity } from '../kit/caller';
import { withCommandId, type CommandResult, type HandleOptions } from '../kit/handler';
import { assertStructureExists } from '../structure/commands';
import { hookQueueDecider, type HookQueueState } from './domain/hook-queue';
import {
  effectiveStatus,
  webhookDecider,
  webhookKeyDecider,
  type WebhookCommand,
  type WebhookState,
} from './domain/webhook';

/** Webhooks' commands: create (with an address), change, and remove from the queue. */

const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A hook id: 32 characters drawn uniformly from 62 (190 bits), unguessable since it is the only credential. */
function newHookKey(): string {
  let key = '';
  for (let index = 0; index < HOOK_KEY_LENGTH; index++) key += KEY_ALPHABET[randomInt(KEY_ALPHABET.length)];
  return key;
}

const hookStream = (tenant: string, webhookId: number) => streamName('webhook', tenant, webhookId);

/** A webhook as the API shows it, with its address as published. */
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

/** The id and command id of a create: new ones, or the first attempt's when it comes again. */
export function identifyCreate(
  deps: CommandDeps,
  principal: Principal,
  create: RepeatIdentity,
  noun: 'webhook' | 'scenario' | 'dataStructure',
): ReturnType<CommandDeps['idempotency']['identify']> {
  return deps.idempotency.identify(principal.tenant, principal.credential.id, create.key, create.hash, () =>
    deps.ids.next(principal.tenant, noun),
  );
}

/** Creates a webhook with these settings and a new address (a repeat of the same create keeps the first one's). */
export async function addWebhook(
  deps: CommandDeps,
  caller: Caller,
  hook: { readonly kind: HookKind; readonly settings: WebhookSettings },
  create: RepeatIdentity,
): Promise<CommandResult<WebhookState>> {
  const { principal } = caller;
  const identity = await identifyCreate(deps, principal, create, 'webhook');
  const webhookId = identity.entityId!;
  const stream = hookStream(principal.tenant, webhookId);
  // A repeat keeps the address the first attempt gave the hook.
  const earlier = identity.mayBeRepeat ? (await deps.handler.load(stream, webhookDecider)).state : null;
  const key = earlier && earlier.status !== 'none' ? earlier.key : newHookKey();
  const udid = earlier && earlier.status !== 'none' ? earlier.udid : randomUUID();
  const context = withCommandId(caller.origin, identity.commandId);
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

/** `POST /webhook`: a hook of the given kind (web by default), the settings not given at their defaults. */
export async function createWebhook(
  deps: CommandDeps,
  caller: Caller,
  input: z.infer<typeof createHookBody>,
  create: RepeatIdentity,
): Promise<CommandResult<WebhookState>> {
  const { kind = 'web', ...given } = input;
  const settings = withDefaults<WebhookSettings>({ ...DEFAULT_WEBHOOK_SETTINGS, name: given.name }, given);
  await assertStructureExists(deps.handler, caller.principal.tenant, settings.dataStructureId);
  return addWebhook(deps, caller, { kind, settings }, create);
}

/** One change of webhook `webhookId` (enable, disable, re-determine, delete). */
export function changeWebhook(
  deps: CommandDeps,
  caller: Caller,
  webhookId: number,
  command: WebhookCommand,
  options: HandleOptions,
): Promise<CommandResult<WebhookState>> {
  return deps.handler.handle(
    hookStream(caller.principal.tenant, webhookId),
    webhookDecider,
    command,
    withCommandId(caller.origin, deps.newCommandId()),
    options,
  );
}

/** New settings of webhook `webhookId`; a data structure it names must exist. */
export async function updateWebhook(
  deps: CommandDeps,
  caller: Caller,
  webhookId: number,
  settings: Partial<WebhookSettings>,
  options: HandleOptions,
): Promise<CommandResult<WebhookState>> {
  await assertStructureExists(deps.handler, caller.principal.tenant, settings.dataStructureId);
  return changeWebhook(deps, caller, webhookId, { kind: 'UpdateWebhook', settings }, options);
}

/** Removes request `only` from the queue of webhook `webhookId`, or every queued request (`only` null). */
export async function removeFromQueue(
  deps: CommandDeps,
  caller: Caller,
  webhookId: number,
  only: string | null,
): Promise<{ readonly result: CommandResult<HookQueueState>; readonly removed: number }> {
  const { tenant } = caller.principal;
  const hook = await deps.handler.load(hookStream(tenant, webhookId), webhookDecider);
  if (hook.state.status === 'none' || hook.state.status === 'deleted')
    throw new PlatformError('not_found', `webhook ${webhookId} not found`);
  const queueStream = streamName('hookQueue', tenant, webhookId);
  const queue = await deps.handler.load(queueStream, hookQueueDecider);
  if (only !== null && !queue.state.requestIds.includes(only))
    throw new PlatformError('not_found', `request ${only} is not in the queue of webhook ${webhookId}`);
  const requestIds = only === null ? queue.state.requestIds : [only];
  const result = await deps.handler.handle(
    queueStream,
    hookQueueDecider,
    { kind: 'RemoveItems', webhookId, requestIds, reason: only === null ? 'cleared' : 'deleted' },
    withCommandId(caller.origin, deps.newCommandId()),
  );
  return { result, removed: requestIds.length };
}
