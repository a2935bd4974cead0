import { Router, type Request, type Response } from 'express';
import { receiveWebhook, receiveWebhookGet } from '../../contracts/api/integrator';
import { HOOK_MAX_BODY_BYTES, type HookResponse } from '../../contracts/integrator';
import { HOOK_ANSWER_HEADERS, responseHeaderProblem } from '../../contracts/hook-response-headers';
import { parseIpAllowlist, type IpAllowlist } from '../../contracts/ip-allowlist';
import { headersOf, readHookRequest, type HookRequest } from '../../infra/http/hook-request';
import { mount } from '../../infra/http/operations';
import type { Logger } from '../../infra/logging';
import { refusalAnswer, type HookIntake, type Incoming } from './intake';

export interface HookReceiverDeps {
  readonly intake: HookIntake;
  readonly logger: Logger;
  /** Proxies whose `X-Forwarded-For` counts (see HOOK_TRUSTED_PROXIES). */
  readonly trustedProxies: string;
}

const LIMITS = { maxBytes: HOOK_MAX_BODY_BYTES, maxFiles: 20, maxFields: 1000 };

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

/** A Content-Type with `charset=utf-8`, the encoding of every hook answer's body. */
function inUtf8(type: string): string {
  const parameters = type.split(';').filter((part, index) => index === 0 || !/^\s*charset=/i.test(part));
  return [...parameters, ' charset=utf-8'].join(';');
}

/**
 * Sends a hook's answer: the scenario's headers that a hook may answer (a response kept from before they were
 * checked may hold others: they are dropped, never a 500), then the sandbox every hook answer carries. The body
 * goes as bytes, so that node writes the headers apart, in Latin-1 (with a text body it writes them as UTF-8).
 */
function sendResponse(res: Response, response: HookResponse): void {
  const headers = response.headers.filter(
    (header) => responseHeaderProblem(header.name, header.value) === null,
  );
  for (const header of headers) res.setHeader(header.name, header.value);
  const type = headers.findLast((header) => header.name.toLowerCase() === 'content-type')?.value;
  res.setHeader('Content-Type', type === undefined ? 'text/plain; charset=utf-8' : inUtf8(type));
  for (const header of HOOK_ANSWER_HEADERS) res.setHeader(header.name, header.value);
  res.status(response.status).send(Buffer.from(response.body, 'utf8'));
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

  /** One request to web hook `hookKey`, from its checks to its answer. */
  async function serve(
    hookKey: unknown,
    incoming: Incoming,
    read: () => Promise<HookRequest>,
  ): Promise<HookResponse> {
    const hook = await deps.intake.open(hookKey, 'web', incoming);
    return deps.intake.receive(hook, incoming, read);
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
