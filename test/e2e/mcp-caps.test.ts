/**
 * The MCP server's session caps over real HTTP: a `record:read` member flooding `/mcp` and `/sse` (the issue
 * opened 1,998 sessions in 8.5 s and every other system got 429) holds at most its credential's, its user's and
 * its system's share; another system still opens sessions; a refusal says which cap and when to retry; an
 * idle session ends and gives its place back.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ADMIN_TOKEN, json, startPlatform, type Entity, type TestPlatform } from '../support/platform';

jest.setTimeout(60_000);

const IDLE_SECONDS = 3;
let platform: TestPlatform;
let acmeToken: string;
/** Where the tool calls go (MCP_API_URL): an API that holds every request until the test lets them go. */
let api: Server;
const held: ServerResponse[] = [];
const answerHeld = () => {
  for (const response of held.splice(0))
    response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
};

beforeAll(async () => {
  api = createServer((_req: IncomingMessage, res: ServerResponse) => {
    held.push(res);
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  platform = await startPlatform({
    MCP_API_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}`,
    MCP_SESSIONS_PER_CREDENTIAL: '2',
    MCP_SESSIONS_PER_USER: '3',
    MCP_SESSIONS_PER_SYSTEM: '5',
    MCP_MAX_SESSIONS: '8',
    MCP_SESSION_IDLE_SECONDS: String(IDLE_SECONDS),
  });
  const provisioned = await platform.call('POST', '/system', {
    body: { system: 'acme', adminEmail: 'owner@acme.example' },
  });
  expect(provisioned.status).toBe(201);
  acmeToken = String((await json(provisioned)).token);
});
afterAll(async () => {
  answerHeld();
  await platform.stop();
  await new Promise((resolve) => api.close(resolve));
});

/** A new member of `test` who may only read records, and a token of theirs. */
async function readerToken(email: string): Promise<{ userId: number; token: string }> {
  const member = await json<Entity>(
    await platform.call('POST', '/user', { body: { email, name: email, permissions: { record: ['read'] } } }),
  );
  return { userId: member.id, token: await tokenOf(member.id) };
}

async function tokenOf(userId: number): Promise<string> {
  const created = await platform.call('POST', `/auth/${userId}/token`, { body: { name: 'mcp' } });
  expect(created.status).toBe(201);
  return String((await json(created)).token);
}

interface Opened {
  readonly status: number;
  readonly sessionId: string | null;
  readonly retryAfter: string | null;
  readonly message: string;
}

const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

/** One Streamable HTTP `initialize`: a new session, or a refusal. */
async function open(token: string, system = 'test'): Promise<Opened> {
  const answer = await fetch(`${platform.url}/v2/${system}/mcp`, {
    method: 'POST',
    headers: { ...HEADERS, Authorization: `Bearer ${token}` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'flood', version: '1' },
      },
    }),
  });
  const text = await answer.text();
  let message = '';
  if (answer.status >= 400) message = String((JSON.parse(text) as { message?: string }).message);
  return {
    status: answer.status,
    sessionId: answer.headers.get('mcp-session-id'),
    retryAfter: answer.headers.get('retry-after'),
    message,
  };
}

/** Opens `count` sessions at once (as a flood does): every answer. */
function flood(token: string, count: number, system = 'test'): Promise<Opened[]> {
  return Promise.all(Array.from({ length: count }, () => open(token, system)));
}

function listTools(token: string, sessionId: string, system = 'test'): Promise<Response> {
  return fetch(`${platform.url}/v2/${system}/mcp`, {
    method: 'POST',
    headers: {
      ...HEADERS,
      Authorization: `Bearer ${token}`,
      'Mcp-Session-Id': sessionId,
      'Mcp-Protocol-Version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  });
}

function expectRefused(opened: Opened, reason: RegExp): void {
  expect(opened.status).toBe(429);
  expect(opened.message).toMatch(reason);
  const seconds = Number(opened.retryAfter);
  expect(Number.isInteger(seconds)).toBe(true);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(IDLE_SECONDS + 1);
}

test('one system flooding holds its shares only; another system still opens sessions; idle ones end', async () => {
  const first = await readerToken('reader-one@example.com');
  // One credential, 20 sessions at once: exactly its share opens, however concurrent the asking.
  const byOneToken = await flood(first.token, 20);
  const opened = byOneToken.filter((answer) => answer.status === 200);
  expect(opened).toHaveLength(2);
  for (const refused of byOneToken.filter((answer) => answer.status !== 200))
    expectRefused(refused, /this credential holds its 2/);
  // The SSE transport counts in the same shares.
  const sse = await fetch(`${platform.url}/v2/test/sse`, {
    headers: { Authorization: `Bearer ${first.token}` },
  });
  expect(sse.status).toBe(429);
  expect(sse.headers.get('retry-after')).not.toBeNull();
  expect((await json<{ message: string }>(sse)).message).toMatch(/this credential/);

  // More tokens of the same member: their user's share.
  const second = await tokenOf(first.userId);
  const byUser = await flood(second, 5);
  expect(byUser.filter((answer) => answer.status === 200)).toHaveLength(1);
  expectRefused(
    byUser.find((answer) => answer.status === 429)!,
    /this user holds their 3/,
  );

  // More members of the same system: the system's share.
  const others = await Promise.all(
    ['reader-two', 'reader-three', 'reader-four'].map((name) => readerToken(`${name}@example.com`)),
  );
  const bySystem = await Promise.all(others.map((other) => open(other.token)));
  expect(bySystem.filter((answer) => answer.status === 200)).toHaveLength(2);
  expectRefused(
    bySystem.find((answer) => answer.status === 429)!,
    /this system holds its share of 5/,
  );

  // Another system is not touched by any of it.
  const acme = await flood(acmeToken, 2, 'acme');
  expect(acme.map((answer) => answer.status)).toEqual([200, 200]);
  const acmeSession = acme[0]!.sessionId!;
  expect((await listTools(acmeToken, acmeSession, 'acme')).status).toBe(200);
  // The admin of `test` is refused by the system share too, not by anyone else's.
  expectRefused(await open(ADMIN_TOKEN), /this system holds its share/);

  // Ending a session gives its place back at once.
  const closed = await fetch(`${platform.url}/v2/test/mcp`, {
    method: 'DELETE',
    headers: { Authorization: `Bearer ${first.token}`, 'Mcp-Session-Id': opened[0]!.sessionId! },
  });
  expect(closed.status).toBe(200);
  expect((await open(first.token)).status).toBe(200);

  // Unused sessions end after the idle time, and their places come back.
  await new Promise((resolve) => setTimeout(resolve, (IDLE_SECONDS + 1.5) * 1000));
  expect((await listTools(first.token, opened[1]!.sessionId!)).status).toBe(404);
  expect((await listTools(acmeToken, acmeSession, 'acme')).status).toBe(404);
  expect((await flood(first.token, 2)).map((answer) => answer.status)).toEqual([200, 200]);
  expect((await open(ADMIN_TOKEN)).status).toBe(200);
});

test('tool calls in progress are shared out too: past its share a credential is refused at once, others go on', async () => {
  const connect = async (token: string, system = 'test') => {
    const client = new Client({ name: 'caps', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${platform.url}/v2/${system}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    return client;
  };
  const reader = await readerToken('tool-caller@example.com');
  const flooding = await connect(reader.token);
  const other = await connect(acmeToken, 'acme');
  try {
    const calls = Array.from({ length: 20 }, () => flooding.callTool({ name: 'listSpaces', arguments: {} }));
    // 16 are held by the API; the other 4 are refused without being sent.
    for (let attempt = 0; attempt < 100 && held.length < 16; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(held).toHaveLength(16);
    const elsewhere = other.callTool({ name: 'listSpaces', arguments: {} });
    for (let attempt = 0; attempt < 100 && held.length < 17; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(held).toHaveLength(17);
    answerHeld();
    const results = await Promise.all(calls);
    const refused = results.filter((result) => result.isError);
    expect(results.length - refused.length).toBe(16);
    expect(refused).toHaveLength(4);
    for (const result of refused)
      expect((result.content as Array<{ text: string }>)[0]!.text).toMatch(
        /^429 E4290: too many MCP tool calls in progress: this credential holds its 16; wait for/,
      );
    expect((await elsewhere).isError).toBeFalsy();
    // Their places came back.
    const again = flooding.callTool({ name: 'listSpaces', arguments: {} });
    for (let attempt = 0; attempt < 100 && held.length < 1; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    answerHeld();
    expect((await again).isError).toBeFalsy();
  } finally {
    answerHeld();
    await flooding.close();
    await other.close();
  }
});
