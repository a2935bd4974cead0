import type { Request } from 'express';
import type { CredentialSource, Principal } from '../../contracts/auth';
import { PlatformError } from '../../contracts/errors';
import type { PublicAddress } from './public-address';

/** What every request carries once the HTTP kit has looked at it. */
export interface RequestContext {
  readonly requestId: string;
  readonly tenant: string;
  /** The platform's address as it may publish it (one for the app: never the request's Host as sent). */
  readonly publicAddress: PublicAddress;
  principal?: Principal;
  /** Which of the request's credentials made it (see `/auth/token-priority`). */
  credentialSource?: CredentialSource;
}

/**
 * Kept on the request itself: every request's objects share one shape, so this is a plain property store,
 * where a WeakMap entry per request cost ~3 µs and work for the garbage collector.
 */
const CONTEXT = Symbol('request context');
type RequestWithContext = Request & { [CONTEXT]?: RequestContext };

export function setContext(req: Request, context: RequestContext): void {
  (req as RequestWithContext)[CONTEXT] = context;
}

export function contextOf(req: Request): RequestContext {
  const context = (req as RequestWithContext)[CONTEXT];
  if (!context) throw new Error('request context missing: the HTTP kit middleware did not run');
  return context;
}

/** The authenticated caller, or a 401. */
export function principalOf(req: Request): Principal {
  const principal = contextOf(req).principal;
  if (!principal)
    throw new PlatformError(
      'unauthorized',
      'authentication required: send Authorization: Bearer <token>, or the session cookie (with X-CSRF-Token on writes)',
    );
  return principal;
}
