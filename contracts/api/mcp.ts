/**
 * The MCP tool server (Model Context Protocol): the operations marked `tool: true` offered to AI agents, over
 * the HTTP+SSE transport the spec names (`/v2/{system}/sse` with its message endpoint) and Streamable HTTP
 * beside it, with the platform's own API and OAuth tokens. Served at the host's root.
 */
import { z } from 'zod';
import { isValidTenant } from '../streams';
import { operation } from './operation';

export const systemParam = z
  .string()
  .refine(isValidTenant, 'must be a system name')
  .meta({ description: 'The system (tenant) whose tools are served.', example: 'acme' });
export const mcpParams = z.object({ system: systemParam });
export const sseMessageQuery = z.object({
  sessionId: z
    .string()
    .max(200)
    .meta({ description: 'The session the SSE stream announced in its `endpoint` event.' }),
});

const jsonRpc = z
  .object({ jsonrpc: z.literal('2.0') })
  .loose()
  .meta({ id: 'JsonRpcMessage', description: 'A JSON-RPC 2.0 message of the MCP protocol.' });
const unauthorized = {
  description: 'No valid credential of the system: `WWW-Authenticate` names the protected resource metadata.',
};
const MCP_ERRORS = {
  401: unauthorized,
  429: {
    description:
      "Too many open sessions: the credential's, the user's or the system's share, or the server's total, is " +
      'full (the message says which); `Retry-After` says when one ends by itself at the latest.',
  },
};

export const openMcpSseStream = operation({
  operationId: 'openMcpSseStream',
  method: 'get',
  path: '/v2/{system}/sse',
  tag: 'mcp',
  summary: 'MCP over HTTP+SSE: the server-to-client event stream',
  description:
    'The first event (`endpoint`) names the message endpoint with the session id; the credential that opened ' +
    'the stream is the only one that may post to it.',
  params: mcpParams,
  responses: {
    200: { description: 'The event stream.', schema: z.string(), contentType: 'text/event-stream' },
    ...MCP_ERRORS,
  },
  security: 'token',
  root: true,
});
export const postMcpSseMessage = operation({
  operationId: 'postMcpSseMessage',
  method: 'post',
  path: '/v2/{system}/message',
  tag: 'mcp',
  summary: 'MCP over HTTP+SSE: a client message (its answer comes on the stream)',
  params: mcpParams,
  query: sseMessageQuery,
  body: { schema: jsonRpc },
  responses: {
    202: {
      description: 'Accepted: the answer goes to the event stream.',
      schema: z.string(),
      contentType: 'text/plain',
    },
    ...MCP_ERRORS,
  },
  security: 'token',
  root: true,
});
export const postMcpMessage = operation({
  operationId: 'postMcpMessage',
  method: 'post',
  path: '/v2/{system}/mcp',
  tag: 'mcp',
  summary: 'MCP over Streamable HTTP: a client message',
  description:
    'An `initialize` request opens a session (`Mcp-Session-Id`); later messages carry that header.',
  params: mcpParams,
  body: { schema: jsonRpc },
  responses: {
    200: { description: 'The answer (JSON or an event stream).', schema: jsonRpc },
    202: { description: 'A notification or response was accepted.' },
    ...MCP_ERRORS,
  },
  security: 'token',
  root: true,
});
export const openMcpStream = operation({
  operationId: 'openMcpStream',
  method: 'get',
  path: '/v2/{system}/mcp',
  tag: 'mcp',
  summary: "MCP over Streamable HTTP: the session's server-to-client event stream",
  params: mcpParams,
  responses: {
    200: { description: 'The event stream.', schema: z.string(), contentType: 'text/event-stream' },
    ...MCP_ERRORS,
  },
  security: 'token',
  root: true,
});
export const closeMcpSession = operation({
  operationId: 'closeMcpSession',
  method: 'delete',
  path: '/v2/{system}/mcp',
  tag: 'mcp',
  summary: 'MCP over Streamable HTTP: end the session',
  params: mcpParams,
  responses: { 200: { description: 'The session ended.' }, ...MCP_ERRORS },
  security: 'token',
  root: true,
});

const protectedResource = z
  .object({
    resource: z.string(),
    authorization_servers: z.array(z.string()),
    bearer_methods_supported: z.array(z.string()),
    scopes_supported: z.array(z.string()),
    resource_name: z.string(),
  })
  .meta({ id: 'ProtectedResourceMetadata', description: 'RFC 9728 protected resource metadata.' });
export const getMcpResourceMetadata = operation({
  operationId: 'getMcpResourceMetadata',
  method: 'get',
  path: '/.well-known/oauth-protected-resource/v2/{system}/{transport}',
  tag: 'mcp',
  summary: "An MCP endpoint's protected resource metadata (RFC 9728)",
  params: mcpParams.extend({ transport: z.enum(['sse', 'mcp']).meta({ description: 'The endpoint.' }) }),
  responses: { 200: { description: 'Where to get tokens for it.', schema: protectedResource } },
  security: 'none',
  root: true,
});

export const MCP_OPERATIONS = [
  openMcpSseStream,
  postMcpSseMessage,
  postMcpMessage,
  openMcpStream,
  closeMcpSession,
  getMcpResourceMetadata,
];
