import { Readable } from 'node:stream';
import { determineStructure, validatorOf, type DataStructure } from '../../languages/data-structure';
import { PlatformError } from '../../contracts/errors';
import type { WebhookRequestReceivedData } from '../../contracts/events/integrator';
import { eventIdFor, newId } from '../../contracts/ids';
import {
  HOOK_ACCEPTED,
  HOOK_MAX_BODY_BYTES,
  HOOK_REQUESTS_PER_SECOND,
  HOOK_RESPONSE_TIMEOUT_MS,
  HOOK_SCENARIO_FAILED,
  hookKeySchema,
  MAIL_MAX_BYTES,
  type HookKind,
  type HookRequestRecord,
  type HookResponse,
  type StoredHookFile,
} from '../../contracts/integrator';
import { parseIpAllowlist, type IpAllowlist } from '../../contracts/ip-allowlist';
import { streamName } from '../../contracts/streams';
import type { AttemptLog } from '../../infra/attempts/port';
import type { BlobStore } from '../../infra/blob-store/port';
import { newBlobKey } from '../../infra/blob-store/port';
import { bundleOf, setOwn, type HookRequest } from '../../infra/http/hook-request';
import type { Logger } from '../../infra/logging';
import { hookQueueDecider } from './domain/hook-queue';
import { hookRequestDecider, hookRequestStream } from './domain/hook-request';
import { hasWebhookResponse, scenarioDecider } from '../scenarios/domain/scenario';
import { effectiveStatus, webhookDecider, webhookKeyDecider, type WebhookState } from './domain/webhook';
import { bookkeepingContext, type CommandContext, type CommandHandler } from '../kit/handler';
import type { HookResponses, RunOutcome } from './responses';
import { OneAtATime } from '../kit/one-at-a-time';
import { currentStructure } from '../structure/commands';

/**
 * Receiving for every hook, whatever carries its data (HTTP requests, email): the checks, the data structure,
 * the files, the queue or the run, the log. Receiving is a command: what is accepted is an event before the
 * sender hears so.
 */
export interface HookIntakeDeps {
  readonly handler: CommandHandler;
  /** Request counts per hook, shared by every receiver process (the 30/s limit holds across them). */
  readonly attempts: AttemptLog;
  readonly blobs: BlobStore;
  /** Where runs' Webhook responses are awaited; absent where only mail is received (nobody waits for one). */
  readonly responses?: HookResponses;
  readonly logger: Logger;
  /** The tenant whose streams hold the hook addresses (the operator's). */
  readonly operatorTenant: string;
  readonly now: () => Date;
  readonly responseTimeoutMs?: number;
}

/** Requests and bundles bigger than this go to the blob store; the event keeps their key. */
const INLINE_PAYLOAD_BYTES = 256 * 1024;
const MAX_CACHED_ADDRESSES = 100_000;

/** The most a hook of a kind takes: 5 MB requests, 25 MB emails (attachments included). */
export function maxBytesOf(kind: HookKind): number {
  return kind === 'mail' ? MAIL_MAX_BYTES : HOOK_MAX_BODY_BYTES;
}

export /** A refusal of the receiver: the spec's answers are short texts. */
class HookAnswer extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** What the receiver knows of a request before its body is read. */
export interface Incoming {
  readonly method: string;
  readonly url: string;
  readonly headers: ReadonlyArray<{ readonly name: string; readonly value: string }>;
  /** The caller's address; null for a delivery from inside the platform (a button press). */
  readonly ip: string | null;
  readonly declaredBytes: number;
}

/** The request as the log shows it; a body that was not read is null. */
function requestRecord(
  incoming: Incoming,
  request: HookRequest | undefined,
  files: StoredHookFile[],
): HookRequestRecord {
  return {
    method: incoming.method,
    url: incoming.url,
    headers: [...(request ? request.headers : incoming.headers)],
    query: request?.query ?? {},
    body: request
      ? (request.rawBody ?? (request.body === undefined ? null : JSON.stringify(request.body)))
      : null,
    contentType: request?.contentType ?? null,
    bytes: request?.bytes ?? 0,
    ip: incoming.ip ?? 'platform',
    files,
  };
}

export const ACCEPTED_ANSWER: HookResponse = { status: 200, headers: [], body: HOOK_ACCEPTED };

/** A hook that passed the checks before its data: whose it is and how it stood. */
export interface OpenHook {
  readonly tenant: string;
  readonly state: WebhookState;
}

export interface HookIntake {
  open(hookKey: unknown, kind: HookKind, incoming: Incoming): Promise<OpenHook>;
  receive(hook: OpenHook, incoming: Incoming, read: () => Promise<HookRequest>): Promise<HookResponse>;
}

export function createHookIntake(deps: HookIntakeDeps): HookIntake {
  const enqueues = new OneAtATime();
  const allowlists = new WeakMap<object, IpAllowlist>();
  const validators = new WeakMap<object, ReturnType<typeof validatorOf>>();
  const timeoutMs = deps.responseTimeoutMs ?? HOOK_RESPONSE_TIMEOUT_MS;
  /** Hooks whose structure this process is storing: the requests meanwhile leave it to that one. */
  const determining = new Set<string>();

  /** Addresses never change hands once assigned: each is read from its claim stream once. */
  const addresses = new Map<string, { tenant: string; webhookId: number }>();
  async function hookOf(key: string): Promise<{ tenant: string; state: WebhookState }> {
    let address = addresses.get(key);
    if (!address) {
      const claim = await deps.handler.load(
        streamName('hookKey', deps.operatorTenant, key),
        webhookKeyDecider,
      );
      if (claim.state.tenant === null) throw new HookAnswer(404, 'No hook has this id.');
      address = { tenant: claim.state.tenant, webhookId: claim.state.webhookId };
      if (addresses.size >= MAX_CACHED_ADDRESSES) addresses.delete(addresses.keys().next().value!);
      addresses.set(key, address);
    }
    const hook = await deps.handler.load(
      streamName('webhook', address.tenant, address.webhookId),
      webhookDecider,
    );
    return { tenant: address.tenant, state: hook.state };
  }

  function allowlistOf(state: WebhookState): IpAllowlist {
    let allowlist = allowlists.get(state.settings);
    if (!allowlist) {
      allowlist = parseIpAllowlist(state.settings.ipRestrictions);
      allowlists.set(state.settings, allowlist);
    }
    return allowlist;
  }

  function validate(structure: DataStructure, bundle: unknown): void {
    // By the fields' identity: a reusable structure is loaded per request, its fields stay the same object.
    let validator = validators.get(structure.fields);
    if (!validator) {
      validator = validatorOf(structure);
      validators.set(structure.fields, validator);
    }
    const result = validator(bundle);
    if (!result.ok)
      throw new HookAnswer(
        400,
        `The data does not match the hook's data structure: ${result.reasons
          .map((reason) => `${reason.path}: ${reason.message}`)
          .join('; ')}`,
      );
  }

  /** Counts the request against the hook's 30 per second; a refused one does not count. */
  async function admit(tenant: string, webhookId: number, now: number): Promise<void> {
    const key = `hook:${tenant}.${webhookId}`;
    const added = await deps.attempts.add(key, now, now + 1000);
    if (added.times.length <= HOOK_REQUESTS_PER_SECOND) return;
    await deps.attempts.remove(key, added.id);
    const oldest = added.times[added.times.length - 1 - HOOK_REQUESTS_PER_SECOND] ?? now;
    throw new HookAnswer(429, 'Too many requests: a hook takes 30 requests per second.', {
      'Retry-After': String(Math.max(1, Math.ceil((oldest + 1000 - now) / 1000))),
    });
  }

  /**
   * The files of a request by field, as the data structure validates them (before anything is stored). A
   * web request's file parts need a field of the structure; an email's attachments always have theirs.
   */
  function filesByField(
    request: HookRequest,
    structures: readonly DataStructure[],
    kind: HookKind,
  ): Map<string, unknown[]> {
    const byField = new Map<string, unknown[]>();
    for (const file of request.files) {
      const field = structures
        .flatMap((structure) => structure.fields)
        .find((candidate) => candidate.name === file.field);
      if (kind === 'web' && field?.type !== 'collection' && field?.type !== 'array')
        throw new HookAnswer(
          400,
          `File part "${file.field}" is not in the hook's data structure: add a collection field "${file.field}" with name (text), mime (text) and data (buffer).`,
        );
      byField.set(file.field, [
        ...(byField.get(file.field) ?? []),
        { name: file.name, mime: file.mime, data: file.data },
      ]);
    }
    return byField;
  }

  /** Puts the request's files into the blob store; `written` collects the keys, to remove on a refusal. */
  async function storeFiles(
    tenant: string,
    kind: HookKind,
    request: HookRequest,
    written: string[],
  ): Promise<StoredHookFile[]> {
    const stored: StoredHookFile[] = [];
    for (const file of request.files) {
      const blobKey = newBlobKey(tenant);
      written.push(blobKey);
      const blob = await deps.blobs.put(blobKey, Readable.from([file.data]), maxBytesOf(kind));
      stored.push({ field: file.field, name: file.name, mime: file.mime, size: blob.size, blobKey });
    }
    return stored;
  }

  /**
   * A request to a live hook that was refused after it counted against the hook's rate (a body or data the
   * hook does not take, a full queue) is logged as a `warning` entry: the caller sees why, so can the owner.
   */
  async function logRefusal(
    tenant: string,
    webhookId: number,
    incoming: Incoming,
    receivedAt: Date,
    refusal: { status: number; message: string },
    request: HookRequest | undefined,
  ): Promise<void> {
    const requestId = newId();
    const record: HookRequestRecord = requestRecord(incoming, request, []);
    await deps.handler.handle(
      streamName('hookRequest', tenant, requestId),
      hookRequestDecider,
      {
        kind: 'RefuseRequest',
        refusal: {
          webhookId,
          requestId,
          receivedAt: receivedAt.toISOString(),
          method: incoming.method,
          bytes: request?.bytes ?? 0,
          status: refusal.status,
          message: refusal.message,
          request:
            Buffer.byteLength(record.body ?? '') <= INLINE_PAYLOAD_BYTES ? record : { ...record, body: null },
        },
      },
      bookkeepingContext(tenant, requestId),
      { newStream: true },
    );
  }

  /**
   * The checks before a hook's body is read: its address, its state and kind, the caller's address (when it
   * has one), the declared size, and the rate (which counts it).
   */
  async function open(hookKey: unknown, kind: HookKind, incoming: Incoming): Promise<OpenHook> {
    const parsedKey = hookKeySchema.safeParse(hookKey);
    if (!parsedKey.success) throw new HookAnswer(404, 'No hook has this id.');
    const now = deps.now();
    const { tenant, state } = await hookOf(parsedKey.data);
    const status = effectiveStatus(state, now);
    if (status === 'none' || state.kind !== kind) throw new HookAnswer(404, 'No hook has this id.');
    if (status === 'deactivated')
      throw new HookAnswer(410, 'This hook was deactivated: it had no scenario for more than 120 hours.');
    if (status === 'disabled') throw new HookAnswer(403, 'This hook is disabled.');
    if (incoming.ip !== null && !allowlistOf(state).allows(incoming.ip))
      throw new HookAnswer(403, 'This address may not call this hook.');
    const maxBytes = maxBytesOf(kind);
    if (incoming.declaredBytes > maxBytes)
      throw new HookAnswer(413, `The body is over the limit of ${maxBytes} bytes.`);
    await admit(tenant, state.webhookId, now.getTime());
    return { tenant, state };
  }

  /**
   * What an opened hook was sent (`read`), accepted as an event before the answer. A refusal is logged with
   * the hook, and what it had stored is removed.
   */
  async function receive(
    hook: OpenHook,
    incoming: Incoming,
    read: () => Promise<HookRequest>,
  ): Promise<HookResponse> {
    const { tenant, state } = hook;
    const now = deps.now();
    let request: HookRequest | undefined;
    const written: string[] = [];
    try {
      request = await read();
      return await accept(incoming, { tenant, state, now, request, written });
    } catch (error) {
      const refusal =
        error instanceof HookAnswer || (error instanceof PlatformError && error.status < 500) ? error : null;
      await Promise.all(written.map((blobKey) => deps.blobs.delete(blobKey).catch(() => undefined)));
      if (refusal)
        await logRefusal(tenant, state.webhookId, incoming, now, refusal, request).catch((failure: unknown) =>
          deps.logger.warn({ err: failure }, 'logging a refused hook request failed'),
        );
      throw error;
    }
  }

  /** The accepted part: the request is read and counted; it becomes an event, then the answer. */
  async function accept(
    incoming: Incoming,
    at: {
      tenant: string;
      state: WebhookState;
      now: Date;
      request: HookRequest;
      written: string[];
    },
  ): Promise<HookResponse> {
    const { tenant, state, now, request, written } = at;
    const settings = state.settings;
    const bundle = bundleOf(request, {
      headers: settings.getRequestHeaders,
      method: settings.getRequestMethod,
      jsonPassThrough: settings.jsonPassThrough,
    });
    // The hook's own structure and its reusable one as it is now (one deleted since validates nothing).
    const reusable =
      settings.dataStructureId === null || settings.dataStructureId === undefined
        ? null
        : await currentStructure(deps.handler, tenant, settings.dataStructureId);
    const structures = [settings.dataStructure, reusable].filter(
      (structure): structure is DataStructure => structure !== null,
    );
    const byField = filesByField(request, structures, state.kind);
    // A web hook's one file is a value, several an array; an email's attachments are always an array.
    const filesValue = (files: unknown[]) => (files.length === 1 && state.kind === 'web' ? files[0] : files);
    for (const [field, values] of byField) setOwn(bundle, field, filesValue(values));
    for (const structure of structures) validate(structure, bundle);
    const stored = await storeFiles(tenant, state.kind, request, written);
    for (const field of byField.keys())
      setOwn(
        bundle,
        field,
        filesValue(stored.filter((file) => file.field === field).map(({ field: _f, ...ref }) => ref)),
      );

    const commandId = newId();
    const requestId = eventIdFor(tenant, commandId, 0);
    const scenario =
      state.scenarioId === null
        ? null
        : (await deps.handler.load(streamName('scenario', tenant, state.scenarioId), scenarioDecider)).state;
    const runsNow = scenario?.status === 'active' && scenario.settings.schedule.kind === 'instant';
    // An email has nobody waiting for an answer; a web request does where this process can hear the run's.
    const responses =
      runsNow && state.kind === 'web' && hasWebhookResponse(scenario.settings) ? deps.responses : undefined;
    const awaitsResponse = responses !== undefined;
    const record = requestRecord(incoming, request, stored);
    const payload = JSON.stringify({ request: record, bundle });
    const payloadBytes = Buffer.byteLength(payload);
    const inline = payloadBytes <= INLINE_PAYLOAD_BYTES;
    const payloadBlobKey = inline ? undefined : newBlobKey(tenant);
    if (payloadBlobKey) {
      written.push(payloadBlobKey);
      await deps.blobs.put(payloadBlobKey, Readable.from([payload]), Number.MAX_SAFE_INTEGER);
    }
    const data: WebhookRequestReceivedData = {
      webhookId: state.webhookId,
      requestId,
      scenarioId: scenario && scenario.status !== 'deleted' ? state.scenarioId : null,
      receivedAt: now.toISOString(),
      method: incoming.method,
      bytes: request.bytes,
      queued: !runsNow,
      sequential: runsNow && scenario.settings.sequential,
      awaitsResponse,
      ...(inline
        ? { request: record, bundle: bundle as WebhookRequestReceivedData['bundle'] }
        : { payloadBlobKey }),
      payloadBytes,
    };
    const context: CommandContext = bookkeepingContext(tenant, commandId);
    const waiter = responses?.expect(requestId, timeoutMs) ?? null;
    try {
      if (runsNow)
        await deps.handler.handle(
          hookRequestStream(tenant, state.webhookId, requestId, scenario.settings.sequential),
          hookRequestDecider,
          { kind: 'ReceiveRequest', request: data },
          context,
          { newStream: true },
        );
      else
        // One enqueue at a time per queue in this process: a burst then appends in turn instead of
        // conflicting on the queue's revision (other processes' writes are still retried by the handler).
        await enqueues.run(`${tenant}.${state.webhookId}`, () =>
          deps.handler.handle(
            streamName('hookQueue', tenant, state.webhookId),
            hookQueueDecider,
            { kind: 'Enqueue', request: data, capacity: settings.queueCapacity },
            context,
          ),
        );
    } catch (error) {
      waiter?.cancel();
      throw error;
    }
    // Accepted: what was stored is the request's now, whatever happens to this answer.
    written.length = 0;
    if (state.redetermining || (state.determinedStructure === null && settings.dataStructure === null))
      recordStructure(tenant, state.webhookId, bundle, requestId);
    if (!waiter) return ACCEPTED_ANSWER;
    return answerOf(await waiter.wait());
  }

  function answerOf(outcome: RunOutcome): HookResponse {
    if (outcome.kind === 'response') return outcome.response;
    if (outcome.kind === 'failed') return { status: 500, headers: [], body: HOOK_SCENARIO_FAILED };
    return ACCEPTED_ANSWER;
  }

  /** Re-determine: the shape of this request is kept with the hook (after the answer; for mapping only). */
  function recordStructure(tenant: string, webhookId: number, bundle: unknown, requestId: string): void {
    const hook = `${tenant}.${webhookId}`;
    if (determining.has(hook)) return;
    determining.add(hook);
    deps.handler
      .handle(
        streamName('webhook', tenant, webhookId),
        webhookDecider,
        { kind: 'RecordStructure', structure: determineStructure(bundle), requestId },
        bookkeepingContext(tenant, newId()),
      )
      .catch((error: unknown) =>
        deps.logger.warn({ err: error, webhookId }, 'storing the determined data structure failed'),
      )
      .finally(() => determining.delete(hook));
  }

  return { open, receive };
}

/** A refusal as the answer the sender gets; anything else is the receiver's own failure (null). */
export function refusalAnswer(error: unknown): HookResponse | null {
  const headersOf = (headers: Readonly<Record<string, string>>) =>
    Object.entries(headers).map(([name, value]) => ({ name, value }));
  if (error instanceof HookAnswer)
    return { status: error.status, headers: headersOf(error.headers), body: error.message };
  if (error instanceof PlatformError && error.status < 500)
    return { status: error.status, headers: [], body: error.message };
  return null;
}
