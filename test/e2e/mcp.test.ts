/**
 * The MCP tool server, driven by the SDK's own client over both transports (HTTP+SSE at /v2/{system}/sse and
 * Streamable HTTP at /v2/{system}/mcp): tools come from the operation table, a call runs with the caller's
 * credential exactly as REST would, and bad input of every kind is a clear error, never a crash.
 */
import { randomBytes, createHash } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import fc from 'fast-check';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { OPERATIONS } from '../../contracts/api/index';
import { tenantFromHost } from '../../infra/http/tenant';
import { ADMIN_TOKEN, json, startPlatform, type Entity, type TestPlatform } from '../support/platform';
import { registerClient, tokenRequest } from '../support/oauth';

let platform: TestPlatform;
let moduleId: number;
const SYSTEM = 'test';

beforeAll(async () => {
  platform = await startPlatform();
  const space = await json<Entity>(await platform.call('POST', '/space', { body: { name: 'Support' } }));
  const module = await json<Entity>(
    await platform.call('POST', '/module', { body: { spaceId: space.id, name: 'Tickets' } }),
  );
  moduleId = module.id;
  for (const name of ['Printer jam', 'Router down', 'Coffee machine'])
    expect((await platform.call('POST', '/record', { body: { moduleId, name } })).status).toBe(201);
});
afterAll(() => platform.stop());

type Kind = 'sse' | 'streamable';
const KINDS: Kind[] = ['sse', 'streamable'];

function transportFor(kind: Kind, token: string | undefined, system = SYSTEM): Transport {
  const headers: Record<string, string> = token === undefined ? {} : { Authorization: `Bearer ${token}` };
  return kind === 'sse'
    ? new SSEClientTransport(new URL(`${platform.url}/v2/${system}/sse`), {
        requestInit: { headers },
        eventSourceInit: {
          fetch: (url, init) => fetch(url, { ...init, headers: { ...init?.headers, ...headers } }),
        },
      })
    : new StreamableHTTPClientTransport(new URL(`${platform.url}/v2/${system}/mcp`), {
        requestInit: { headers },
      });
}

async function connected(kind: Kind, token: string = ADMIN_TOKEN): Promise<Client> {
  const client = new Client({ name: 'records-test', version: '1.0.0' });
  await client.connect(transportFor(kind, token));
  return client;
}

/** The platform's public address when PUBLIC_URL is unset: `http://<BASE_HOST>:<port>`, or another system's. */
function publicOrigin(system?: string): string {
  const host = system === undefined ? 'localhost' : `${system}.localhost`;
  return `http://${host}:${new URL(platform.url).port}`;
}

/** A request with a Host header of the caller's choosing (fetch will not send one). */
function withHost(
  method: string,
  path: string,
  host: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const call = request(
      {
        host: '127.0.0.1',
        port: new URL(platform.url).port,
        method,
        path,
        headers: {
          Host: host,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    call.on('error', reject);
    call.end(method === 'POST' ? '{}' : undefined);
  });
}

function textOf(result: Awaited<ReturnType<Client['callTool']>>): string {
  const [first] = result.content as Array<{ type: string; text: string }>;
  return first!.text;
}

async function tokenWith(permissions: Record<string, string[]>): Promise<string> {
  const created = await platform.call('POST', '/auth/1/token', { body: { name: 'narrow', permissions } });
  expect(created.status).toBe(201);
  return (await json<{ token: string }>(created)).token;
}

describe.each(KINDS)('over %s', (kind) => {
  test('lists the tools of the operation table, with input schemas and descriptions', async () => {
    const client = await connected(kind);
    try {
      const { tools } = await client.listTools();
      const expected = OPERATIONS.filter((op) => op.tool).map((op) => op.operationId);
      expect(tools.map((tool) => tool.name).sort()).toEqual([...expected].sort());
      const list = tools.find((tool) => tool.name === 'listRecords')!;
      expect(list.description).toContain('GET /api/record');
      expect(Object.keys(list.inputSchema.properties ?? {})).toEqual(
        expect.arrayContaining(['filter', 'order', 'limit', 'offset']),
      );
      const create = tools.find((tool) => tool.name === 'createRecord')!;
      expect(create.inputSchema.required).toEqual(expect.arrayContaining(['moduleId', 'name']));
      expect(list.annotations?.readOnlyHint).toBe(true);
      // The semantic lookups are tools too, with their required parameters.
      for (const name of ['similarRecords', 'outlierRecords', 'contextRecords'])
        expect(tools.find((tool) => tool.name === name)?.inputSchema.required).toEqual(
          expect.arrayContaining(['space_id', 'query']),
        );
    } finally {
      await client.close();
    }
  });

  test('a tool call is the REST call: list with a filter, create, read back', async () => {
    const client = await connected(kind);
    try {
      const listed = await client.callTool({
        name: 'listRecords',
        arguments: {
          filter: `moduleId=${moduleId};name...Printer jam,Router down`,
          order: 'name;ASC',
          limit: 10,
        },
      });
      expect(listed.isError).toBeFalsy();
      const page = listed.structuredContent as { items: Array<{ name: string }>; meta: { total: number } };
      expect(page.items.map((item) => item.name)).toEqual(['Printer jam', 'Router down']);
      const created = await client.callTool({
        name: 'createRecord',
        arguments: { moduleId, name: `Created over ${kind}` },
      });
      expect(created.isError).toBeFalsy();
      const { id } = created.structuredContent as { id: number };
      const read = await client.callTool({ name: 'getRecord', arguments: { recordId: id } });
      expect((read.structuredContent as { name: string }).name).toBe(`Created over ${kind}`);
      const rest = await json<{ name: string }>(await platform.call('GET', `/record/${id}`));
      expect(rest.name).toBe(`Created over ${kind}`);
    } finally {
      await client.close();
    }
  });

  test('a token without record:read cannot list records through MCP either', async () => {
    const narrow = await tokenWith({ space: ['read'] });
    const rest = await fetch(`${platform.api}/record`, { headers: { Authorization: `Bearer ${narrow}` } });
    expect(rest.status).toBe(403);
    const client = await connected(kind, narrow);
    try {
      const refused = await client.callTool({ name: 'listRecords', arguments: {} });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^403 E4030: this credential may not read record/);
      const allowed = await client.callTool({ name: 'listSpaces', arguments: {} });
      expect(allowed.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  test('bad arguments, unknown tools and REST refusals are tool errors, not crashes', async () => {
    const client = await connected(kind);
    try {
      const badSchema = await client.callTool({ name: 'createRecord', arguments: { moduleId: 'seven' } });
      expect(badSchema.isError).toBe(true);
      const badId = await client.callTool({ name: 'getRecord', arguments: { recordId: '007' } });
      expect(badId.isError).toBe(true);
      expect(textOf(badId)).toContain('400 E4001');
      const missing = await client.callTool({ name: 'getRecord', arguments: { recordId: 999999 } });
      expect(textOf(missing)).toContain('404 E4040');
      const unknown = await client.callTool({ name: 'dropDatabase', arguments: {} });
      expect(unknown.isError).toBe(true);
      expect(textOf(unknown)).toContain('Tool dropDatabase not found');
      expect((await fetch(`${platform.url}/healthz`)).status).toBe(200);
    } finally {
      await client.close();
    }
  });

  test('no token, a wrong token or a token of another system: 401 pointing at the resource metadata', async () => {
    for (const token of [undefined, 'rpt_not-a-real-token-0123456789abcdef']) {
      const client = new Client({ name: 'records-test', version: '1.0.0' });
      await expect(client.connect(transportFor(kind, token))).rejects.toThrow();
    }
    const path = kind === 'sse' ? 'sse' : 'mcp';
    const answer = await fetch(`${platform.url}/v2/${SYSTEM}/${path}`, {
      method: kind === 'sse' ? 'GET' : 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: kind === 'sse' ? undefined : '{}',
    });
    expect(answer.status).toBe(401);
    const challenge = answer.headers.get('www-authenticate') ?? '';
    // The address the client reached: the connection's own address and port, one of the platform's names.
    expect(challenge).toContain(
      `resource_metadata="${platform.url}/.well-known/oauth-protected-resource/v2/${SYSTEM}/${path}"`,
    );
    const metadata = await json<{ resource: string; authorization_servers: string[] }>(
      await fetch(`${platform.url}/.well-known/oauth-protected-resource/v2/${SYSTEM}/${path}`),
    );
    expect(metadata.resource).toBe(`${platform.url}/v2/${SYSTEM}/${path}`);
    // The system's own authorization server: this address selects it (the default system).
    expect(metadata.authorization_servers).toEqual([`${platform.url}/api`]);
    const acme = await json<{ authorization_servers: string[] }>(
      await fetch(`${platform.url}/.well-known/oauth-protected-resource/v2/acme/${path}`),
    );
    expect(acme.authorization_servers).toEqual([`${publicOrigin('acme')}/api`]);
    // The admin token belongs to the system `test`; another system does not know it.
    const foreign = await fetch(`${platform.url}/v2/acme/${path}`, {
      method: kind === 'sse' ? 'GET' : 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: kind === 'sse' ? undefined : '{}',
    });
    expect(foreign.status).toBe(401);
  });
});

test('an OAuth access token works as the REST call would, with its scope', async () => {
  const redirectUri = 'https://app.example/callback';
  const client = await registerClient(platform, { redirectUris: [redirectUri], scope: 'record:read' });
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const authorize = await fetch(
    `${platform.api}/auth/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: redirectUri,
      scope: 'record:read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString()}`,
    { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` }, redirect: 'manual' },
  );
  const code = new URL(authorize.headers.get('location')!).searchParams.get('code')!;
  const exchanged = await tokenRequest(
    platform,
    '/auth/oauth/token',
    client,
    { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier },
    client.clientSecret,
  );
  const { access_token: accessToken } = await json<{ access_token: string }>(exchanged);
  const mcp = await connected('streamable', accessToken);
  try {
    const listed = await mcp.callTool({ name: 'listRecords', arguments: { limit: 1 } });
    expect(listed.isError).toBeFalsy();
    const refused = await mcp.callTool({
      name: 'createRecord',
      arguments: { moduleId, name: 'Not allowed' },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('403');
  } finally {
    await mcp.close();
  }
});

test('a session belongs to the credential that opened it: another one cannot use it', async () => {
  const owner = await connected('streamable');
  const other = await tokenWith({ record: ['read'] });
  try {
    const sessionId = (owner.transport as StreamableHTTPClientTransport).sessionId!;
    const hijack = await fetch(`${platform.url}/v2/${SYSTEM}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${other}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': sessionId,
        'Mcp-Protocol-Version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(hijack.status).toBe(403);
    const unknown = await fetch(`${platform.url}/v2/${SYSTEM}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${ADMIN_TOKEN}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': 'no-such-session',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(unknown.status).toBe(404);
    expect((await owner.listTools()).tools.length).toBeGreaterThan(5);
  } finally {
    await owner.close();
  }
});

test('malformed messages get JSON-RPC or HTTP errors, and the platform keeps answering', async () => {
  const headers = {
    Authorization: `Bearer ${ADMIN_TOKEN}`,
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
  };
  for (const body of [
    '{',
    'null',
    '[]',
    '{"jsonrpc":"2.0"}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    'x'.repeat(10_000),
  ]) {
    const answer = await fetch(`${platform.url}/v2/${SYSTEM}/mcp`, { method: 'POST', headers, body });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
  }
  const sse = await fetch(`${platform.url}/v2/${SYSTEM}/message?sessionId=nope`, {
    method: 'POST',
    headers,
    body: '{}',
  });
  expect(sse.status).toBe(404);
  const invalidSystem = await fetch(`${platform.url}/v2/NOT_A_SYSTEM/mcp`, {
    method: 'POST',
    headers,
    body: '{}',
  });
  expect(invalidSystem.status).toBe(400);
  expect((await fetch(`${platform.url}/healthz`)).status).toBe(200);
});

describe('tool arguments are path parameters, never path text', () => {
  let recordId: number;
  let labelId: number;

  /** The record, the label and the record's labels as REST shows them: what no refused call may change. */
  async function state() {
    const record = await platform.call('GET', `/record/${recordId}`);
    const label = await platform.call('GET', `/label/${labelId}`);
    const page = await json<{ meta: { total: number } }>(await platform.call('GET', '/record?limit=1'));
    return {
      record: record.status,
      label: label.status,
      labelIds: record.status === 200 ? (await json<{ labelIds: number[] }>(record)).labelIds : [],
      records: page.meta.total,
    };
  }

  beforeAll(async () => {
    recordId = (
      await json<Entity>(await platform.call('POST', '/record', { body: { moduleId, name: 'Kept' } }))
    ).id;
    labelId = (await json<Entity>(await platform.call('POST', '/label', { body: { name: 'Kept label' } })))
      .id;
    expect((await platform.call('POST', `/record/${recordId}/label/${labelId}`)).status).toBeLessThan(300);
  });

  test('the reproductions: unlabelRecord with ".." in either id, getRecord with an empty id', async () => {
    const client = await connected('streamable');
    try {
      const before = await state();
      expect(before).toMatchObject({ record: 200, label: 200, labelIds: [labelId] });
      for (const args of [
        { recordId: '..', labelId },
        { recordId, labelId: '..' },
      ]) {
        const refused = await client.callTool({ name: 'unlabelRecord', arguments: args });
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toMatch(/^400 E4001: invalid path parameters: (recordId|labelId): /);
      }
      const empty = await client.callTool({ name: 'getRecord', arguments: { recordId: '' } });
      expect(empty.isError).toBe(true);
      expect(textOf(empty)).toMatch(/^400 E4001: invalid path parameters: recordId: /);
      expect(await state()).toEqual(before);
    } finally {
      await client.close();
    }
  });

  test('any non-id argument of a destructive tool is refused and changes nothing', async () => {
    const client = await connected('streamable');
    try {
      const before = await state();
      const notAnId = fc
        .oneof(
          fc.constantFrom(
            '..',
            '.',
            '/',
            '%2e%2e',
            '.%2e',
            '?x=',
            '#',
            '',
            `${recordId}/..`,
            '1'.repeat(3000),
          ),
          fc.string(),
          fc.stringMatching(/^[./%?#0-9]{0,8}$/),
        )
        .filter((text) => !/^[1-9][0-9]{0,8}$/.test(text));
      const calls = fc.oneof(
        notAnId.map((text) => ({ name: 'deleteRecord', arguments: { recordId: text } })),
        notAnId.map((text) => ({ name: 'unlabelRecord', arguments: { recordId: text, labelId } })),
        notAnId.map((text) => ({ name: 'unlabelRecord', arguments: { recordId, labelId: text } })),
        notAnId.map((text) => ({ name: 'updateLabelById', arguments: { labelId: text, name: 'Renamed' } })),
      );
      await fc.assert(
        fc.asyncProperty(calls, async (call) => {
          const answer = await client.callTool(call);
          expect(answer.isError).toBe(true);
          expect(textOf(answer)).toMatch(/^400 E4001: invalid path parameters: /);
        }),
        { numRuns: 40 },
      );
      expect(await state()).toEqual(before);
      const label = await json<{ name: string }>(await platform.call('GET', `/label/${labelId}`));
      expect(label.name).toBe('Kept label');
    } finally {
      await client.close();
    }
  });
});

test('a hostile Host header is never reflected into the MCP metadata, the challenge or the OAuth metadata', async () => {
  const hosts = fc.oneof(
    fc.constantFrom(
      'evil.example',
      'evil.example:6666',
      'test.localhost.evil.example',
      'localhost.evil.example',
      'localhost:1@evil.example',
      'localhost"><script>',
      '[::1]:1',
      'acme.localhost',
      `localhost:${new URL(platform.url).port}/evil`,
    ),
    fc.domain(),
    fc.stringMatching(/^[\x21-\x7e]{1,60}$/),
  );
  await fc.assert(
    fc.asyncProperty(hosts, fc.constantFrom('sse', 'mcp'), async (host, transport) => {
      const metadata = await withHost(
        'GET',
        `/.well-known/oauth-protected-resource/v2/${SYSTEM}/${transport}`,
        host,
      );
      // A Host naming a subdomain that is no system's is refused before any route (404), saying nothing more.
      if (metadata.status === 404) return;
      expect(metadata.status).toBe(200);
      expect(JSON.parse(metadata.text)).toEqual(
        expect.objectContaining({
          resource: `${publicOrigin()}/v2/${SYSTEM}/${transport}`,
          authorization_servers: [`${publicOrigin()}/api`],
        }),
      );
      const challenged = await withHost(
        transport === 'sse' ? 'GET' : 'POST',
        `/v2/${SYSTEM}/${transport}`,
        host,
      );
      expect(challenged.status).toBe(401);
      expect(challenged.headers['www-authenticate']).toBe(
        `Bearer resource_metadata="${publicOrigin()}/.well-known/oauth-protected-resource/v2/${SYSTEM}/${transport}"`,
      );
      const server = await withHost('GET', '/.well-known/oauth-authorization-server', host);
      expect(server.status).toBe(200);
      // The issuer of the system the Host selected (a validated system name), at the platform's address.
      const system = tenantFromHost(host, 'localhost', SYSTEM)!;
      const issuer = `${system === SYSTEM ? publicOrigin() : publicOrigin(system)}/api`;
      expect((JSON.parse(server.text) as { issuer: string }).issuer).toBe(issuer);
      for (const [, url] of server.text.matchAll(/"(https?:[^"]*)"/g))
        expect(url === issuer || url!.startsWith(`${issuer}/`)).toBe(true);
    }),
    { numRuns: 60 },
  );
});

describe('vector search limit, bounded like every list', () => {
  const ROUTES = ['similar', 'outliers', 'context'] as const;
  const TOOLS = { similar: 'similarRecords', outliers: 'outlierRecords', context: 'contextRecords' } as const;

  test('limit=2147483648 and any integer past 1000 is a 400 naming limit, over REST and as a tool', async () => {
    // Parameters are checked before anything else, so this holds with semantic search switched off too.
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.oneof(fc.constant(2147483648), fc.integer({ min: 1001 }), fc.integer({ max: 0 })),
        async (route, limit) => {
          const answer = await platform.call(
            'GET',
            `/record/vector/${route}?space_id=1&query=invoices&limit=${String(limit)}`,
          );
          expect(answer.status).toBe(400);
          expect((await json<{ message: string }>(answer)).message).toMatch(/^limit must be /);
        },
      ),
      { numRuns: 30 },
    );
    const client = await connected('streamable');
    try {
      for (const route of ROUTES) {
        const refused = await client.callTool({
          name: TOOLS[route],
          arguments: { space_id: 1, query: 'invoices', limit: 2147483648 },
        });
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toMatch(/^400 E4001: limit must be at most 1000/);
      }
    } finally {
      await client.close();
    }
  });

  test('any text as limit is a 400 naming limit or a limit within 1..1000', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.stringMatching(/^[0-9eE+.x -]{1,14}$/)), async (text) => {
        const answer = await platform.call(
          'GET',
          `/record/vector/similar?${new URLSearchParams({ space_id: '1', query: 'x', limit: text }).toString()}`,
        );
        // A limit it takes reaches the next check: semantic search is off in this platform (503).
        if (answer.status === 503) return;
        expect(answer.status).toBe(400);
        expect((await json<{ message: string }>(answer)).message).toMatch(/limit must be /);
      }),
      { numRuns: 40 },
    );
  });
});
