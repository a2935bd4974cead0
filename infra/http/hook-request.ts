import busboy from 'busboy';
import type { Request } from 'express';
import { PlatformError } from '../../contracts/errors';

/**
 * The reader of an incoming webhook request: any method, a body in JSON, a form, multipart or plain text, read
 * with a byte limit counted as it streams (a declared length over the limit is refused before a byte is read).
 * Whatever the client does (a malformed form, a body that ends early, a connection that drops), the promise
 * settles once with the request or a `PlatformError` (400, 413 or 415), and no stream error goes unheard.
 */
export interface HookRequestLimits {
  readonly maxBytes: number;
  readonly maxFiles: number;
  readonly maxFields: number;
}

export interface HookFile {
  readonly field: string;
  readonly name: string;
  readonly mime: string;
  readonly data: Buffer;
}

export interface HookRequest {
  readonly method: string;
  readonly query: Record<string, string | string[]>;
  /** JSON: any value; forms and multipart fields: their fields; plain text: the text; no body: undefined. */
  readonly body: unknown;
  readonly files: readonly HookFile[];
  /** The body as text (JSON, forms, plain text), for JSON pass-through and the logs. */
  readonly rawBody: string | undefined;
  /** The media type, lower case, without parameters. */
  readonly contentType: string | null;
  readonly bytes: number;
  readonly headers: ReadonlyArray<{ name: string; value: string }>;
}

export interface BundleOptions {
  readonly headers: boolean;
  readonly method: boolean;
  readonly jsonPassThrough: boolean;
}

const JSON_TYPES = new Set(['application/json']);
const TEXT_CHARSETS = new Set(['utf-8', 'utf8', 'us-ascii']);
const MAX_JSON_DEPTH = 64;
const ACCEPTED = 'application/json, application/x-www-form-urlencoded, multipart/form-data or text/plain';

/** Sets an own property, whatever its name (`__proto__` included): never a prototype. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Repeated keys become arrays; keys are own properties of a plain object. */
function fieldsOf(pairs: Iterable<[string, string]>): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = {};
  for (const [key, value] of pairs) {
    const earlier = Object.hasOwn(fields, key) ? fields[key] : undefined;
    setOwn(
      fields,
      key,
      earlier === undefined ? value : Array.isArray(earlier) ? [...earlier, value] : [earlier, value],
    );
  }
  return fields;
}

function queryOf(url: string, maxFields: number): Record<string, string | string[]> {
  const question = url.indexOf('?');
  if (question < 0) return {};
  const params = new URLSearchParams(url.slice(question + 1));
  const pairs = [...params];
  if (pairs.length > maxFields)
    throw new PlatformError('bad_request', `the query string has more than ${maxFields} parameters`);
  return fieldsOf(pairs);
}

function headersOf(raw: readonly string[]): Array<{ name: string; value: string }> {
  const headers: Array<{ name: string; value: string }> = [];
  for (let index = 0; index + 1 < raw.length; index += 2)
    headers.push({ name: raw[index]!.toLowerCase(), value: raw[index + 1]! });
  return headers;
}

function mediaType(header: string | undefined): { type: string | null; charset: string | null } {
  if (header === undefined || header.trim() === '') return { type: null, charset: null };
  const [type = '', ...parameters] = header.split(';');
  let charset: string | null = null;
  for (const parameter of parameters) {
    const equals = parameter.indexOf('=');
    if (equals > 0 && parameter.slice(0, equals).trim().toLowerCase() === 'charset')
      charset = parameter
        .slice(equals + 1)
        .trim()
        .replace(/^"|"$/g, '')
        .toLowerCase();
  }
  return { type: type.trim().toLowerCase(), charset };
}

function tooLarge(maxBytes: number): PlatformError {
  return new PlatformError('payload_too_large', `the body is over the limit of ${maxBytes} bytes`);
}

function endedEarly(): PlatformError {
  return new PlatformError('bad_request', 'the request body ended early');
}

/** The whole body, counted as it comes; stops reading at once past the limit. */
function readBody(req: Request, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let settled = false;
    const settle = (error: PlatformError | null) => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      if (error) {
        // Stop taking the rest: the answer closes the connection.
        req.pause();
        reject(error);
      } else resolve(Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > maxBytes) return settle(tooLarge(maxBytes));
      chunks.push(chunk);
    };
    const onEnd = () => settle(null);
    const onClose = () => settle(req.complete ? null : endedEarly());
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
    // An error after the settlement (a reset connection) must still have a listener.
    req.on('error', () => settle(endedEarly()));
  });
}

function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth > deepest) deepest = depth;
    if (deepest > MAX_JSON_DEPTH) return deepest;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return deepest;
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new PlatformError('malformed_json', `malformed JSON body: ${(error as Error).message}`);
  }
  if (depthOf(value) > MAX_JSON_DEPTH)
    throw new PlatformError('bad_request', `the JSON body nests deeper than ${MAX_JSON_DEPTH} levels`);
  return value;
}

/** A multipart form: its fields and its files, each file in memory (the whole body is at most `maxBytes`). */
function readMultipart(
  req: Request,
  limits: HookRequestLimits,
): Promise<{ fields: Record<string, string | string[]>; files: HookFile[]; bytes: number }> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        limits: {
          fileSize: limits.maxBytes,
          fieldSize: limits.maxBytes,
          files: limits.maxFiles,
          fields: limits.maxFields,
          parts: limits.maxFiles + limits.maxFields,
        },
      });
    } catch (error) {
      reject(new PlatformError('bad_request', `malformed multipart request: ${(error as Error).message}`));
      req.resume();
      return;
    }
    const fields: Array<[string, string]> = [];
    const files: HookFile[] = [];
    let bytes = 0;
    let settled = false;
    const fail = (error: PlatformError) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      req.pause();
      reject(error);
    };
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limits.maxBytes) fail(tooLarge(limits.maxBytes));
    });
    req.on('close', () => {
      if (!req.complete) fail(endedEarly());
    });
    req.on('error', () => fail(endedEarly()));
    parser.on('field', (name, value) => fields.push([name, value]));
    parser.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => fail(tooLarge(limits.maxBytes)));
      stream.on('error', () =>
        fail(new PlatformError('bad_request', 'the multipart form ended inside a file')),
      );
      stream.on('end', () =>
        files.push({ field, name: info.filename ?? '', mime: info.mimeType, data: Buffer.concat(chunks) }),
      );
    });
    parser.on('filesLimit', () =>
      fail(new PlatformError('payload_too_large', `a request carries at most ${limits.maxFiles} files`)),
    );
    parser.on('fieldsLimit', () =>
      fail(new PlatformError('payload_too_large', `a request carries at most ${limits.maxFields} fields`)),
    );
    parser.on('partsLimit', () =>
      fail(new PlatformError('payload_too_large', 'the multipart form has too many parts')),
    );
    parser.on('error', (error: Error) =>
      fail(new PlatformError('bad_request', `malformed multipart request: ${error.message}`)),
    );
    parser.on('close', () => {
      if (settled) return;
      settled = true;
      resolve({ fields: fieldsOf(fields), files, bytes });
    });
    req.pipe(parser);
  });
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** Reads one webhook request (see the module comment). */
export async function readHookRequest(req: Request, limits: HookRequestLimits): Promise<HookRequest> {
  const base = {
    method: req.method,
    query: queryOf(req.originalUrl, limits.maxFields),
    headers: headersOf(req.rawHeaders),
  };
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limits.maxBytes) throw tooLarge(limits.maxBytes);
  const { type, charset } = mediaType(req.headers['content-type']);
  const none = { ...base, body: undefined, files: [], rawBody: undefined, contentType: type, bytes: 0 };
  if (!hasBody(req)) return none;
  if (type === null)
    throw new PlatformError('unsupported_media_type', `a body needs a Content-Type: ${ACCEPTED}`);
  if (charset !== null && !TEXT_CHARSETS.has(charset))
    throw new PlatformError(
      'unsupported_media_type',
      `the charset ${JSON.stringify(charset)} is not read: send UTF-8`,
    );
  if (type === 'multipart/form-data') {
    const form = await readMultipart(req, limits);
    return {
      ...base,
      body: form.fields,
      files: form.files,
      rawBody: undefined,
      contentType: type,
      bytes: form.bytes,
    };
  }
  const isJson = JSON_TYPES.has(type) || (type.startsWith('application/') && type.endsWith('+json'));
  if (!isJson && type !== 'application/x-www-form-urlencoded' && type !== 'text/plain')
    throw new PlatformError(
      'unsupported_media_type',
      `the Content-Type ${JSON.stringify(type)} is not read: send ${ACCEPTED}`,
    );
  const raw = await readBody(req, limits.maxBytes);
  const text = raw.toString('utf8');
  const read = { ...base, rawBody: text, contentType: type, bytes: raw.length, files: [] };
  if (isJson) return { ...read, body: parseJson(text) };
  if (type === 'text/plain') return { ...read, body: text };
  const pairs = [...new URLSearchParams(text)];
  if (pairs.length > limits.maxFields)
    throw new PlatformError('payload_too_large', `a request carries at most ${limits.maxFields} fields`);
  return { ...read, body: fieldsOf(pairs) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Make's bundle: the body's fields (a body that is no object is `value`), the query string on top of them (it
 * wins on duplicate keys), and, when the options say so, `Headers` and `Method`. With JSON pass-through a JSON
 * body stays one text (`value`). Files are left to the caller.
 */
export function bundleOf(request: HookRequest, options: BundleOptions): Record<string, unknown> {
  const bundle: Record<string, unknown> = {};
  const isJson =
    request.rawBody !== undefined && request.contentType !== null && request.contentType.includes('json');
  if (options.jsonPassThrough && isJson) setOwn(bundle, 'value', request.rawBody);
  else if (isRecord(request.body))
    for (const [key, value] of Object.entries(request.body)) setOwn(bundle, key, value);
  else if (request.body !== undefined) setOwn(bundle, 'value', request.body);
  for (const [key, value] of Object.entries(request.query)) setOwn(bundle, key, value);
  if (options.headers)
    setOwn(
      bundle,
      'Headers',
      request.headers.map((header) => ({ ...header })),
    );
  if (options.method) setOwn(bundle, 'Method', request.method);
  return bundle;
}
