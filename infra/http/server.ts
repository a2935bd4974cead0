import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

/** How long a client may take over its request, and how long a connection may stay silent. */
export interface HttpServerLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly idleTimeoutMs: number;
}

/** Idle keep-alive connections stay open a little longer than a load balancer's usual 60 s. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * An HTTP server whose request and response objects are born with the express app's prototypes.
 * Express otherwise swaps their prototypes on every request (`Object.setPrototypeOf`), which deoptimises
 * Node's own HTTP code for every response: measured here, 3.5k → 10k requests/s for a trivial route.
 */
export function createHttpServer(app: Express, limits: HttpServerLimits): Server {
  function AppRequest(this: IncomingMessage, socket: Socket): void {
    IncomingMessage.call(this, socket);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: ServerResponse, req: IncomingMessage, options: unknown): void {
    (
      ServerResponse as unknown as (this: ServerResponse, req: IncomingMessage, options: unknown) => void
    ).call(this, req, options);
  }
  AppResponse.prototype = app.response;
  // A slow or silent client must not hold a connection (and an upload's half-written blob) for ever: past
  // the headers or request timeout Node answers 408 and closes; a connection silent both ways is closed.
  const server: Server = createServer(
    {
      IncomingMessage: AppRequest as unknown as typeof IncomingMessage,
      ServerResponse: AppResponse as unknown as typeof ServerResponse,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Node checks those two timeouts on this period (30 s by default, which would stretch a 20 s limit).
      connectionsCheckingInterval: Math.min(1000, Math.ceil(limits.headersTimeoutMs / 4)),
    },
    (request, response) => {
      // A closing server answers what it has, then closes the connection: keep-alive clients would else hold
      // it open (and the process up) for as long as they keep sending.
      if (draining.has(server)) response.setHeader('Connection', 'close');
      app(request, response);
    },
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.setTimeout(limits.idleTimeoutMs);
  return server;
}

const draining = new WeakSet<Server>();
const IDLE_CHECK_MS = 50;

/**
 * Stops taking connections and lets the requests in progress finish: each connection closes after its answer,
 * an idle one at once. Whatever still runs after `graceMs` (a slow upload, a webhook waiting for its run) is
 * cut off, so a stop never waits on a client.
 */
export function closeGracefully(server: Server, graceMs: number): Promise<void> {
  draining.add(server);
  return new Promise<void>((resolve) => {
    const cutOff = setTimeout(() => server.closeAllConnections(), graceMs);
    // A request that began before the stop keeps its connection alive after its answer: close it once idle.
    const closeIdle = setInterval(() => server.closeIdleConnections(), IDLE_CHECK_MS);
    server.close(() => {
      clearTimeout(cutOff);
      clearInterval(closeIdle);
      resolve();
    });
    server.closeIdleConnections();
  });
}
