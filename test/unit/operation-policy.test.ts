import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { z } from 'zod';
import type { Principal } from '../../contracts/auth';
import { OPERATIONS } from '../../contracts/api/index';
import { operation, type Operation } from '../../contracts/api/operation';
import { createHttpApp } from '../../infra/http/app';
import { contextOf } from '../../infra/http/context';
import { ApiMeter } from '../../infra/http/metering';
import { mount } from '../../infra/http/operations';
import { ORDINARY_POLICY, policyOfOperation, requestPolicies } from '../../infra/http/operation-policy';
import { createLogger } from '../../infra/logging';
import type { ReadStore } from '../../infra/read-store/port';

/**
 * What the HTTP kit does before a route (forms, uploads, credentials, which API serves a GET) comes from the
 * flags of the route's operation, not from path patterns of its own.
 */

const FORM = 'application/x-www-form-urlencoded';

describe("the platform's operations", () => {
  const idsWith = (flag: keyof typeof ORDINARY_POLICY) =>
    OPERATIONS.filter((op) => !op.root && policyOfOperation(op)[flag])
      .map((op) => op.operationId)
      .sort();

  test('declare the same routes as the path patterns they replace', () => {
    expect(idsWith('commandSide')).toEqual(
      [
        'authorize',
        'generateFieldValue',
        'getSystemAi',
        'listDeadLetters',
        ...['Apple', 'Github', 'Google', 'Microsoft'].flatMap((name) => [
          `start${name}SignIn`,
          `finish${name}SignIn`,
        ]),
      ].sort(),
    );
    expect(idsWith('authenticatesItself')).toEqual(
      [
        'exchangeToken',
        'finishAppleSignInByFormPost',
        'introspectToken',
        'renewToken',
        'revokeOAuthToken',
      ].sort(),
    );
    expect(idsWith('takesForms')).toEqual(
      [
        'answerConsent',
        'exchangeToken',
        'finishAppleSignInByFormPost',
        'introspectToken',
        'renewToken',
        'revokeOAuthToken',
      ].sort(),
    );
    expect(idsWith('sessionForm')).toEqual(['answerConsent']);
    expect(idsWith('bodyReadByRoute')).toEqual(['uploadRecordFile']);
  });

  test('are found for requests as express routes them: any case, a trailing slash, HEAD as GET', () => {
    const policyOf = requestPolicies(OPERATIONS);
    expect(policyOf('POST', '/auth/oauth/token/')).toMatchObject({
      authenticatesItself: true,
      takesForms: true,
    });
    expect(policyOf('POST', '/Auth/OAuth/Introspect')).toMatchObject({ authenticatesItself: true });
    expect(policyOf('GET', '/auth/oauth/authorize')).toMatchObject({ commandSide: true, sessionForm: false });
    expect(policyOf('POST', '/auth/oauth/authorize')).toMatchObject({
      commandSide: false,
      sessionForm: true,
    });
    expect(policyOf('HEAD', '/auth/google/callback')).toMatchObject({ commandSide: true });
    expect(policyOf('POST', '/auth/apple/callback')).toMatchObject({ authenticatesItself: true });
    expect(policyOf('POST', '/record/12/file')).toMatchObject({ bodyReadByRoute: true });
    expect(policyOf('GET', '/field/generate/7')).toMatchObject({ commandSide: true });
    expect(policyOf('GET', '/system/acme/ai/')).toMatchObject({ commandSide: true });
    expect(policyOf('GET', '/dead-letter')).toMatchObject({ commandSide: true });
    for (const [method, path] of [
      ['POST', '/auth/google/callback'],
      ['GET', '/record/12/file'],
      ['GET', '/record/12'],
      ['POST', '/dead-letter/p:1:2/retry'],
      ['GET', '/system/acme/ai/extra'],
      ['GET', '/auth/oauth/token'],
    ] as const)
      expect([method, path, policyOf(method, path)]).toEqual([method, path, ORDINARY_POLICY]);
  });
});

describe('the HTTP kit, given operations with flags', () => {
  const echo = z.object({ value: z.string() });
  const ordinaryWrite = operation({
    ...base('ordinaryWrite', 'post', '/thing'),
    body: { schema: echo },
    security: 'token',
  });
  const form = operation({
    ...base('form', 'post', '/form'),
    body: { schema: echo, contentTypes: [FORM] },
    security: 'token',
  });
  const sessionForm = operation({
    ...base('sessionForm', 'post', '/consent'),
    body: { schema: echo, contentTypes: [FORM] },
    security: 'token',
    sessionForm: true,
  });
  const upload = operation({
    ...base('upload', 'post', '/upload/{id}'),
    body: { schema: echo, contentTypes: ['multipart/form-data'], readByRoute: true },
    security: 'token',
  });
  const clientRoute = operation({
    ...base('clientRoute', 'post', '/client'),
    body: { schema: echo, contentTypes: ['application/json', FORM] },
    security: 'client',
  });
  const callback = operation({
    ...base('callback', 'post', '/callback'),
    body: { schema: echo, contentTypes: [FORM] },
    security: 'none',
    formPostCallback: true,
  });
  const writingGet = operation({
    ...base('writingGet', 'get', '/issue'),
    security: 'token',
    servedByCommandApi: true,
  });
  const read = operation({ ...base('read', 'get', '/read'), security: 'token' });
  const operations: Operation[] = [
    ordinaryWrite,
    form,
    sessionForm,
    upload,
    clientRoute,
    callback,
    writingGet,
  ];

  const user: Principal = {
    tenant: 'test',
    userId: '1',
    role: 'admin',
    credential: { kind: 'session', id: 'session:1', sessionHash: 'hash' },
  };
  let server: Server;
  let url: string;

  /** Each route answers which API served it, who called, and the body as it arrived. */
  const answer =
    (side: string): express.RequestHandler =>
    (req, res) => {
      const chunks: Buffer[] = [];
      const finish = (raw: string | undefined) =>
        res.json({
          side,
          caller: contextOf(req).principal?.userId ?? null,
          body: req.body ?? null,
          ...(raw !== undefined && { raw }),
        });
      // A route that reads its own body gets it unread.
      if (req.readable && req.body === undefined && req.headers['content-length'] !== undefined) {
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => finish(Buffer.concat(chunks).toString('utf8')));
      } else finish(undefined);
    };

  beforeAll(async () => {
    const command = express.Router();
    for (const op of operations) mount(command, op, answer('command'));
    const query = express.Router();
    for (const op of [read, writingGet]) mount(query, op, answer('query'));
    const app = createHttpApp({
      version: 'test',
      baseHost: 'localhost',
      defaultTenant: 'test',
      bodyLimit: '100kb',
      trustProxyHops: 0,
      logger: createLogger('silent'),
      authenticate: async (_tenant, token) => (token === 'good' || token === 'session' ? user : null),
      meter: new ApiMeter({ store: {} as ReadStore }),
      readiness: async () => ({ ready: true, checks: {} }),
      metrics: async () => ({ contentType: 'text/plain', body: '' }),
      operations: [...operations, read],
      command,
      query,
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const call = async (method: string, path: string, headers: Record<string, string> = {}, body?: string) => {
    const response = await fetch(`${url}${path}`, { method, headers, ...(body !== undefined && { body }) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const asForm = { 'content-type': FORM };

  test('a route declared to take forms takes them; any other refuses them', async () => {
    expect(await call('POST', '/form', { ...asForm, authorization: 'Bearer good' }, 'value=a')).toMatchObject(
      {
        status: 200,
        body: { body: { value: 'a' } },
      },
    );
    expect(
      await call('POST', '/thing', { ...asForm, authorization: 'Bearer good' }, 'value=a'),
    ).toMatchObject({
      status: 415,
    });
  });

  test('an upload skips the JSON check and reaches its route unparsed', async () => {
    const sent = await call(
      'POST',
      '/upload/5',
      { 'content-type': 'text/plain', authorization: 'Bearer good' },
      'the file',
    );
    expect(sent).toMatchObject({ status: 200, body: { raw: 'the file' } });
    expect(
      await call('POST', '/thing', { 'content-type': 'text/plain', authorization: 'Bearer good' }, 'x'),
    ).toMatchObject({ status: 415 });
  });

  test('an OAuth client route and a form-post callback skip the credential check', async () => {
    const basic = { authorization: `Basic ${Buffer.from('client:secret').toString('base64')}` };
    expect(await call('POST', '/client', { ...asForm, ...basic }, 'value=a')).toMatchObject({
      status: 200,
      body: { caller: null, body: { value: 'a' } },
    });
    expect(
      await call('POST', '/thing', { 'content-type': 'application/json', ...basic }, '{}'),
    ).toMatchObject({ status: 401 });
    const stale = { authorization: 'Bearer revoked', cookie: 'rp_session=session' };
    expect(await call('POST', '/callback', { ...asForm, ...stale }, 'value=a')).toMatchObject({
      status: 200,
      body: { caller: null },
    });
    expect(await call('POST', '/form', { ...asForm, ...stale }, 'value=a')).toMatchObject({ status: 401 });
  });

  test('a session form counts the session cookie without X-CSRF-Token; other writes ignore it', async () => {
    const cookie = { cookie: 'rp_session=session' };
    expect(await call('POST', '/consent', { ...asForm, ...cookie }, 'value=a')).toMatchObject({
      status: 200,
      body: { caller: '1' },
    });
    expect(await call('POST', '/form', { ...asForm, ...cookie }, 'value=a')).toMatchObject({
      status: 200,
      body: { caller: null },
    });
  });

  test('a GET served by the command API goes there; other GETs to the query API', async () => {
    expect(await call('GET', '/issue')).toMatchObject({ body: { side: 'command' } });
    expect(await call('GET', '/read')).toMatchObject({ body: { side: 'query' } });
  });
});

function base(operationId: string, method: Operation['method'], path: string) {
  return { operationId, method, path, tag: 'test', summary: operationId, responses: {} };
}
