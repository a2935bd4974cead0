import busboy from 'busboy';
import type { Request } from 'express';
import { finished, PassThrough, type Readable } from 'node:stream';
import { PlatformError } from '../../contracts/errors';

/** One uploaded file as it arrives: its declared name and type, and its bytes as a stream. */
export interface IncomingFile {
  /** The name the client gave (multipart `filename`, or the `name` query parameter); may be empty. */
  readonly name: string;
  readonly contentType: string;
  readonly content: Readable;
}

/** The form part that carries the file in a `multipart/form-data` upload. */
export const UPLOAD_PART = 'file';

/**
 * Feeds `source` to `store` through a pass-through that always has an error listener, so a source that fails
 * at any moment (a client that hangs up, a form that ends inside the file) fails the store and never reaches
 * an unheard `'error'`: a store's pipeline that joins an already failed stream fails with its error.
 * When `store` gives up early (too large, refused type), the source is unhooked and drained instead of
 * destroyed, so the request can still be answered. A failed source is the client's fault: a 400.
 */
async function storeDetached<T>(source: Readable, store: (content: Readable) => Promise<T>): Promise<T> {
  const content = new PassThrough();
  content.on('error', () => undefined);
  let sourceError: Error | undefined;
  // `pipe` does not pass errors on, nor a client that disconnects mid-upload: both must fail the store. The
  // listener stays after a refusal: the drained source may still fail (a form that ends inside this part).
  finished(source, (error) => {
    if (!error) return;
    sourceError = error;
    content.destroy(error);
  });
  source.pipe(content);
  try {
    return await store(content);
  } catch (error) {
    source.unpipe(content);
    content.destroy();
    if (!source.destroyed) source.resume();
    if (sourceError && !(error instanceof PlatformError))
      throw new PlatformError('bad_request', `the upload ended before the file did: ${sourceError.message}`);
    throw error;
  }
}

/**
 * Reads the one file of an upload request and hands it to `store` as it streams in:
 * - `multipart/form-data` with a single part named `file` (its filename and content type are the file's);
 * - any other content type: the body is the file, `nameFromQuery` its name.
 * Options travel as query parameters, so a form with other parts is refused. Whatever goes wrong (a malformed
 * or unfinished form, a client that hangs up), the promise settles once, and only after a stored file that
 * will not be used has been discarded.
 */
export function receiveFile<T>(
  req: Request,
  nameFromQuery: string | undefined,
  store: (file: IncomingFile) => Promise<T>,
  /** Undoes a successful `store` when the request turns out to be malformed after the file. */
  discard: (stored: T) => Promise<void>,
): Promise<T> {
  const contentType = req.headers['content-type'];
  if (!contentType)
    throw new PlatformError(
      'unsupported_media_type',
      'an upload needs a Content-Type: multipart/form-data, or the type of the file sent as the body',
    );
  if (!req.is('multipart/form-data')) {
    return storeDetached(req, (content) => store({ name: nameFromQuery ?? '', contentType, content }));
  }
  let parser: busboy.Busboy;
  try {
    // Browsers send file names as raw UTF-8.
    parser = busboy({
      headers: req.headers,
      defParamCharset: 'utf8',
      limits: { files: 1, fields: 0 },
    });
  } catch (error) {
    throw new PlatformError('bad_request', `malformed multipart request: ${(error as Error).message}`);
  }
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let stored: Promise<T> | undefined;
    let problem: string | undefined;
    const succeed = (value: T) => {
      if (settled) return void discard(value).catch(() => undefined);
      settled = true;
      resolve(value);
    };
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      reject(error);
    };
    /** Refuses the request once the file (if any) is stored or has failed, removing a stored one. */
    const refuse = (refusal: PlatformError) => {
      if (!stored) return fail(refusal);
      stored.then(discard).then(
        () => fail(refusal),
        () => fail(refusal),
      );
    };
    parser.on('file', (part, file, info) => {
      if (part !== UPLOAD_PART) {
        problem ??= `unexpected form part ${JSON.stringify(part)}: the file goes in a part named "${UPLOAD_PART}"`;
        // A form that ends inside this part fails it and the parser alike: the parser's error is the one reported.
        file.on('error', () => undefined);
        file.resume();
        return;
      }
      stored = storeDetached(file, (content) =>
        store({ name: nameFromQuery ?? info.filename ?? '', contentType: info.mimeType, content }),
      );
      // A refused file is answered at once; the rest of the body is drained.
      stored.catch(fail);
    });
    parser.on('field', (part) => {
      problem ??= `unexpected form field ${JSON.stringify(part)}: options go in the query string`;
    });
    const tooMany = () => {
      problem ??= `an upload carries one form part, named "${UPLOAD_PART}"`;
    };
    parser.on('filesLimit', tooMany);
    parser.on('fieldsLimit', tooMany);
    parser.on('error', (error: Error) => {
      req.unpipe(parser);
      if (!req.destroyed) req.resume();
      refuse(new PlatformError('bad_request', `malformed multipart request: ${error.message}`));
    });
    parser.on('finish', () => {
      if (problem !== undefined) return refuse(new PlatformError('bad_request', problem));
      if (!stored)
        return fail(new PlatformError('bad_request', `the form has no file part named "${UPLOAD_PART}"`));
      stored.then(succeed, fail);
    });
    // `pipe` does not end the parser when the client hangs up mid-body: the parser must fail, and its file too.
    finished(req, (error) => {
      if (error) parser.destroy(error);
    });
    req.pipe(parser);
  });
}
