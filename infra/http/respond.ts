import type { Request, Response } from 'express';
import { PlatformError } from '../../contracts/errors';

/**
 * Sends a JSON body as one string, so Node writes headers and body in a single write (express's
 * `res.json` hands Node a Buffer, which costs a second, vectored write per response). Node leaves the
 * body out for HEAD requests.
 */
export function sendJson(
  res: Response,
  status: number,
  body: unknown,
  headers?: Readonly<Record<string, string>>,
): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  if (headers) for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  const text = JSON.stringify(body);
  // Explicit, so a HEAD answer carries the length its GET would have.
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** A handler for a route the API published and then removed: 410, whoever asks. */
export function removedRoute(what: string): (req: Request) => never {
  return (req) => {
    throw new PlatformError(
      'gone',
      `${req.method} ${req.baseUrl}${req.path}: ${what} were removed from the API`,
    );
  };
}
