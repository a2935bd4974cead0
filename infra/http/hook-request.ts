import busboy from 'busboy';
import type { Request } from 'express';
import { finished } from 'node:stream';
import { PlatformError } from '../../contracts/errors';

export interface HookRequestLimits {
  /** Body bytes; 5_242_880 in production. */
  readonly maxBytes: number;
  /** File parts of a multipart body. */
  readonly maxFiles: number;
  /** Fields of a urlencoded body, non-file parts of a multipart body. */
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
  /** From the URL query string; a repeated key gives an array. */
  readonly query: Record<string, string | string[]>;
  /** JSON: any JSON value; urlencoded and multipart: the fields; text: the text; no body: undefined. */
  readonly body: unknown;
  readonly files: readonly HookFile[];
  /** The text of a JSON, urlencoded or text body; undefined for multipart and for no body. */
  readonly rawBody: string | undefined;
  /** The media type without parameters, lower case. */
  readonly contentType: string | null;
  readonly bytes: number;
  /** From `req.rawHeaders`, names as received, in order. */
  readonly headers: ReadonlyArray<{ name: string; value: string }>;
}

export interface BundleOptions {
  readonly headers: boolean;
  readonly method: boolean;
  readonly jsonPassThrough: boolean;
}

const MAX_JSON_DEPTH = 64;
/** Keys a JSON body's objects may have in all (as a form's fields are bounded): a request stays cheap to keep. */
const MAX_JSON_KEYS = 50_000;
const ACCEPTED =
  'application/json (or application/*+json), application/x-www-form-urlencoded, multipart/form-data or text/plain';
const UTF8_NAMES = new Set(['utf-8', 'utf8', 'us-ascii']);

type Fields = Record<string, string | string[]>;

interface Received {
  readonly body: unknown;
  readonly rawBody: string | undefined;
  readonly files: readonly HookFile[];
}

const NO_BODY: Received = { body: undefined, rawBody: undefined, files: [] };

/** How a body's end is reported: once, whichever comes first. */
interface Settle {
  done(received: Received): void;
  fail(error: PlatformError): void;
}

interface BodySink {
  write(chunk: Buffer): void;
  end(): void;
}

/**
 * Own data property even for `__proto__`: plain assignment would call the prototype setter instead.
 * Bundles keep such keys as ordinary own keys (they are data the sender sent), never as prototypes.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Collects repeated keys into arrays; a Map, so no key can reach a prototype. */
class FieldCollector {
  private readonly values = new Map<string, string | string[]>();

  add(key: string, value: string): void {
    const present = this.values.get(key);
    if (present === undefined) this.values.set(key, value);
    else if (Array.isArray(present)) present.push(value);
    else this.values.set(key, [present, value]);
  }

  toRecord(): Fields {
    const record: Fields = {};
    for (const [key, value] of this.values) setOwn(record, key, value);
    return record;
  }
}

/** Query-string parameters as fields: a repeated key gives an array; no key reaches a prototype. */
export function fieldsOf(params: URLSearchParams): Fields {
  const fields = new FieldCollector();
  for (const [key, value] of params) fields.add(key, value);
  return fields.toRecord();
}

function queryOf(req: Request): Fields {
  const url = req.originalUrl || req.url;
  const start = url.indexOf('?');
  return fieldsOf(new URLSearchParams(start < 0 ? '' : url.slice(start + 1)));
}

/** The request's headers as received: names as sent, in order. */
export function headersOf(req: Pick<Request, 'rawHeaders'>): Array<{ name: string; value: string }> {
  const headers: Array<{ name: string; value: string }> = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
    headers.push({ name: req.rawHeaders[i], value: req.rawHeaders[i + 1] });
  return headers;
}

interface ContentType {
  readonly mediaType: string;
  readonly charset: string | undefined;
}

function parseContentType(header: string | undefined): ContentType | null {
  if (header === undefined || header.trim() === '') return null;
  const [mediaType, ...params] = header.split(';');
  let charset: string | undefined;
  for (const param of params) {
    const equals = param.indexOf('=');
    if (equals < 0 || param.slice(0, equals).trim().toLowerCase() !== 'charset') continue;
    const value = param.slice(equals + 1).trim();
    charset = (value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value).toLowerCase();
  }
  return { mediaType: mediaType.trim().toLowerCase(), charset };
}

function isJson(mediaType: string): boolean {
  return (
    mediaType === 'application/json' || (mediaType.startsWith('application/') && mediaType.endsWith('+json'))
  );
}

const tooLarge = (maxBytes: number) =>
  new PlatformError('payload_too_large', `the request body is larger than the limit of ${maxBytes} bytes`);

function decodeUtf8(bytes: Buffer): string {
  try {
    // Fatal: a body that is not UTF-8 is refused rather than silently altered; a leading BOM is dropped.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new PlatformError('bad_request', 'the request body is not valid UTF-8');
  }
}

/**
 * Why a parsed JSON body is refused (nested deeper than `MAX_JSON_DEPTH`, or more than `MAX_JSON_KEYS` keys in
 * all its objects), or null: walks it iteratively and stops at the first container past a limit, before
 * anything costly is done with the body.
 */
function jsonShapeIssue(value: unknown): string | null {
  let keys = 0;
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    if (next.depth + 1 > MAX_JSON_DEPTH)
      return `the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`;
    const children = Object.values(next.value);
    if (!Array.isArray(next.value)) keys += children.length;
    if (keys > MAX_JSON_KEYS) return `the JSON body has more than ${MAX_JSON_KEYS} keys`;
    for (const child of children) pending.push({ value: child, depth: next.depth + 1 });
  }
  return null;
}

function parseJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new PlatformError('malformed_json', `malformed JSON body: ${(error as Error).message}`);
  }
  const issue = jsonShapeIssue(value);
  if (issue !== null) throw new PlatformError('bad_request', issue);
  return value;
}

/** URLSearchParams skips empty `&`-separated sequences: so does this count, taken before parsing. */
function countPairs(text: string): number {
  let count = 0;
  let start = 0;
  while (start <= text.length) {
    const end = text.indexOf('&', start);
    const stop = end < 0 ? text.length : end;
    if (stop > start) count++;
    start = stop + 1;
  }
  return count;
}

/** JSON, urlencoded and text bodies: kept whole (at most maxBytes), parsed at the end. */
function textSink(parse: (text: string) => unknown, settle: Settle): BodySink {
  const chunks: Buffer[] = [];
  return {
    write: (chunk) => chunks.push(chunk),
    end: () => {
      try {
        const text = decodeUtf8(Buffer.concat(chunks));
        settle.done({ body: parse(text), rawBody: text, files: [] });
      } catch (error) {
        settle.fail(error as PlatformError);
      }
    },
  };
}

// Too many fields or files is a 400 (the form breaks a rule of this endpoint), unlike too many bytes (413).
function multipartSink(req: Request, limits: HookRequestLimits, settle: Settle): BodySink {
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      defParamCharset: 'utf8',
      limits: {
        fields: limits.maxFields,
        files: limits.maxFiles,
        // busboy's own defaults (1 MB values, 100-byte names) would truncate silently: the body's byte count
        // bounds fields and files alike.
        fieldSize: limits.maxBytes,
        fieldNameSize: limits.maxBytes,
      },
    });
  } catch (error) {
    throw new PlatformError('bad_request', `malformed multipart request: ${(error as Error).message}`);
  }
  const fields = new FieldCollector();
  const files: Array<{ field: string; name: string; mime: string; chunks: Buffer[] }> = [];
  parser.on('field', (name, value) => fields.add(name ?? '', value));
  parser.on('file', (name, stream, info) => {
    const file = {
      field: name ?? '',
      name: info.filename ?? '',
      mime: info.mimeType,
      chunks: [] as Buffer[],
    };
    files.push(file);
    // A form that ends inside this part fails the parser too: the parser's error is the one reported.
    stream.on('error', () => undefined);
    stream.on('data', (chunk: Buffer) => file.chunks.push(chunk));
  });
  parser.on('fieldsLimit', () =>
    settle.fail(new PlatformError('bad_request', `the form has more than ${limits.maxFields} fields`)),
  );
  parser.on('filesLimit', () =>
    settle.fail(new PlatformError('bad_request', `the form has more than ${limits.maxFiles} files`)),
  );
  parser.on('error', (error: Error) =>
    settle.fail(new PlatformError('bad_request', `malformed multipart request: ${error.message}`)),
  );
  // 'finish' comes after every file stream has ended, so every file has all its bytes.
  parser.on('finish', () =>
    settle.done({
      body: fields.toRecord(),
      rawBody: undefined,
      files: files.map(({ chunks, ...file }) => ({ ...file, data: Buffer.concat(chunks) })),
    }),
  );
  return { write: (chunk) => parser.write(chunk), end: () => parser.end() };
}

/**
 * Picks the reader for the body's type. Called before the first byte is read: when the body is declared
 * non-empty, or when the first chunk of a chunked body arrives (an empty body is never refused for its type).
 */
function sinkFor(
  req: Request,
  type: ContentType | null,
  limits: HookRequestLimits,
  settle: Settle,
): BodySink {
  if (type === null)
    throw new PlatformError('unsupported_media_type', `a request body needs a Content-Type: ${ACCEPTED}`);
  if (type.charset !== undefined && !UTF8_NAMES.has(type.charset))
    throw new PlatformError(
      'unsupported_media_type',
      `unsupported charset ${JSON.stringify(type.charset)}: request bodies are read as UTF-8`,
    );
  const { mediaType } = type;
  if (isJson(mediaType)) return textSink(parseJson, settle);
  if (mediaType === 'text/plain') return textSink((text) => text, settle);
  if (mediaType === 'multipart/form-data') return multipartSink(req, limits, settle);
  if (mediaType === 'application/x-www-form-urlencoded')
    return textSink((text) => {
      if (countPairs(text) > limits.maxFields)
        throw new PlatformError('bad_request', `the form has more than ${limits.maxFields} fields`);
      return fieldsOf(new URLSearchParams(text));
    }, settle);
  throw new PlatformError(
    'unsupported_media_type',
    `unsupported content type ${JSON.stringify(mediaType)}: ${ACCEPTED}`,
  );
}

/**
 * Streams the body into the sink `open` gives, counting bytes. Settles once: with the sink's result, or with
 * the first failure (too many bytes, a sink's refusal, a client that hangs up before the body's end).
 */
function readBody(
  req: Request,
  maxBytes: number,
  declared: number,
  open: (settle: Settle) => BodySink,
): Promise<{ received: Received; bytes: number }> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let bytes = 0;
    let sink: BodySink | undefined;
    // Parsing stops at once; what still arrives is discarded, not left unread: a socket closed with unread
    // bytes is reset, and a reset can wipe the answer from the client's buffer before the client reads it.
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.resume();
    };
    const settle: Settle = {
      done: (received) => {
        if (settled) return;
        settled = true;
        stop();
        resolve({ received, bytes });
      },
      fail: (error) => {
        if (settled) return;
        settled = true;
        stop();
        reject(error);
      },
    };
    const onData = (chunk: Buffer) => {
      if (settled) return;
      bytes += chunk.length;
      if (bytes > maxBytes) return settle.fail(tooLarge(maxBytes));
      try {
        sink ??= open(settle);
      } catch (error) {
        return settle.fail(error as PlatformError);
      }
      sink.write(chunk);
    };
    const onEnd = () => {
      if (sink === undefined) settle.done(NO_BODY);
      else sink.end();
    };
    if (declared > 0) {
      try {
        sink = open(settle);
      } catch (error) {
        // Refused from its headers: no byte read.
        return reject(error);
      }
    }
    // The request keeps a listener, so an error after settling (a client that hangs up later) is never unheard.
    req.on('error', () => undefined);
    finished(req, (error) => {
      if (error) settle.fail(new PlatformError('bad_request', 'the request body ended early'));
    });
    req.on('data', onData);
    req.on('end', onEnd);
  });
}

/**
 * Reads an incoming webhook request from a raw express request (no body parser before it).
 * Refusals are PlatformErrors: 413 for a body over `maxBytes` (declared: before reading any byte; streamed:
 * as soon as the count passes it), 415 for a missing or unsupported content type or charset of a non-empty
 * body, 400 for malformed bodies, too many fields or files, and bodies that end early.
 * After a refusal the rest of the body may still be on its way (`req.complete` is false): it is discarded as it
 * arrives (Node does the same for a body never read), bounded by the server's request and keep-alive timeouts.
 * Answer without `Connection: close`: closing makes a client that is still sending see a broken pipe or a
 * reset instead of the answer.
 */
export async function readHookRequest(req: Request, limits: HookRequestLimits): Promise<HookRequest> {
  const lengthHeader = req.headers['content-length'];
  const declared = lengthHeader === undefined ? 0 : Number(lengthHeader);
  if (declared > limits.maxBytes) throw tooLarge(limits.maxBytes);
  const type = parseContentType(req.headers['content-type']);
  // Node gives a request without Content-Length or Transfer-Encoding an empty body.
  const hasBody = declared > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && (req.destroyed || req.readableEnded))
    throw new PlatformError('bad_request', 'the request body ended early');
  const { received, bytes } = hasBody
    ? await readBody(req, limits.maxBytes, declared, (settle) => sinkFor(req, type, limits, settle))
    : { received: NO_BODY, bytes: 0 };
  return {
    method: req.method,
    query: queryOf(req),
    ...received,
    contentType: type?.mediaType ?? null,
    bytes,
    headers: headersOf(req),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * One bundle as Make builds it: the body's fields (an array, scalar or text body goes under `value`; with
 * `jsonPassThrough` a JSON body goes under `value` as the text received), then the query string on top (the
 * query wins on duplicate keys), then `Headers` (names lower-cased, in order) and `Method` when asked.
 * Keys like `__proto__` stay own data keys of the bundle; they never set its prototype. Files are not added.
 */
export function bundleOf(request: HookRequest, options: BundleOptions): Record<string, unknown> {
  const bundle: Record<string, unknown> = {};
  if (options.jsonPassThrough && request.contentType !== null && isJson(request.contentType)) {
    if (request.rawBody !== undefined) setOwn(bundle, 'value', request.rawBody);
  } else if (isRecord(request.body)) {
    for (const key of Object.keys(request.body)) setOwn(bundle, key, request.body[key]);
  } else if (request.body !== undefined) {
    setOwn(bundle, 'value', request.body);
  }
  for (const [key, value] of Object.entries(request.query)) setOwn(bundle, key, value);
  if (options.headers)
    setOwn(
      bundle,
      'Headers',
      request.headers.map(({ name, value }) => ({ name: name.toLowerCase(), value })),
    );
  if (options.method) setOwn(bundle, 'Method', request.method);
  return bundle;
}
