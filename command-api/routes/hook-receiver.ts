import { Router, type Request, type Response } from 'express';
import { Readable } from 'node:stream';
import { receiveWebhook, receiveWebhookGet } from '../../contracts/api/integrator';
import { determineStructure, validatorOf, type DataStructure } from '../../contracts/data-structure';
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
  type HookRequestRecord,
  type HookResponse,
  type StoredHookFile,
} from '../../contracts/integrator';
import { parseIpAllowlist, type IpAllowlist } from '../../contracts/ip-allowlist';
import { streamName } from '../../contracts/streams';
import type { AttemptLog } from '../../infra/attempts/port';
import type { BlobStore } from '../../infra/blob-store/port';
import { newBlobKey } from '../../infra/blob-store/port';
import {
  bundleOf,
  headersOf,
  readHookRequest,
  setOwn,
  type HookRequest,
} from '../../infra/http/hook-request';
import { mount } from '../../infra/http/operations';
import type { Logger } from '../../infra/logging';
import { hookQueueDecider } from '../domain/hook-queue';
import { hookRequestDecider, hookRequestStream } from '../domain/hook-request';
import { hasWebhookResponse, scenarioDecider } from '../domain/scenario';
import { effectiveStatus, webhookDecider, webhookKeyDecider, type WebhookState } from '../domain/webhook';
import { bookkeepingContext, type CommandContext, type CommandHandler } from '../kit/handler';
import type { HookResponses, RunOutcome } from '../kit/hook-responses';
import { currentStructure } from './data-structures';

export interface HookReceiverDeps {
  readonly handler: CommandHandler;
  /** Request counts per hook, shared by every receiver process (the 30/s limit holds across them). */
  readonly attempts: AttemptLog;
  readonly blobs: BlobStore;
  readonly responses: HookResponses;
  readonly logger: Logger;
  /** The tenant whose streams hold the hook addresses (the operator's). */
  readonly operatorTenant: string;
  /** Proxies whose `X-Forwarded-For` counts (see HOOK_TRUSTED_PROXIES). */
  readonly trustedProxies: string;
  readonly now: () => Date;
  readonly responseTimeoutMs?: number;
}

/** Requests and bundles bigger than this go to the blob store; the event keeps their key. */
const INLINE_PAYLOAD_BYTES = 256 * 1024;
const LIMITS = { maxBytes: HOOK_MAX_BODY_BYTES, maxFiles: 20, maxFields: 1000 };
const MAX_CACHED_ADDRESSES = 100_000;

/** A refusal of the receiver: the spec's answers are short texts. */
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
interface Incoming {
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

/**
 * The address of the caller: the connection's, or — when it comes from a trusted proxy — the nearest hop of
 * `X-Forwarded-For` that is not a trusted proxy itself (hops are appended on the right).
 */
export function callerAddress(req: Pick<Request, 'socket' | 'headers'>, trusted: IpAllowlist): string {
  let address = req.socket.remoteAddress ?? '';
  if (trusted.empty) return address;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((hop) => hop.trim())
    .filter((hop) => hop.length > 0);
  while (trusted.allows(address) && hops.length > 0) address = hops.pop()!;
  return address;
}

const ACCEPTED_ANSWER: HookResponse = { status: 200, headers: [], body: HOOK_ACCEPTED };

function sendResponse(res: Response, response: HookResponse): void {
  const hasType = response.headers.some((header) => header.name.toLowerCase() === 'content-type');
  for (const header of response.headers) res.setHeader(header.name, header.value);
  if (!hasType) res.type('text/plain; charset=utf-8');
  res.status(response.status).send(response.body);
}

/** The receiver of every hook: its route, and delivery from inside the platform. */
export interface HookReceiver {
  /** `{hook_url}/<hook id>`, no credentials. */
  readonly router: Router;
  /**
   * Delivers a JSON body to hook `hookKey` as a POST would (its state, rate, data structure, queue, log and
   * response), for a caller inside the platform: no address to check against the hook's IP restrictions.
   * Every refusal is an answer, as the caller of the hook's address would get it.
   */
  deliverJson(
    hookKey: string,
    body: unknown,
    query?: Record<string, string | string[]>,
  ): Promise<HookResponse>;
}

export function createHookReceiver(deps: HookReceiverDeps): HookReceiver {
  const trusted = parseIpAllowlist(deps.trustedProxies);
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

  /** The files of a request by field, as the data structure validates them (before anything is stored). */
  function filesByField(request: HookRequest, structures: readonly DataStructure[]): Map<string, unknown[]> {
    const byField = new Map<string, unknown[]>();
    for (const file of request.files) {
      const field = structures
        .flatMap((structure) => structure.fields)
        .find((candidate) => candidate.name === file.field);
      if (field?.type !== 'collection' && field?.type !== 'array')
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
    request: HookRequest,
    written: string[],
  ): Promise<StoredHookFile[]> {
    const stored: StoredHookFile[] = [];
    for (const file of request.files) {
      const blobKey = newBlobKey(tenant);
      written.push(blobKey);
      const blob = await deps.blobs.put(blobKey, Readable.from([file.data]), HOOK_MAX_BODY_BYTES);
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
   * One request to hook `hookKey`, from its checks to its answer: the hook's state, the caller's address (when
   * it has one), the declared size and the rate, then the body (`read`) and its acceptance. A refusal after the
   * rate check is logged; what it had stored is removed.
   */
  async function serve(
    hookKey: unknown,
    incoming: Incoming,
    read: () => Promise<HookRequest>,
  ): Promise<HookResponse> {
    const parsedKey = hookKeySchema.safeParse(hookKey);
    if (!parsedKey.success) throw new HookAnswer(404, 'No hook has this id.');
    const key = parsedKey.data;
    const now = deps.now();
    const { tenant, state } = await hookOf(key);
    const status = effectiveStatus(state, now);
    if (status === 'none') throw new HookAnswer(404, 'No hook has this id.');
    if (status === 'deactivated')
      throw new HookAnswer(410, 'This hook was deactivated: it had no scenario for more than 120 hours.');
    if (status === 'disabled') throw new HookAnswer(403, 'This hook is disabled.');
    if (incoming.ip !== null && !allowlistOf(state).allows(incoming.ip))
      throw new HookAnswer(403, 'This address may not call this hook.');
    if (incoming.declaredBytes > HOOK_MAX_BODY_BYTES)
      throw new HookAnswer(413, `The body is over the limit of ${HOOK_MAX_BODY_BYTES} bytes.`);
    await admit(tenant, state.webhookId, now.getTime());
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
          deps.logger.warn({ err: failure }, 'logging a refused webhook request failed'),
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
    const byField = filesByField(request, structures);
    for (const [field, values] of byField) setOwn(bundle, field, values.length === 1 ? values[0] : values);
    for (const structure of structures) validate(structure, bundle);
    const stored = await storeFiles(tenant, request, written);
    for (const field of byField.keys()) {
      const refs = stored.filter((file) => file.field === field).map(({ field: _f, ...ref }) => ref);
      setOwn(bundle, field, refs.length === 1 ? refs[0] : refs);
    }

    const commandId = newId();
    const requestId = eventIdFor(commandId, 0);
    const scenario =
      state.scenarioId === null
        ? null
        : (await deps.handler.load(streamName('scenario', tenant, state.scenarioId), scenarioDecider)).state;
    const runsNow = scenario?.status === 'active' && scenario.settings.schedule.kind === 'instant';
    const awaitsResponse = runsNow && hasWebhookResponse(scenario.settings);
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
      ...(runsNow && scenario.settings.sequential && { sequential: true }),
      awaitsResponse,
      ...(inline
        ? { request: record, bundle: bundle as WebhookRequestReceivedData['bundle'] }
        : { payloadBlobKey }),
      payloadBytes,
    };
    const context: CommandContext = bookkeepingContext(tenant, commandId);
    const waiter = awaitsResponse ? deps.responses.expect(requestId, timeoutMs) : null;
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
        await deps.handler.handle(
          streamName('hookQueue', tenant, state.webhookId),
          hookQueueDecider,
          { kind: 'Enqueue', request: data, capacity: settings.queueCapacity },
          context,
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

  /** A refusal as the answer the caller gets; anything else is the receiver's own failure. */
  function refusalAnswer(error: unknown): HookResponse | null {
    const headersOf = (headers: Readonly<Record<string, string>>) =>
      Object.entries(headers).map(([name, value]) => ({ name, value }));
    if (error instanceof HookAnswer)
      return { status: error.status, headers: headersOf(error.headers), body: error.message };
    if (error instanceof PlatformError && error.status < 500)
      return { status: error.status, headers: [], body: error.message };
    return null;
  }

  const handle = async (req: Request, res: Response): Promise<void> => {
    try {
      const incoming: Incoming = {
        method: req.method,
        url: req.originalUrl,
        headers: headersOf(req),
        ip: callerAddress(req, trusted),
        declaredBytes: Number(req.headers['content-length'] ?? 0),
      };
      sendResponse(res, await serve(req.params.hookKey, incoming, () => readHookRequest(req, LIMITS)));
    } catch (error) {
      if (res.headersSent) return;
      // No `Connection: close` on a refusal: a client still sending would see a reset instead of the answer.
      // Node discards what is left of the body (bounded by the server's request timeout).
      const refusal = refusalAnswer(error);
      if (refusal) return sendResponse(res, refusal);
      deps.logger.error({ err: error, url: req.originalUrl }, 'webhook receiver failed');
      sendResponse(res, { status: 500, headers: [], body: 'Internal error.' });
    }
  };
  const router = Router();
  mount(router, receiveWebhookGet, handle);
  mount(router, receiveWebhook, handle);

  async function deliverJson(
    hookKey: string,
    body: unknown,
    query: Record<string, string | string[]> = {},
  ): Promise<HookResponse> {
    const text = JSON.stringify(body) ?? 'null';
    const headers = [{ name: 'Content-Type', value: 'application/json' }];
    const request: HookRequest = {
      method: 'POST',
      query,
      body,
      files: [],
      rawBody: text,
      contentType: 'application/json',
      bytes: Buffer.byteLength(text),
      headers,
    };
    const incoming: Incoming = {
      method: 'POST',
      url: `/hook/${hookKey}`,
      headers,
      ip: null,
      declaredBytes: request.bytes,
    };
    try {
      return await serve(hookKey, incoming, async () => request);
    } catch (error) {
      const refusal = refusalAnswer(error);
      if (refusal) return refusal;
      throw error;
    }
  }

  return { router, deliverJson };
}
