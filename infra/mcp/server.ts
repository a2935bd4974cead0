/**
 * The MCP tool server: `/v2/{system}/sse` with its message endpoint (HTTP+SSE, the spec's transport) and
 * `/v2/{system}/mcp` (Streamable HTTP), on the official SDK. Every request carries a bearer credential of
 * `{system}` (an API token, an OAuth access token or a session); a session belongs to the credential that
 * opened it. A tool call is the REST request of its operation, dispatched into the platform's own HTTP app
 * in-process with the caller's credential: rights, limits, validation and answers are exactly REST's.
 */
import { randomUUID } from 'node:crypto';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { callApi } from './dispatch';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../../contracts/auth';
import {
  closeMcpSession,
  getMcpResourceMetadata,
  mcpParams,
  openMcpSseStream,
  openMcpStream,
  postMcpMessage,
  postMcpSseMessage,
  sseMessageQuery,
} from '../../contracts/api/mcp';
import type { Operation } from '../../contracts/api/operation';
import { errorBody, PlatformError } from '../../contracts/errors';
import { validate } from '../../contracts/validation';
import { BEARER_CREDENTIAL } from '../http/authenticate';
import { API_BASE, mount } from '../http/operations';
import { contextOf } from '../http/context';
import { sendJson } from '../http/respond';
import {
  DEFAULT_SESSION_LIMITS,
  SessionCapReached,
  TOOL_CALL_LIMITS,
  SessionSlots,
  type SessionHolder,
  type SessionLimits,
  type SessionSlot,
} from './session-slots';
import { toolsOf, type ToolDefinition, type ToolRequest } from './tools';

export interface McpOptions {
  readonly version: string;
  readonly baseHost: string;
  readonly operations: readonly Operation[];
  /** The principal of a bearer credential of `tenant`, or null. */
  readonly authenticate: (tenant: string, token: string) => Promise<Principal | null>;
  /**
   * Where tool calls go when this process does not serve both APIs (`MCP_API_URL`); by default the platform
   * itself, at the address the MCP request came in on.
   */
  readonly apiUrl?: string;
  readonly timeoutMs: number;
  /** The shares of open sessions (per credential, user, system, and in all). */
  readonly sessionLimits?: SessionLimits;
  /** A session unused this long is ended. */
  readonly idleSessionMs?: number;
}

/**
 * An open MCP session: its transport, and its slot, which names the credential that opened it (the only one
 * that may use it).
 */
interface Session {
  readonly slot: SessionSlot;
  readonly transport: SSEServerTransport | StreamableHTTPServerTransport;
  readonly close: () => Promise<void>;
}

interface Caller {
  readonly system: string;
  readonly token: string;
  readonly principal: Principal;
}

const callers = new WeakMap<Request, Caller>();

function bearerOf(req: Request): string | undefined {
  for (const header of ['authorization', 'x-authorization'] as const) {
    const match = BEARER_CREDENTIAL.exec(String(req.headers[header] ?? ''));
    if (match) return match[1];
  }
  return undefined;
}

function holderOf(caller: Caller): SessionHolder {
  return {
    system: caller.system,
    userId: caller.principal.userId,
    credentialId: caller.principal.credential.id,
  };
}

function sameHolder(a: SessionHolder, b: SessionHolder): boolean {
  return a.system === b.system && a.userId === b.userId && a.credentialId === b.credentialId;
}

/** What the REST API answered, as a tool result: the JSON body, and `isError` for a refusal. */
function toolResult(status: number, text: string): CallToolResult {
  let json: unknown;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (status >= 400) {
    const error = json as { code?: string; message?: string } | undefined;
    const summary =
      error?.message === undefined ? `HTTP ${status}` : `${status} ${error.code ?? ''}: ${error.message}`;
    return { isError: true, content: [{ type: 'text', text: `${summary}\n${text}` }] };
  }
  const structured = json !== null && typeof json === 'object' && !Array.isArray(json);
  return {
    content: [{ type: 'text', text }],
    ...(structured && { structuredContent: json as Record<string, unknown> }),
  };
}

export function mcpRouter(options: McpOptions): Router {
  const tools = toolsOf(options.operations);
  const idleMs = options.idleSessionMs ?? 30 * 60_000;
  const slots = new SessionSlots(options.sessionLimits ?? DEFAULT_SESSION_LIMITS, idleMs);
  const sessions = new Map<string, Session>();
  // Each tool call is a REST request this server makes: a session's batches (100 calls a message) cannot
  // pile up thousands of them for one tenant.
  const toolCalls = new SessionSlots(TOOL_CALL_LIMITS, options.timeoutMs, Date.now, {
    what: 'MCP tool calls in progress',
    advice: 'wait for the ones in progress to answer',
  });

  // Idle sessions end, and so give their slots back (a session still opening gives its own back if it fails).
  const sweep = setInterval(
    () => {
      const idle = new Set(slots.idle());
      for (const [id, session] of sessions)
        if (idle.has(session.slot)) {
          sessions.delete(id);
          session.slot.release();
          void session.close();
        }
    },
    Math.max(250, Math.min(idleMs / 2, 60_000)),
  );
  sweep.unref();

  const call = async (tool: ToolDefinition, args: Record<string, unknown>, auth: AuthInfo | undefined) => {
    const system = auth?.extra?.system;
    const origin = auth?.extra?.origin;
    if (auth === undefined || typeof system !== 'string' || !(origin instanceof URL))
      throw new PlatformError('unauthorized', 'a tool call needs the credential of its session');
    let request: ToolRequest;
    let slot: SessionSlot;
    try {
      request = tool.request(args);
      slot = toolCalls.take({
        system,
        userId: String(auth.extra?.userId),
        credentialId: auth.clientId,
      });
    } catch (error) {
      if (!(error instanceof PlatformError) || error.status >= 500) throw error;
      // An argument that is no value of its path parameter, or a call past its share: refused as REST would
      // refuse it, never dispatched.
      return toolResult(error.status, JSON.stringify(errorBody(error)));
    }
    const answer = await callApi(
      origin,
      {
        method: request.method,
        url: `${API_BASE}${request.url}`,
        headers: {
          authorization: `Bearer ${auth.token}`,
          host: `${system}.${options.baseHost}`,
          ...(request.body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(request.body !== undefined && { body: JSON.stringify(request.body) }),
      },
      options.timeoutMs,
    ).finally(() => slot.release());
    return toolResult(answer.status, answer.body);
  };

  const newServer = (): McpServer => {
    const server = new McpServer(
      { name: 'records-platform', version: options.version },
      {
        instructions:
          'Tools of the Records Platform API: records, their fields, labels, spaces, modules and history.',
      },
    );
    for (const tool of tools)
      server.registerTool(
        tool.name,
        {
          title: tool.title,
          description: tool.description,
          inputSchema: tool.inputSchema,
          annotations: {
            readOnlyHint: tool.readOnly,
            destructiveHint: tool.destructive,
            openWorldHint: false,
          },
        },
        (args: Record<string, unknown>, extra: { authInfo?: AuthInfo }) => call(tool, args, extra.authInfo),
      );
    return server;
  };

  const configuredOrigin = options.apiUrl === undefined ? undefined : new URL(options.apiUrl);
  /** The platform itself: the local address and port this request came in on (IPv6 in brackets). */
  const apiOrigin = (req: Request): URL => {
    if (configuredOrigin !== undefined) return configuredOrigin;
    const address = req.socket.localAddress ?? '127.0.0.1';
    const unmapped = address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
    const host = unmapped.includes(':') ? `[${unmapped}]` : unmapped;
    return new URL(`http://${host}:${req.socket.localPort}`);
  };

  // The platform's own names only (PublicAddress), never a Host header as sent.
  const resourceMetadataUrl = (req: Request, system: string, transport: 'sse' | 'mcp') =>
    `${contextOf(req).publicAddress.origin(req)}/.well-known/oauth-protected-resource/v2/${system}/${transport}`;

  /** Authenticates the bearer credential against `{system}`; a 401 points at the resource metadata. */
  const authenticated =
    (transport: 'sse' | 'mcp'): RequestHandler =>
    async (req, res, next) => {
      const { system } = validate(mcpParams, req.params, 'path');
      const token = bearerOf(req);
      const principal = token === undefined ? null : await options.authenticate(system, token);
      if (token === undefined || principal === null) {
        const error = token === undefined ? '' : ', error="invalid_token"';
        res.setHeader(
          'WWW-Authenticate',
          `Bearer resource_metadata="${resourceMetadataUrl(req, system, transport)}"${error}`,
        );
        throw new PlatformError(
          'unauthorized',
          token === undefined
            ? `the MCP server of ${system} needs a bearer token of that system`
            : `invalid, expired or revoked credential for the system ${system}`,
        );
      }
      const caller = { system, token, principal };
      callers.set(req, caller);
      // The SDK hands this to tool handlers as `extra.authInfo`.
      (req as Request & { auth?: AuthInfo }).auth = {
        token,
        clientId: principal.credential.id,
        scopes: [],
        extra: { system, userId: principal.userId, origin: apiOrigin(req) },
      };
      next();
    };

  const callerOf = (req: Request): Caller => callers.get(req)!;

  /**
   * The transport of this caller's session `id` over `kind`: a 404 when there is none, a 403 when another
   * credential opened it.
   */
  const ownSession = <Kind extends Session['transport']>(
    req: Request,
    id: string | undefined,
    kind: abstract new (...args: never[]) => Kind,
  ): Kind => {
    const session = id === undefined ? undefined : sessions.get(id);
    if (session === undefined || !(session.transport instanceof kind))
      throw new PlatformError('not_found', 'no such MCP session (it may have ended)');
    if (!sameHolder(session.slot.holder, holderOf(callerOf(req))))
      throw new PlatformError('forbidden', 'this MCP session belongs to another credential');
    session.slot.touch();
    return session.transport;
  };

  /**
   * A slot for one more session of this caller, or a 429 naming the share that is full with `Retry-After`
   * (the oldest session of theirs is not closed: they asked for too many).
   */
  const admitSession = (req: Request, res: Response): SessionSlot => {
    try {
      return slots.take(holderOf(callerOf(req)));
    } catch (error) {
      if (error instanceof SessionCapReached) res.setHeader('Retry-After', String(error.retryAfterSeconds));
      throw error;
    }
  };

  const router = Router();

  mount(router, openMcpSseStream, authenticated('sse'), async (req: Request, res: Response) => {
    const slot = admitSession(req, res);
    const transport = new SSEServerTransport(`/v2/${callerOf(req).system}/message`, res);
    const server = newServer();
    sessions.set(transport.sessionId, { slot, transport, close: () => server.close() });
    const forget = () => {
      sessions.delete(transport.sessionId);
      slot.release();
    };
    transport.onclose = forget;
    res.on('close', () => {
      forget();
      void server.close();
    });
    await server.connect(transport);
  });

  mount(router, postMcpSseMessage, authenticated('sse'), async (req: Request, res: Response) => {
    const { sessionId } = validate(sseMessageQuery, req.query, 'query');
    await ownSession(req, sessionId, SSEServerTransport).handlePostMessage(req, res);
  });

  const sessionHeader = (req: Request): string | undefined => {
    const value = req.headers['mcp-session-id'];
    return typeof value === 'string' ? value : undefined;
  };
  const existing = (req: Request) => ownSession(req, sessionHeader(req), StreamableHTTPServerTransport);

  mount(router, postMcpMessage, authenticated('mcp'), async (req: Request, res: Response) => {
    if (sessionHeader(req) !== undefined) return existing(req).handleRequest(req, res);
    const slot = admitSession(req, res);
    const server = newServer();
    const forget = (id: string | undefined) => {
      if (id !== undefined) sessions.delete(id);
      slot.release();
    };
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        sessions.set(id, { slot, transport, close: () => transport.close() });
      },
      onsessionclosed: forget,
    });
    transport.onclose = () => forget(transport.sessionId);
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res);
    } finally {
      // A first message that was no `initialize` opened no session: nothing stays behind, its slot neither.
      if (transport.sessionId === undefined) {
        slot.release();
        await server.close();
      }
    }
  });
  mount(router, openMcpStream, authenticated('mcp'), async (req: Request, res: Response) => {
    await existing(req).handleRequest(req, res);
  });
  mount(router, closeMcpSession, authenticated('mcp'), async (req: Request, res: Response) => {
    await existing(req).handleRequest(req, res);
  });

  mount(router, getMcpResourceMetadata, (req, res) => {
    const { system, transport } = validate(getMcpResourceMetadata.params, req.params, 'path');
    const { publicAddress } = contextOf(req);
    sendJson(res, 200, {
      resource: `${publicAddress.origin(req)}/v2/${system}/${transport}`,
      // The system's own authorization server: its tokens are the ones this resource takes.
      authorization_servers: [`${publicAddress.originOf(req, system)}${API_BASE}`],
      bearer_methods_supported: ['header'],
      scopes_supported: ['record:read', 'record:create', 'record:update', 'record:delete'],
      resource_name: `Records Platform MCP tools of ${system}`,
    });
  });

  return router;
}
