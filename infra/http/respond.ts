import type { Response } from 'express';

/** Looks at every JSON answer before it is sent (the tests check answers against their contracts). */
export type AnswerCheck = (res: Response, status: number, body: unknown) => void;
let answerCheck: AnswerCheck | undefined;

/** Sets (or, with undefined, removes) the check `sendJson` runs on every answer. */
export function checkAnswersWith(check: AnswerCheck | undefined): void {
  answerCheck = check;
}

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
  answerCheck?.(res, status, body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  if (headers) for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  const text = JSON.stringify(body);
  // Explicit, so a HEAD answer carries the length its GET would have.
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
