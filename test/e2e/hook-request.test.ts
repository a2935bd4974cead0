import express from 'express';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { PlatformError } from '../../contracts/errors';
import {
  bundleOf,
  readHookRequest,
  type BundleOptions,
  type HookRequest,
  type HookRequestLimits,
} from '../../infra/http/hook-request';

/**
 * The webhook request reader behind a one-route express app, over real HTTP: node:http for well-formed
 * requests, raw sockets for bodies that lie about their length, end early or never end.
 */

jest.setTimeout(60_000);

const LIMITS: HookRequestLimits = { maxBytes: 5_242_880, maxFiles: 3, maxFields: 5 };

/** How each request the route saw settled, by its `x-test-id` header: proves settling once, even unanswered. */
const outcomes = new Map<string, { status: number; message: string }>();
let settlements = 0;

let server: Server;
let port: number;

function optionsOf(words: string): BundleOptions {
  const set = new Set(words.split(','));
  return { headers: set.has('headers'), method: set.has('method'), jsonPassThrough: set.has('passthrough') };
}

beforeAll(async () => {
  const app = express();
  app.all('/hook/:options', async (req, res) => {
    const id = req.get('x-test-id') ?? '';
    let request: HookRequest;
    try {
      request = await readHookRequest(req, LIMITS);
    } catch (error) {
      settlements++;
      const status = error instanceof PlatformError ? error.status : 500;
      const message = (error as Error).message;
      outcomes.set(id, { status, message });
      // No `Connection: close` even when the body is partly unread (see readHookRequest): the rest is discarded.
      res.status(status).json({ error: error instanceof PlatformError ? error.kind : 'internal', message });
      return;
    }
    settlements++;
    outcomes.set(id, { status: 200, message: '' });
    res.json({
      bundle: bundleOf(request, optionsOf(String(req.params.options))),
      method: request.method,
      query: request.query,
      body: request.body,
      rawBody: request.rawBody ?? null,
      contentType: request.contentType,
      bytes: request.bytes,
      files: request.files.map((file) => ({ ...file, data: file.data.toString('base64') })),
    });
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly json: Record<string, unknown>;
}

/** One request over a fresh connection. */
function call(
  method: string,
  path: string,
  headers: Record<string, string | number> = {},
  body?: string | Buffer,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

const post = (path: string, contentType: string | undefined, body: string | Buffer) =>
  call('POST', path, contentType === undefined ? {} : { 'Content-Type': contentType }, body);

interface RawAnswer {
  readonly status: number | null;
  readonly body: string;
  /** Until the first byte of the answer (0: none). */
  readonly ms: number;
}

/**
 * Sends `head` and `body` on a raw socket. `answer`: waits for the server's answer, then closes; `end`:
 * half-closes after the bytes, as a client whose process exits; `destroy`: resets the connection after the bytes.
 */
function exchange(head: string, body: Buffer, then: 'answer' | 'end' | 'destroy'): Promise<RawAnswer> {
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let ms = 0;
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      if (ms > 0) return;
      ms = Date.now() - started;
      if (then === 'answer') setTimeout(() => socket.destroy(), 50);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ ...parseRaw(Buffer.concat(received)), ms }));
    socket.once('connect', () => {
      socket.write(head);
      socket.write(body, () => {
        if (then === 'end') socket.end();
        if (then === 'destroy') setTimeout(() => socket.destroy(), 20);
      });
    });
  });
}

function parseRaw(raw: Buffer): { status: number | null; body: string } {
  const text = raw.toString('utf8');
  const status = text.startsWith('HTTP/1.1 ') ? Number(text.slice(9, 12)) : null;
  const bodyStart = text.indexOf('\r\n\r\n');
  return { status, body: bodyStart < 0 ? '' : text.slice(bodyStart + 4) };
}

function head(id: string, headers: Record<string, string | number>): string {
  const lines = Object.entries({ Host: '127.0.0.1', 'X-Test-Id': id, ...headers }).map(
    ([name, value]) => `${name}: ${value}\r\n`,
  );
  return `POST /hook/plain HTTP/1.1\r\n${lines.join('')}\r\n`;
}

/** The server notices a vanished client asynchronously: waits (bounded) for the route's outcome. */
async function outcomeOf(id: string): Promise<{ status: number; message: string }> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const outcome = outcomes.get(id);
    if (outcome) return outcome;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the request ${id} never settled`);
}

async function expectStillServing(): Promise<void> {
  const answer = await post('/hook/plain?alive=yes', 'application/json', '{"ok":true}');
  expect(answer.status).toBe(200);
  expect(answer.json.bundle).toEqual({ ok: true, alive: 'yes' });
}

const BOUNDARY = 'hook-boundary-42';
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

function fieldPart(name: string, value: string): string {
  return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
}
function filePart(name: string, filename: string, type: string, content: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\n` +
        `Content-Type: ${type}\r\n\r\n`,
    ),
    content,
    Buffer.from('\r\n'),
  ]);
}
const CLOSING = `--${BOUNDARY}--\r\n`;
const PNG_BYTES = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]);
const FORM = Buffer.concat([
  Buffer.from(fieldPart('title', 'Invoice') + fieldPart('tag', 'a') + fieldPart('tag', 'b')),
  filePart('attachment', 'note.txt', 'text/plain', Buffer.from('first line\nsecond line\n')),
  filePart('attachment', 'pixel.png', 'image/png', PNG_BYTES),
  Buffer.from(CLOSING),
]);

describe('query strings and bundles', () => {
  test('GET: the query only, repeated keys as arrays, no body', async () => {
    const answer = await call('GET', '/hook/plain?a=1&b=x%20y&a=2&a=3&c=+');
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({
      method: 'GET',
      query: { a: ['1', '2', '3'], b: 'x y', c: ' ' },
      bytes: 0,
      contentType: null,
      rawBody: null,
      files: [],
    });
    expect(answer.json).not.toHaveProperty('body');
    expect(answer.json.bundle).toEqual({ a: ['1', '2', '3'], b: 'x y', c: ' ' });
  });

  test('DELETE and HEAD without a body are read too', async () => {
    expect((await call('DELETE', '/hook/method?x=1')).json.bundle).toEqual({ x: '1', Method: 'DELETE' });
    const answer = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'HEAD',
        path: '/hook/plain?x=1',
        agent: false,
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(answer).toBe(200);
  });

  test('form and query in one request: the query string wins on duplicate keys', async () => {
    const answer = await post(
      '/hook/plain?name=from-query&extra=q',
      'application/x-www-form-urlencoded',
      'name=from-form&kept=yes&kept=again',
    );
    expect(answer.status).toBe(200);
    expect(answer.json.bundle).toEqual({ name: 'from-query', kept: ['yes', 'again'], extra: 'q' });
    expect(answer.json.rawBody).toBe('name=from-form&kept=yes&kept=again');
  });

  test('JSON and query: the query string wins; an array or scalar body goes under value', async () => {
    const object = await post('/hook/plain?id=7', 'application/json', '{"id":1,"nested":{"a":[1,2]}}');
    expect(object.json.bundle).toEqual({ id: '7', nested: { a: [1, 2] } });
    const array = await post('/hook/plain?k=v', 'application/json; charset=UTF-8', '[1,{"b":2}]');
    expect(array.json.bundle).toEqual({ value: [1, { b: 2 }], k: 'v' });
    const scalar = await post('/hook/plain', 'application/vnd.example+json', '"just text"');
    expect(scalar.json).toMatchObject({ contentType: 'application/vnd.example+json', body: 'just text' });
    expect(scalar.json.bundle).toEqual({ value: 'just text' });
  });

  test('JSON pass-through: the text as received under value, query fields still merged', async () => {
    const text = '{ "id": 1,\n  "name": "spaced" }';
    const answer = await post('/hook/passthrough?id=9', 'application/json', text);
    expect(answer.status).toBe(200);
    expect(answer.json.bundle).toEqual({ value: text, id: '9' });
    // Pass-through is about JSON: a form still becomes fields.
    const form = await post('/hook/passthrough', 'application/x-www-form-urlencoded', 'a=1');
    expect(form.json.bundle).toEqual({ a: '1' });
  });

  test('headers and method options: every header, names lower-cased, in order; the method', async () => {
    const answer = await call(
      'PUT',
      '/hook/headers,method?q=1',
      { 'Content-Type': 'application/json', 'X-Custom-Thing': 'One', 'x-second': 'Two' },
      '{"a":1}',
    );
    expect(answer.status).toBe(200);
    const bundle = answer.json.bundle as { Headers: Array<{ name: string; value: string }>; Method: string };
    expect(bundle.Method).toBe('PUT');
    expect(bundle).toMatchObject({ a: 1, q: '1' });
    const names = bundle.Headers.map((header) => header.name);
    expect(names).toEqual(names.map((name) => name.toLowerCase()));
    expect(names.indexOf('content-type')).toBeLessThan(names.indexOf('x-custom-thing'));
    expect(names.indexOf('x-custom-thing')).toBeLessThan(names.indexOf('x-second'));
    expect(bundle.Headers).toContainEqual({ name: 'x-custom-thing', value: 'One' });
    expect(bundle.Headers).toContainEqual({ name: 'host', value: `127.0.0.1:${port}` });
    const plain = await post('/hook/plain', 'application/json', '{"a":1}');
    expect(plain.json.bundle).toEqual({ a: 1 });
  });

  test('text/plain: the text is the body and the raw body', async () => {
    const answer = await post('/hook/plain?x=1', 'text/plain; charset=utf-8', 'héllo wörld');
    expect(answer.json).toMatchObject({ body: 'héllo wörld', rawBody: 'héllo wörld', bytes: 13 });
    expect(answer.json.bundle).toEqual({ value: 'héllo wörld', x: '1' });
  });
});

describe('multipart', () => {
  test('two files and fields: files as name, mime, data; fields (repeated as arrays) in the bundle', async () => {
    const answer = await post('/hook/plain?title=query-wins', MULTIPART, FORM);
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({
      contentType: 'multipart/form-data',
      bytes: FORM.length,
      rawBody: null,
      body: { title: 'Invoice', tag: ['a', 'b'] },
      files: [
        {
          field: 'attachment',
          name: 'note.txt',
          mime: 'text/plain',
          data: Buffer.from('first line\nsecond line\n').toString('base64'),
        },
        { field: 'attachment', name: 'pixel.png', mime: 'image/png', data: PNG_BYTES.toString('base64') },
      ],
    });
    expect(answer.json.bundle).toEqual({ title: 'query-wins', tag: ['a', 'b'] });
  });

  test('malformed multipart: no boundary, another boundary, a broken part header, cut before the end', async () => {
    const noBoundary = await post('/hook/plain', 'multipart/form-data', FORM);
    expect(noBoundary.status).toBe(400);
    expect(noBoundary.json.message).toMatch(/malformed multipart request: .*boundary/i);
    const otherBoundary = await post('/hook/plain', 'multipart/form-data; boundary=not-the-one', FORM);
    expect(otherBoundary.status).toBe(400);
    expect(otherBoundary.json.message).toBe('malformed multipart request: Unexpected end of form');
    const brokenHeader = await post(
      '/hook/plain',
      MULTIPART,
      `--${BOUNDARY}\r\n${'X'.repeat(20_000)}\r\n\r\nvalue\r\n${CLOSING}`,
    );
    expect(brokenHeader.status).toBe(400);
    expect(brokenHeader.json.message).toBe('malformed multipart request: Malformed part header');
    for (const cut of [10, FORM.length / 2, FORM.length - 5]) {
      const truncated = await post('/hook/plain', MULTIPART, FORM.subarray(0, cut));
      expect(truncated.status).toBe(400);
      expect(truncated.json.message).toMatch(/^malformed multipart request: Unexpected end of (form|file)$/);
    }
    await expectStillServing();
  });

  test('too many fields or files: 400 naming the limit', async () => {
    const fields = Array.from({ length: 6 }, (_, i) => fieldPart(`f${i}`, 'v')).join('') + CLOSING;
    const manyFields = await post('/hook/plain', MULTIPART, fields);
    expect(manyFields.status).toBe(400);
    expect(manyFields.json.message).toBe('the form has more than 5 fields');
    const files = Buffer.concat([
      ...Array.from({ length: 4 }, (_, i) => filePart('f', `${i}.txt`, 'text/plain', Buffer.from('x'))),
      Buffer.from(CLOSING),
    ]);
    const manyFiles = await post('/hook/plain', MULTIPART, files);
    expect(manyFiles.status).toBe(400);
    expect(manyFiles.json.message).toBe('the form has more than 3 files');
    await expectStillServing();
  });

  test('a multipart body cut by a client that hangs up: settled with 400, the server still serves', async () => {
    const id = 'multipart-hang-up';
    const sent = await exchange(
      head(id, { 'Content-Type': MULTIPART, 'Content-Length': FORM.length }),
      FORM.subarray(0, 120),
      'destroy',
    );
    expect(sent.status).toBeNull();
    expect(await outcomeOf(id)).toEqual({ status: 400, message: 'the request body ended early' });
    await expectStillServing();
  });
});

describe('refused bodies', () => {
  test('malformed JSON: 400 malformed_json with the parser message', async () => {
    const answer = await post('/hook/plain', 'application/json', '{"a":1,}');
    expect(answer.status).toBe(400);
    expect(answer.json.error).toBe('malformed_json');
    expect(answer.json.message).toMatch(/^malformed JSON body: .+/);
    const empty = await post('/hook/plain', 'application/json', '   ');
    expect(empty.status).toBe(400);
  });

  test('JSON nested 64 levels is read; 65 levels is a 400', async () => {
    const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    expect((await post('/hook/plain', 'application/json', nested(64))).status).toBe(200);
    const deep = await post('/hook/plain', 'application/json', nested(65));
    expect(deep.status).toBe(400);
    expect(deep.json.message).toBe('the JSON body is nested deeper than 64 levels');
    const veryDeep = await post('/hook/plain', 'application/json', nested(1_000_000));
    expect(veryDeep.status).toBe(400);
  });

  test('another content type, or none, with a body: 415 naming what is accepted', async () => {
    const xml = await post('/hook/plain', 'application/xml', '<a/>');
    expect(xml.status).toBe(415);
    expect(xml.json.message).toBe(
      'unsupported content type "application/xml": application/json (or application/*+json), ' +
        'application/x-www-form-urlencoded, multipart/form-data or text/plain',
    );
    const none = await post('/hook/plain', undefined, 'a=1');
    expect(none.status).toBe(415);
    expect(none.json.message).toMatch(/^a request body needs a Content-Type: application\/json/);
    const charset = await post('/hook/plain', 'text/plain; charset=iso-8859-1', 'caf\xe9');
    expect(charset.status).toBe(415);
    expect(charset.json.message).toBe('unsupported charset "iso-8859-1": request bodies are read as UTF-8');
  });

  test('an empty body is never refused for its type; a chunked one of a refused type is, at its first byte', async () => {
    expect((await call('POST', '/hook/plain?x=1', { 'Content-Type': 'application/xml' })).status).toBe(200);
    expect((await call('POST', '/hook/plain', { 'Content-Length': 0 })).json.bundle).toEqual({});
    const emptyChunked = await exchange(
      head('empty-chunked', {
        'Content-Type': 'application/xml',
        'Transfer-Encoding': 'chunked',
        Connection: 'close',
      }),
      Buffer.from('0\r\n\r\n'),
      'answer',
    );
    expect(emptyChunked.status).toBe(200);
    const chunked = await exchange(
      head('xml-chunked', {
        'Content-Type': 'application/xml',
        'Transfer-Encoding': 'chunked',
        Connection: 'close',
      }),
      Buffer.from('4\r\n<a/>\r\n0\r\n\r\n'),
      'answer',
    );
    expect(chunked.status).toBe(415);
  });

  test('a body that is not UTF-8: 400', async () => {
    const answer = await post('/hook/plain', 'text/plain', Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    expect(answer.status).toBe(400);
    expect(answer.json.message).toBe('the request body is not valid UTF-8');
  });

  test('urlencoded with more fields than the limit: 400; empty pairs do not count', async () => {
    expect(
      (await post('/hook/plain', 'application/x-www-form-urlencoded', 'a=1&&b=2&&&c&d=&e=5')).status,
    ).toBe(200);
    const many = await post('/hook/plain', 'application/x-www-form-urlencoded', 'a=1&b=2&c=3&d=4&e=5&f=6');
    expect(many.status).toBe(400);
    expect(many.json.message).toBe('the form has more than 5 fields');
  });
});

describe('sizes and clients that misbehave', () => {
  test('a declared 6 MB Content-Length with no body sent: 413 at once, without waiting for the body', async () => {
    const answer = await exchange(
      head('declared-too-large', { 'Content-Type': 'application/json', 'Content-Length': 6 * 1024 * 1024 }),
      Buffer.alloc(0),
      'answer',
    );
    expect(answer.status).toBe(413);
    expect(answer.ms).toBeLessThan(5000);
    expect(JSON.parse(answer.body)).toEqual({
      error: 'payload_too_large',
      message: 'the request body is larger than the limit of 5242880 bytes',
    });
    await expectStillServing();
  });

  test('exactly the limit is read; one byte more (declared) is refused', async () => {
    const text = 'x'.repeat(LIMITS.maxBytes);
    const exact = await post('/hook/plain', 'text/plain', text);
    expect(exact.status).toBe(200);
    expect(exact.json.bytes).toBe(LIMITS.maxBytes);
    expect((await post('/hook/plain', 'text/plain', `${text}y`)).status).toBe(413);
  });

  /** The status codes of the answers in `raw`, in order. */
  function statusesOf(raw: string): number[] {
    const statuses: number[] = [];
    for (let at = raw.indexOf('HTTP/1.1 '); at >= 0; at = raw.indexOf('HTTP/1.1 ', at + 1))
      statuses.push(Number(raw.slice(at + 9, at + 12)));
    return statuses;
  }

  /**
   * Sends `opening` then `chunk` again and again as a chunked body (up to 3x the limit) until the server answers;
   * then ends the body and sends a GET on the same connection.
   */
  function streamUntilAnswered(
    id: string,
    contentType: string,
    opening: string,
    chunk: Buffer,
  ): Promise<string> {
    return new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      const received: Buffer[] = [];
      let sent = 0;
      socket.on('data', (data: Buffer) => {
        if (received.length === 0)
          socket.write(
            '0\r\n\r\nGET /hook/plain?again=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
          );
        received.push(data);
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(Buffer.concat(received).toString('utf8')));
      const sendMore = () => {
        if (received.length > 0 || socket.destroyed || sent > 3 * LIMITS.maxBytes) return;
        sent += chunk.length;
        socket.write(`${chunk.length.toString(16)}\r\n`);
        socket.write(chunk);
        if (socket.write('\r\n')) setImmediate(sendMore);
        else socket.once('drain', sendMore);
      };
      socket.once('connect', () => {
        socket.write(head(id, { 'Content-Type': contentType, 'Transfer-Encoding': 'chunked' }));
        if (opening) socket.write(`${Buffer.byteLength(opening).toString(16)}\r\n${opening}\r\n`);
        sendMore();
      });
    });
  }

  test.each([
    ['a JSON body', 'application/json', '"'],
    [
      'a multipart body (one file part)',
      MULTIPART,
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="f"; filename="big.bin"\r\n\r\n`,
    ],
  ])(
    '%s streamed chunked past the limit: 413 as soon as it passes; the rest is discarded, the connection still serves',
    async (_what, contentType, opening) => {
      const id = `chunked-${contentType}`;
      const raw = await streamUntilAnswered(id, contentType, opening, Buffer.alloc(64 * 1024, 'x'));
      expect(statusesOf(raw)).toEqual([413, 200]);
      expect(raw).toContain(
        '{"error":"payload_too_large","message":"the request body is larger than the limit',
      );
      expect(raw).toContain('"again":"1"');
      expect(await outcomeOf(id)).toEqual({
        status: 413,
        message: 'the request body is larger than the limit of 5242880 bytes',
      });
      await expectStillServing();
    },
  );

  test.each([['end' as const], ['destroy' as const]])(
    'Content-Length 100, 10 bytes sent, then the socket %ss: settled once with 400, no crash',
    async (then) => {
      const id = `short-${then}`;
      const before = settlements;
      const answer = await exchange(
        head(id, { 'Content-Type': 'application/json', 'Content-Length': 100 }),
        Buffer.from('{"a":12345'),
        then,
      );
      expect(await outcomeOf(id)).toEqual({ status: 400, message: 'the request body ended early' });
      // A half-closed client may still read the answer; a reset one cannot.
      if (answer.status !== null) expect(answer.status).toBe(400);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(settlements).toBe(before + 1);
      await expectStillServing();
    },
  );
});

describe('prototype keys', () => {
  const pollutedNowhere = () => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  };

  test('bundleOf keeps __proto__ from a JSON body as an own key, never as a prototype', () => {
    const body: unknown = JSON.parse(
      '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":2}}}',
    );
    const request: HookRequest = {
      method: 'POST',
      query: {},
      body,
      files: [],
      rawBody: undefined,
      contentType: 'application/json',
      bytes: 0,
      headers: [],
    };
    const bundle = bundleOf(request, { headers: false, method: false, jsonPassThrough: false });
    expect(Object.getPrototypeOf(bundle)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(bundle, '__proto__')?.value).toEqual({ polluted: 1 });
    expect(bundle.polluted).toBeUndefined();
    expect(Object.keys(bundle)).toEqual(['__proto__', 'constructor']);
    // Spreading (CreateDataProperty) keeps it an own key too.
    expect(Object.getPrototypeOf({ ...bundle })).toBe(Object.prototype);
    pollutedNowhere();
  });

  test('over HTTP: JSON, form, multipart and query keys __proto__, constructor, prototype stay data', async () => {
    const json = await post('/hook/plain', 'application/json', '{"__proto__":{"polluted":1},"a":1}');
    expect(json.status).toBe(200);
    expect(Object.getOwnPropertyDescriptor(json.json.bundle, '__proto__')?.value).toEqual({ polluted: 1 });

    const form = await post(
      '/hook/plain?__proto__=from-query',
      'application/x-www-form-urlencoded',
      '__proto__=x&__proto__[polluted]=1&constructor=c&prototype=p&constructor[prototype][polluted]=2',
    );
    expect(form.status).toBe(200);
    const formBundle = form.json.bundle as Record<string, unknown>;
    expect(Object.keys(formBundle).sort()).toEqual(
      [
        '__proto__',
        '__proto__[polluted]',
        'constructor',
        'constructor[prototype][polluted]',
        'prototype',
      ].sort(),
    );
    expect(Object.getOwnPropertyDescriptor(formBundle, '__proto__')?.value).toBe('from-query');
    expect(Object.getOwnPropertyDescriptor(form.json.body, '__proto__')?.value).toBe('x');

    const multipart = await post(
      '/hook/plain',
      MULTIPART,
      fieldPart('__proto__', 'm') + fieldPart('constructor', 'n') + CLOSING,
    );
    expect(multipart.status).toBe(200);
    expect(Object.getOwnPropertyDescriptor(multipart.json.bundle, '__proto__')?.value).toBe('m');
    pollutedNowhere();
  });
});

test('after every hostile request above, the server still answers a normal one', async () => {
  await expectStillServing();
});
