import express, {
  type ErrorRequestHandler,
  type Express,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from 'express';
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../../contracts/auth';
import { chooseCredential, isAdmin, type CredentialSource } from '../../contracts/auth';
import { errorBody, PlatformError } from '../../contracts/errors';
import type { Logger } from '../logging';
import { contextOf, principalOf, setContext } from './context';
import { PublicAddress } from './public-address';
import type { ApiMeter } from './metering';
import { servesHooks, tenantFromHost } from './tenant';
import { HOOK_ANSWER_HEADERS } from '../../contracts/hook-response-headers';
import { BEARER_CREDENTIAL, type CredentialPresentation } from './authenticate';
import { cookieValue, SESSION_COOKIE } from './cookies';
import { validate } from '../../contracts/validation';
import { sendJson } from './respond';
import { indexedByFirstSegment } from './segment-index';
import { API_BASE, mount } from './operations';
import { mcpRouter, type McpOptions } from '../mcp/server';
import { getApiUsage, getHealth, getMetrics, getReadiness, usageQuery } from '../../contracts/api/platform';
import { receiveWebhook } from '../../contracts/api/integrator';
import type { Operation } from '../../contracts/api/operation';
import { ORDINARY_POLICY, requestPolicies, type RequestPolicy } from './operation-policy';

export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: Readonly<Record<string, unknown>>;
}

export interface HttpKitOptions {
  readonly version: string;
  readonly baseHost: string;
  readonly defaultTenant: string;
  /** `PUBLIC_URL`: the address the platform publishes about itself (see PublicAddress). */
  readonly publicUrl?: string;
  readonly bodyLimit: string;
  readonly trustProxyHops: number;
  readonly logger: Logger;
  /**
   * Resolves a bearer token or session id of a tenant to its principal; null when it is unknown, expired or
   * revoked. `presentation.csrfToken` is set when a session cookie authenticates a write.
   */
  readonly authenticate: (
    tenant: string,
    token: string,
    presentation?: CredentialPresentation,
  ) => Promise<Principal | null>;
  readonly meter: ApiMeter;
  readonly readiness: () => Promise<ReadinessReport>;
  readonly metrics: () => Promise<{ contentType: string; body: string }>;
  /**
   * Who may read `/metrics`: with a token, only `Authorization: Bearer <token>`; without one, only a client
   * on this host connecting directly (loopback, no proxy's forwarding header).
   */
  readonly metricsToken?: string;
  /**
   * The operations this app serves under `/api` (`OPERATIONS`). Their declarations say which requests take
   * forms, read their own body, authenticate their caller themselves, count the session cookie without
   * `X-CSRF-Token`, or go to the command API though they are GETs (see `./operation-policy.ts`).
   */
  readonly operations: readonly Operation[];
  /**
   * The MCP tool server (`/v2/{system}/…`) over these operations. Its tool calls go into this app, or to
   * `apiUrl` when this process does not serve both APIs.
   */
  readonly mcp?: Omit<McpOptions, 'version' | 'baseHost' | 'authenticate'>;
  /**
   * The webhook receiver, mounted at the root before any body parser: it reads its requests itself, and they
   * carry no credentials. It serves only the hook host (`hookHost`, HOOK_BASE_URL's host name; unset: the base
   * host, any host that is not a system's): a hook's answer is never on a system's origin.
   */
  readonly hooks?: Router;
  readonly hookHost?: string;
  /** Mounted at the root, for pages such as `/docs`. */
  readonly pages?: Router;
  /** Mounted at the root, for the `/.well-known/…` documents (its routes carry the full path). */
  readonly wellKnown?: Router;
  /** Routers mounted under `/api`. GET and HEAD go to `query`, everything else to `command`. */
  readonly command?: Router;
  readonly query?: Router;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Where the receiver's routes are: the first segment of `/hook/{hookKey}`. */
const HOOK_PATH = `/${receiveWebhook.path.split('/')[1]!}`;

const CREDENTIAL_LABELS: Readonly<Record<CredentialSource, string>> = {
  authorization: 'Authorization',
  'x-authorization': 'X-Authorization',
  cookie: 'the session cookie',
};

function bearerIn(req: Request, header: 'authorization' | 'x-authorization'): string | undefined {
  const raw = req.headers[header];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined) return undefined;
  const match = BEARER_CREDENTIAL.exec(value);
  if (!match)
    throw new PlatformError(
      'unauthorized',
      `malformed ${CREDENTIAL_LABELS[header]} header: expected "Bearer <token>"`,
    );
  return match[1];
}

/**
 * Every credential the request carries. The session cookie counts on a write only with an `X-CSRF-Token`
 * (without one it is ignored), so another site cannot make a browser write with it.
 */
function presentedCredentials(
  req: Request,
  sessionForm: boolean,
): Array<{ source: CredentialSource; token: string; presentation?: CredentialPresentation }> {
  const presented: Array<{ source: CredentialSource; token: string; presentation?: CredentialPresentation }> =
    [];
  for (const header of ['authorization', 'x-authorization'] as const) {
    const token = bearerIn(req, header);
    if (token !== undefined) presented.push({ source: header, token });
  }
  const session = cookieValue(req, SESSION_COOKIE);
  if (session !== undefined) {
    const csrfHeader = req.headers['x-csrf-token'];
    const csrfToken = typeof csrfHeader === 'string' ? csrfHeader : null;
    if (SAFE_METHODS.has(req.method) || sessionForm) presented.push({ source: 'cookie', token: session });
    else if (csrfToken !== null)
      presented.push({ source: 'cookie', token: session, presentation: { csrfToken } });
  }
  return presented;
}

/**
 * A request's policy (`./operation-policy.ts`), kept on the request as its context is (`./context.ts`): looked
 * up once, when the request enters the API.
 */
const POLICY = Symbol('request policy');
type RequestWithPolicy = Request & { [POLICY]?: RequestPolicy };
const policyOf = (req: Request): RequestPolicy => (req as RequestWithPolicy)[POLICY] ?? ORDINARY_POLICY;

/**
 * `routes`, entered only by the requests of its side: GET and HEAD are reads (the query API) unless their
 * operation is served by the command API; everything else is a write (the command API). The handler keeps the
 * routes' `stack`, so both APIs' routes stay visible in the app's router tree.
 */
function sideOf(routes: Router, reads: boolean): RequestHandler & { readonly stack: Router['stack'] } {
  const indexed = indexedByFirstSegment(routes);
  const handler: RequestHandler = (req, res, next) => {
    const isRead = (req.method === 'GET' || req.method === 'HEAD') && !policyOf(req).commandSide;
    if (isRead === reads) indexed(req, res, next);
    else next();
  };
  return Object.assign(handler, { stack: indexed.stack });
}

/** The express 5 app every service shares: tenant, X-Version, logs, limits, auth, metering, errors, health. */
export function createHttpApp(options: HttpKitOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', options.trustProxyHops);
  app.set('etag', false);
  app.set('query parser', 'simple');

  const publicAddress = new PublicAddress(options.publicUrl, options.baseHost, options.defaultTenant);
  app.use((req, res, next) => {
    const requestId = randomUUID();
    if (options.version) res.setHeader('X-Version', options.version);
    res.setHeader('X-Request-Id', requestId);
    const tenant = tenantFromHost(req.headers.host, options.baseHost, options.defaultTenant);
    if (tenant === null)
      return next(
        new PlatformError('not_found', `unknown system in host ${JSON.stringify(req.headers.host)}`),
      );
    setContext(req, { requestId, tenant, publicAddress });
    next();
  });
  const log = requestLog(options.logger);
  if (log) app.use(log);
  // Mounted first: every API request would otherwise be matched against the health routes before its own.
  const api = express.Router();
  app.use(API_BASE, api);

  mount(app, getHealth, (_req, res) => {
    sendJson(res, 200, { status: 'ok' });
  });
  mount(app, getReadiness, async (_req, res) => {
    const report = await options.readiness();
    sendJson(res, report.ready ? 200 : 503, {
      status: report.ready ? 'ready' : 'not ready',
      checks: report.checks,
    });
  });
  mount(app, getMetrics, async (req, res) => {
    if (!mayReadMetrics(req, options.metricsToken))
      throw new PlatformError(
        'unauthorized',
        options.metricsToken === undefined
          ? '/metrics answers only this host (set METRICS_TOKEN to scrape it from elsewhere)'
          : '/metrics needs Authorization: Bearer with the METRICS_TOKEN',
      );
    const { contentType, body } = await options.metrics();
    res.type(contentType).send(body);
  });

  if (options.hooks) {
    const { hookHost, baseHost } = options;
    app.use(HOOK_PATH, (req, res, next) => {
      for (const header of HOOK_ANSWER_HEADERS) res.setHeader(header.name, header.value);
      if (!servesHooks(req.headers.host, hookHost, baseHost))
        throw new PlatformError(
          'not_found',
          `no hook is served on host ${JSON.stringify(req.headers.host ?? '')}: hooks are served at their address (HOOK_BASE_URL)`,
        );
      next();
    });
    app.use(options.hooks);
  }
  if (options.wellKnown) app.use(options.wellKnown);
  if (options.pages) app.use(options.pages);
  if (options.mcp) {
    app.use(
      mcpRouter({
        ...options.mcp,
        version: options.version,
        baseHost: options.baseHost,
        authenticate: (tenant, token) => options.authenticate(tenant, token),
      }),
    );
  }

  const policies = requestPolicies(options.operations);
  const parseJson = express.json({
    limit: options.bodyLimit,
    strict: false,
    type: ['application/json', 'application/*+json'],
  });
  const parseForm = express.urlencoded({ extended: false, limit: options.bodyLimit, parameterLimit: 50 });
  api.use((req, res, next) => {
    const policy = policies(req.method, req.path);
    (req as RequestWithPolicy)[POLICY] = policy;
    // Most reads carry no body: nothing to check or parse.
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined)
      return next();
    requireJsonBody(req, policy.bodyReadByRoute, policy.takesForms);
    // An upload's body is the file, even a JSON one: its route streams it.
    if (policy.bodyReadByRoute) return next();
    parseJson(req, res, (error?: unknown) =>
      error || !policy.takesForms ? next(error) : parseForm(req, res, next),
    );
  });
  api.use(async (req, res, next) => {
    await authenticateRequest(req);
    await meterRequest(req, res);
    next();
  });
  async function authenticateRequest(req: Request): Promise<void> {
    const context = contextOf(req);
    const policy = policyOf(req);
    if (policy.authenticatesItself) return;
    const presented = presentedCredentials(req, policy.sessionForm);
    if (presented.length === 0) return;
    const credentials = await Promise.all(
      presented.map(async ({ source, token, presentation }) => ({
        source,
        principal: await options.authenticate(context.tenant, token, presentation),
      })),
    );
    const choice = chooseCredential(credentials);
    if (choice.kind === 'ambiguous')
      throw new PlatformError(
        'bad_request',
        'the request carries credentials of different users: send one (see /auth/token-priority)',
      );
    if (choice.kind === 'invalid') {
      // A stale session cookie alone is ignored: the route then asks for credentials.
      if (choice.source === 'cookie' && presented.length === 1) return;
      throw new PlatformError(
        'unauthorized',
        `invalid, expired or revoked credential in ${CREDENTIAL_LABELS[choice.source]}`,
      );
    }
    if (choice.kind === 'chosen') {
      context.principal = choice.principal;
      context.credentialSource = choice.source;
    }
  }
  // Only authenticated calls count (and only they spend the quota: strangers must not exhaust a system's).
  async function meterRequest(req: Request, res: Response): Promise<void> {
    const context = contextOf(req);
    if (!context.principal) return;
    const decision = await options.meter.admit(context.tenant);
    if (decision) {
      res.setHeader('RateLimit-Policy', `${decision.limit};w=60`);
      res.setHeader('RateLimit-Limit', String(decision.limit));
      res.setHeader('RateLimit-Remaining', String(decision.remaining));
      res.setHeader('RateLimit-Reset', String(decision.resetSeconds));
      if (!decision.allowed) {
        res.setHeader('Retry-After', String(decision.resetSeconds));
        throw new PlatformError(
          'rate_limited',
          `API call quota of ${decision.limit} calls per minute exceeded for this system`,
        );
      }
    }
    options.meter.record(context.tenant, context.principal.credential.id);
  }
  mount(api, getApiUsage, async (req, res) => {
    const principal = principalOf(req);
    if (!isAdmin(principal))
      throw new PlatformError('forbidden', 'API usage is visible to administrators only');
    const query = validate(usageQuery, req.query, 'query parameters');
    const today = new Date().toISOString().slice(0, 10);
    const from = query.from ?? today.slice(0, 8) + '01';
    const to = query.to ?? today;
    const usage = await options.meter.usage(principal.tenant, from, to);
    sendJson(res, 200, { from, to, total: usage.reduce((sum, row) => sum + row.calls, 0), items: usage });
  });
  if (options.query) api.use(sideOf(options.query, true));
  if (options.command) api.use(sideOf(options.command, false));
  api.use((req) => {
    throw new PlatformError('not_found', `no route for ${req.method} ${req.baseUrl}${req.path}`);
  });

  app.use((req, _res, next) =>
    next(new PlatformError('not_found', `no route for ${req.method} ${req.path}; the API is under /api`)),
  );
  app.use(errorHandler(options.logger));
  return app;
}

const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * One `info` line per finished request (a 500's cause is logged by the error handler). None when `info` is
 * off, so the hot path creates no per-request logger objects and passes no extra layer.
 */
function requestLog(logger: Logger): RequestHandler | undefined {
  if (!logger.isLevelEnabled('info')) return undefined;
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      if (QUIET_PATHS.has(req.path)) return;
      const context = contextOf(req);
      logger.info(
        {
          requestId: context.requestId,
          tenant: context.tenant,
          method: req.method,
          url: req.originalUrl,
          status: res.statusCode,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
          credential: context.principal?.credential.id,
        },
        'request',
      );
    });
    next();
  };
}

/** A body that is not JSON is refused up front instead of being silently ignored (uploads excepted). */
function requireJsonBody(req: Request, bodyReadByRoute: boolean, takesForms: boolean): void {
  const hasContent = req.headers['content-length'] !== '0' || req.headers['transfer-encoding'] !== undefined;
  if (!hasContent || bodyReadByRoute) return;
  const accepted = takesForms
    ? ['application/json', 'application/*+json', 'application/x-www-form-urlencoded']
    : ['application/json', 'application/*+json'];
  if (!req.is(accepted)) {
    throw new PlatformError(
      'unsupported_media_type',
      `request bodies must be ${accepted.join(' or ')}, got ${JSON.stringify(req.headers['content-type'] ?? 'none')}`,
    );
  }
}

interface HttpParserError {
  type?: unknown;
  status?: unknown;
  limit?: unknown;
  message?: unknown;
}

/** Maps body-parser failures and everything else to the one error body; unknown errors are logged 500s. */
function toPlatformError(error: unknown): PlatformError | null {
  if (error instanceof PlatformError) return error;
  const parserError = error as HttpParserError;
  if (typeof parserError === 'object' && parserError !== null) {
    if (parserError.type === 'entity.too.large')
      return new PlatformError(
        'payload_too_large',
        `request body exceeds the limit of ${String(parserError.limit)} bytes`,
      );
    if (parserError.type === 'entity.parse.failed')
      return new PlatformError('malformed_json', `malformed JSON body: ${String(parserError.message)}`);
    if (parserError.type === 'encoding.unsupported' || parserError.type === 'charset.unsupported')
      return new PlatformError('unsupported_media_type', String(parserError.message));
    if (parserError.type === 'request.aborted')
      return new PlatformError('bad_request', 'request aborted by the client');
    if (typeof parserError.status === 'number' && parserError.status >= 400 && parserError.status < 500)
      return new PlatformError('bad_request', String(parserError.message));
  }
  return null;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Whether this request may read the metrics (see `metricsToken`); the token is compared in constant time. */
export function mayReadMetrics(req: Pick<Request, 'socket' | 'headers'>, token: string | undefined): boolean {
  if (token === undefined)
    return (
      LOOPBACK.has(req.socket.remoteAddress ?? '') &&
      req.headers['x-forwarded-for'] === undefined &&
      req.headers.forwarded === undefined
    );
  const header = req.headers.authorization ?? '';
  const presented = /^Bearer /i.test(header) ? header.slice(7).trim() : '';
  return timingSafeEqual(sha256(presented), sha256(token));
}

function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const requestId = String(res.getHeader('X-Request-Id') ?? '');
    let platformError = toPlatformError(error);
    if (!platformError) {
      logger.error({ err: error, requestId, method: req.method, url: req.originalUrl }, 'unhandled error');
      platformError = new PlatformError('internal', 'internal error; quote the requestId when reporting it');
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    if (platformError.status === 401 && !res.hasHeader('WWW-Authenticate'))
      res.setHeader('WWW-Authenticate', 'Bearer realm="records-platform"');
    // A refusal for load says when to come back, unless its source already did (the quota's reset).
    if ((platformError.status === 429 || platformError.status === 503) && !res.hasHeader('Retry-After'))
      res.setHeader('Retry-After', '1');
    sendJson(res, platformError.status, errorBody(platformError, requestId));
  };
}
