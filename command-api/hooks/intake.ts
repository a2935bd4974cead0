import { LRUCache } from 'lru-cache';
import { Readable } from 'node:stream';
import { determineStructure, validatorOf, type DataStructure } from '../../languages/data-structure';
import { PlatformError } from '../../contracts/errors';
import type { WebhookRequestReceivedData } from '../../contracts/events/integrator';
import { eventIdFor, newId } from '../../contracts/ids';
import {
  HOOK_RESPONSE_TIMEOUT_MS,
  hookKeySchema,
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
import {
  ACCEPTED_ANSWER,
  answerOf,
  filesByField,
  filesValue,
  keptInline,
  maxBytesOf,
  mismatchRefusal,
  NO_SUCH_HOOK,
  openingRefusal,
  rateRefusal,
  receivingDecision,
  type IntakeRefusal,
} from './domain/intake';
import { scenarioDecider } from '../scenarios/domain/scenario';
import { webhookDecider, webhookKeyDecider, type WebhookState } from './domain/webhook';
import { bookkeepingContext, type CommandContext, type CommandHandler } from '../kit/handler';
import type { HookResponses } from './responses';
import { OneAtATime } from '../kit/one-at-a-time';
import { currentStructure } from '../structure/commands';

/**
 * Receiving for every hook, whatever carries its data (HTTP requests, email): the checks, the data structure,
 * the files, the queue or the run, the log. Receiving is a command: what is accepted is an event before the
 * sender hears so. What to decide is the pure `domain/intake.ts`; this shell finds out the facts it needs,
 * stores, appends and answers.
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

const MAX_CACHED_ADDRESSES = 100_000;

/** A refusal of the receiver, thrown to end the request: the spec's answers are short texts. */
export class HookAnswer extends Error {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(refusal: IntakeRefusal) {
    super(refusal.message);
    this.status = refusal.status;
    this.headers = refusal.headers;
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

/** A hook that passed the checks before its data: whose it is and how it stood. */
export interface OpenHook {
  readonly tenant: string;
  readonly state: WebhookState;
  /**
   * When the request counted against the hook's rate: its time of receipt in the log, so that the log shows
   * the rate the hook kept (a time taken later, after the awaits between, would not).
   */
  readonly admittedAt: Date;
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
  const addresses = new LRUCache<string, { tenant: string; webhookId: number }>({
    max: MAX_CACHED_ADDRESSES,
  });
  /** The hook at address `key`, whose it is and how it stands; null when the address names none. */
  async function hookOf(key: string): Promise<Omit<OpenHook, 'admittedAt'> | null> {
    let address = addresses.get(key);
    if (!address) {
      const claim = await deps.handler.load(
        streamName('hookKey', deps.operatorTenant, key),
        webhookKeyDecider,
      );
      if (claim.state.tenant === null) return null;
      address = { tenant: claim.state.tenant, webhookId: claim.state.webhookId };
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
    if (!result.ok) throw new HookAnswer(mismatchRefusal(result.reasons));
  }

  /** Counts the request against the hook's 30 per second; a refused one does not count. */
  async function admit(tenant: string, webhookId: number, now: number): Promise<void> {
    const key = `hook:${tenant}.${webhookId}`;
    const added = await deps.attempts.add(key, now, now + 1000);
    const refusal = rateRefusal(added.times, now);
    if (refusal === null) return;
    await deps.attempts.remove(key, added.id);
    throw new HookAnswer(refusal);
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
          request: keptInline(Buffer.byteLength(record.body ?? '')) ? record : { ...record, body: null },
        },
      },
      bookkeepingContext(tenant, requestId),
      { newStream: true },
    );
  }

  /**
   * The checks before a hook's body is read: its address, then what `openingRefusal` decides of its state and
   * kind, the caller's address and the declared size, then the rate (which counts it).
   */
  async function open(hookKey: unknown, kind: HookKind, incoming: Incoming): Promise<OpenHook> {
    const parsedKey = hookKeySchema.safeParse(hookKey);
    const hook = parsedKey.success ? await hookOf(parsedKey.data) : null;
    if (hook === null) throw new HookAnswer(NO_SUCH_HOOK);
    // Taken with no await before the count, so the times counted are in the order they are counted.
    const now = deps.now();
    const refusal = openingRefusal({
      hook: hook.state,
      allowlist: allowlistOf(hook.state),
      kind,
      now,
      caller: incoming.ip,
      declaredBytes: incoming.declaredBytes,
    });
    if (refusal !== null) throw new HookAnswer(refusal);
    await admit(hook.tenant, hook.state.webhookId, now.getTime());
    return { ...hook, admittedAt: now };
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
    const { tenant, state, admittedAt: now } = hook;
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
    // The files are validated with the data before anything is stored.
    const placement = filesByField(request.files, structures, state.kind);
    if ('refusal' in placement) throw new HookAnswer(placement.refusal);
    for (const [field, files] of placement.byField)
      setOwn(
        bundle,
        field,
        filesValue(
          state.kind,
          files.map(({ name, mime, data }) => ({ name, mime, data })),
        ),
      );
    for (const structure of structures) validate(structure, bundle);
    const stored = await storeFiles(tenant, state.kind, request, written);
    for (const field of placement.byField.keys())
      setOwn(
        bundle,
        field,
        filesValue(
          state.kind,
          stored.filter((file) => file.field === field).map(({ field: _f, ...ref }) => ref),
        ),
      );

    const commandId = newId();
    const requestId = eventIdFor(tenant, commandId, 0);
    const scenario =
      state.scenarioId === null
        ? null
        : (await deps.handler.load(streamName('scenario', tenant, state.scenarioId), scenarioDecider)).state;
    const { delivery, scenarioId, determinesStructure } = receivingDecision({
      hook: state,
      scenario,
      hearsResponses: deps.responses !== undefined,
    });
    const runsNow = delivery.kind === 'run';
    const awaitsResponse = runsNow && delivery.awaitsResponse;
    const record = requestRecord(incoming, request, stored);
    const payload = JSON.stringify({ request: record, bundle });
    const payloadBytes = Buffer.byteLength(payload);
    const inline = keptInline(payloadBytes);
    const payloadBlobKey = inline ? undefined : newBlobKey(tenant);
    if (payloadBlobKey) {
      written.push(payloadBlobKey);
      await deps.blobs.put(payloadBlobKey, Readable.from([payload]), Number.MAX_SAFE_INTEGER);
    }
    const data: WebhookRequestReceivedData = {
      webhookId: state.webhookId,
      requestId,
      scenarioId,
      receivedAt: now.toISOString(),
      method: incoming.method,
      bytes: request.bytes,
      queued: !runsNow,
      sequential: runsNow && delivery.sequential,
      awaitsResponse,
      ...(inline
        ? { request: record, bundle: bundle as WebhookRequestReceivedData['bundle'] }
        : { payloadBlobKey }),
      payloadBytes,
    };
    const context: CommandContext = bookkeepingContext(tenant, commandId);
    const waiter = awaitsResponse ? (deps.responses?.expect(requestId, timeoutMs) ?? null) : null;
    try {
      if (delivery.kind === 'run')
        await deps.handler.handle(
          hookRequestStream(tenant, state.webhookId, requestId, delivery.sequential),
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
            { kind: 'Enqueue', request: data, capacity: delivery.capacity },
            context,
          ),
        );
    } catch (error) {
      waiter?.cancel();
      throw error;
    }
    // Accepted: what was stored is the request's now, whatever happens to this answer.
    written.length = 0;
    if (determinesStructure) recordStructure(tenant, state.webhookId, bundle, requestId);
    if (!waiter) return ACCEPTED_ANSWER;
    return answerOf(await waiter.wait());
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
