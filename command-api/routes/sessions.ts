import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import { PlatformError } from '../../contracts/errors';
import { hashToken, newCsrfToken, newSessionToken } from '../../contracts/secrets';
import { streamName } from '../../contracts/streams';
import { validate } from '../../contracts/validation';
import { contextOf, principalOf } from '../../infra/http/context';
import { SESSION_COOKIE } from '../../infra/http/session-cookie';
import type { CommandDeps } from '../deps';
import { emailClaimDecider, emailClaimStream } from '../domain/email-claim';
import { userDecider } from '../domain/user';
import { LoginThrottle } from '../kit/login-throttle';
import { hashPassword, verifyPassword } from '../kit/passwords';
import { commandContext, sendResult } from './context';
import { userView } from './users';

const login = z.strictObject({
  email: z
    .string()
    .max(254)
    .transform((email) => email.trim().toLowerCase()),
  password: z.string().max(1024),
});

/** The one answer for an unknown address and a wrong password (BF-01: nothing tells them apart). */
const REFUSED = 'invalid email or password';

function setSessionCookie(req: Request, res: Response, value: string, maxAgeSeconds: number): void {
  const attributes = [
    `${SESSION_COOKIE}=${value}`,
    'Path=/api',
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${maxAgeSeconds}`,
    ...(req.secure ? ['Secure'] : []),
  ];
  res.append('Set-Cookie', attributes.join('; '));
}

/** Session login (`POST /auth`) and logout (`DELETE /auth`). */
export function addSessionRoutes(router: Router, deps: CommandDeps): void {
  const throttle = new LoginThrottle();
  // Checked against when the address is unknown, so both refusals take one scrypt.
  const unknownUserHash = hashPassword('no user has this password, it only spends the time a check takes');

  router.post('/auth', async (req, res) => {
    const { tenant } = contextOf(req);
    const body = validate(login, req.body, 'body');
    const address = req.ip ?? 'unknown';
    const log = deps.logger.child({ tenant, email: body.email, address });
    const waitSeconds = throttle.retryAfterSeconds(tenant, body.email, address);
    if (waitSeconds > 0) {
      log.warn({ event: 'login.throttled', retryAfter: waitSeconds }, 'login refused: too many failures');
      res.setHeader('Retry-After', String(waitSeconds));
      throw new PlatformError('rate_limited', `too many failed sign-ins; try again in ${waitSeconds} s`);
    }
    const claim = await deps.handler.load(emailClaimStream(tenant, body.email), emailClaimDecider);
    const user =
      claim.state.userId === null
        ? null
        : await deps.handler.load(streamName('user', tenant, claim.state.userId), userDecider);
    const known = user?.state.status === 'active' ? user.state : null;
    const passwordOk = await verifyPassword(body.password, known?.passwordHash ?? (await unknownUserHash));
    if (!known || !passwordOk) {
      throttle.failed(tenant, body.email, address);
      log.warn({ event: 'login.failed' }, 'login failed');
      throw new PlatformError('unauthorized', REFUSED);
    }
    throttle.succeeded(tenant, body.email, address);
    const session = newSessionToken();
    const csrfToken = newCsrfToken();
    const absoluteExpiresAt = new Date(Date.now() + deps.sessions.maxAgeMs).toISOString();
    const result = await deps.handler.handle(
      streamName('user', tenant, known.userId),
      userDecider,
      {
        kind: 'StartSession',
        sessionHash: hashToken(session),
        csrfHash: hashToken(csrfToken),
        absoluteExpiresAt,
      },
      commandContext(
        req,
        {
          tenant,
          userId: String(known.userId),
          role: known.role,
          credential: { kind: 'session', id: `session:${hashToken(session).slice(0, 16)}` },
        },
        deps.newCommandId(),
      ),
    );
    log.info({ event: 'login.succeeded', userId: known.userId }, 'login succeeded');
    setSessionCookie(req, res, session, Math.floor(deps.sessions.maxAgeMs / 1000));
    res.setHeader('Cache-Control', 'no-store');
    sendResult(res, 200, result, {
      session,
      csrfToken,
      idleTimeoutSeconds: Math.floor(deps.sessions.idleMs / 1000),
      absoluteExpiresAt,
      user: userView(result.state),
    });
  });

  router.delete('/auth', async (req, res) => {
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
