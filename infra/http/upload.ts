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
 * Feeds `source` to `store` through a pass-through: when `store` gives up early (too large, refused type),
 * the source is unhooked and drained instead of destroyed, so the request can still be answered.
 */
function storeDetached<T>(source: Readable, store: (content: Readable) => Promise<T>): Promise<T> {
  const content = new PassThrough();
  // `pipe` does not pass errors on: a client that disconnects mid-upload must fail the store, not stall it.
  finished(source, (error) => {
    if (error) content.destroy(error);
  });
  source.pipe(content);
  return store(content).catch((error: unknown) => {
    source.unpipe(content);
    source.resume();
    throw error;
  });
}

/**
 * Reads the one file of an upload request and hands it to `store` as it streams in:
 * - `multipart/form-data` with a single part named `file` (its filename and content type are the file's);
 * - any other content type: the body is the file, `nameFromQuery` its name.
 * Options travel as query parameters, so a form with other parts is refused.
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
  return new Promise<T>((resolve, reject) => {
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
    let stored: Promise<T> | undefined;
    let problem: string | undefined;
    parser.on('file', (part, file, info) => {
      if (part !== UPLOAD_PART) {
        problem ??= `unexpected form part ${JSON.stringify(part)}: the file goes in a part named "${UPLOAD_PART}"`;
        file.resume();
        return;
      }
      stored = storeDetached(file, (content) =>
        store({ name: nameFromQuery ?? info.filename ?? '', contentType: info.mimeType, content }),
      );
      // A failed store is answered at once; the rest of the body is drained by the pass-through's owner.
      stored.catch(reject);
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
      req.resume();
      reject(new PlatformError('bad_request', `malformed multipart request: ${error.message}`));
    });
    parser.on('close', () => {
      if (problem !== undefined) {
        const refusal = new PlatformError('bad_request', problem);
        if (!stored) return reject(refusal);
        stored.then(discard).then(
          () => reject(refusal),
          () => reject(refusal),
        );
        return;
      }
      if (!stored) {
        reject(new PlatformError('bad_request', `the form has no file part named "${UPLOAD_PART}"`));
        return;
      }
      stored.then(resolve, reject);
    });
    req.pipe(parser);
  });
}
