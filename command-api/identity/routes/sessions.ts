import type { Request, Response, Router } from 'express';
import { PlatformError } from '../../../contracts/errors';
import { validate } from '../../../contracts/validation';
import { contextOf, principalOf } from '../../../infra/http/context';
import { SESSION_COOKIE, setCookie } from '../../../infra/http/cookies';
import type { CommandDeps } from '../../deps';
import { userDecider } from '../domain/user';
import { streamName } from '../../../contracts/streams';
import { PENDING_SECONDS, signInSequence, type OpenedSession, type SignInContext } from '../commands';
import { commandContext, sendResult } from '../../kit/route-context';
import { completeSignIn, loginBody, secondFactorBody, signIn, signOut } from '../../../contracts/api/auth';
import { mount } from '../../../infra/http/operations';
import { userView } from './users';

function setSessionCookie(req: Request, res: Response, value: string, maxAgeSeconds: number): void {
  setCookie(req, res, { name: SESSION_COOKIE, value, path: '/api', maxAgeSeconds });
}

/** The context of this request's sign-in command: the new session is its actor. */
export const signInContextOf =
  (req: Request, deps: CommandDeps): SignInContext =>
  (sessionPrincipal) =>
    commandContext(req, sessionPrincipal, deps.newCommandId());

/** No session yet: the pending login (`newPendingLogin`) for `POST /auth/2fa`, answered as E4031. */
export function requireSecondFactor(res: Response, pendingToken: string): never {
  res.setHeader('Cache-Control', 'no-store');
  throw new PlatformError(
    'two_factor_required',
    'two-factor authentication is on: send a code to POST /auth/2fa',
    {
      pendingToken,
      expiresIn: PENDING_SECONDS,
    },
  );
}

/** A session just opened, answered with its cookie and in the body. */
export function sendSession(req: Request, res: Response, deps: CommandDeps, opened: OpenedSession): void {
  setSessionCookie(req, res, opened.session, Math.floor(deps.sessions.maxAgeMs / 1000));
  res.setHeader('Cache-Control', 'no-store');
  sendResult(res, 200, opened.result, {
    session: opened.session,
    csrfToken: opened.csrfToken,
    idleTimeoutSeconds: Math.floor(deps.sessions.idleMs / 1000),
    absoluteExpiresAt: opened.absoluteExpiresAt,
    user: userView(opened.result.state),
  });
}

/**
 * Session login (`POST /auth`, then `POST /auth/2fa` when the user has two-factor authentication) and logout
 * (`DELETE /auth`).
 */
export function addSessionRoutes(router: Router, deps: CommandDeps): void {
  const signIns = signInSequence(deps);

  mount(router, signIn, async (req, res) => {
    const { tenant } = contextOf(req);
    const body = validate(loginBody, req.body, 'body');
    const outcome = await signIns.withPassword(
      { tenant, ...body, address: req.ip ?? 'unknown' },
      signInContextOf(req, deps),
    );
    if (outcome.kind === 'throttled') {
      res.setHeader('Retry-After', String(outcome.retryAfterSeconds));
      throw new PlatformError(
        'rate_limited',
        `too many failed sign-ins; try again in ${outcome.retryAfterSeconds} s`,
      );
    }
    if (outcome.kind === 'second-factor') requireSecondFactor(res, outcome.pendingToken);
    sendSession(req, res, deps, outcome.session);
  });

  mount(router, completeSignIn, async (req, res) => {
    const { tenant } = contextOf(req);
    const body = validate(secondFactorBody, req.body, 'body');
    const opened = await signIns.withSecondFactor(
      { tenant, address: req.ip, ...body },
      signInContextOf(req, deps),
    );
    sendSession(req, res, deps, opened);
  });

  mount(router, signOut, async (req, res) => {
    const principal = principalOf(req);
    if (principal.credential.kind !== 'session' || principal.credential.sessionHash === undefined)
      throw new PlatformError(
        'bad_request',
        'this request is not signed in with a session (DELETE /auth ends one)',
      );
    const result = await deps.handler.handle(
      streamName('user', principal.tenant, Number(principal.userId)),
      userDecider,
      { kind: 'EndSession', sessionHash: principal.credential.sessionHash },
      commandContext(req, principal, deps.newCommandId()),
    );
    setSessionCookie(req, res, '', 0);
    sendResult(res, 200, result, { signedOut: true });
  });
}
