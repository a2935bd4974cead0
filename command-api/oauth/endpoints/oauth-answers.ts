import type { Request, RequestHandler, Response } from 'express';
import { OAuthError } from '../../../contracts/oauth';
import { sendJson } from '../../../infra/http/respond';

/** Token endpoint answers are never cached (RFC 6749 §5.1). */
export function noStore(res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
}

/** An OAuth refusal as RFC 6749 §5.2 shapes it: `{error, error_description}`. */
export function sendOAuthError(res: Response, error: OAuthError, basicAuth = false): void {
  if (error.status === 401 && basicAuth) res.setHeader('WWW-Authenticate', 'Basic realm="records-platform"');
  if (error.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(error.retryAfterSeconds));
  noStore(res);
  sendJson(res, error.status, { error: error.code, error_description: error.message });
}

/** An endpoint whose OAuth refusals are answered in OAuth's shape (other errors take the platform's). */
export const oauthEndpoint =
  (handler: (req: Request, res: Response) => Promise<void>): RequestHandler =>
  async (req, res) => {
    try {
      await handler(req, res);
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      sendOAuthError(res, error, /^Basic /i.test(req.headers.authorization ?? ''));
    }
  };
