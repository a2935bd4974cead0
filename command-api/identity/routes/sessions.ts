import { randomUUID } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import jwt from 'jsonwebtoken';
import { z } from 'zod';
import { PlatformError } from '../../../contracts/errors';
import { hashToken, newCsrfToken, newSessionToken } from '../../../contracts/secrets';
import { streamName } from '../../../contracts/streams';
import { validate } from '../../../contracts/validation';
import { contextOf, principalOf } from '../../../infra/http/context';
import { SESSION_COOKIE, setCookie } from '../../../infra/http/cookies';
import type { CommandDeps } from '../../deps';
import { emailClaimDecider, emailClaimStream } from '../domain/email-claim';
import {
  hasTwoFactor,
  userDecider,
  type SecondFactorProof,
  type UserCommand,
  type UserState,
} from '../domain/user';
import { verifyTotp } from '../totp';
import { recoveryCodeHash } from './two-factor';
import { LoginThrottle, SecondFactorAttempts } from '../login-throttle';
import { hashPassword, verifyPassword } from '../passwords';
import { commandContext, sendResult } from '../../kit/route-context';
import { completeSignIn, loginBody, secondFactorBody, signIn, signOut } from '../../../contracts/api/auth';
import { mount } from '../../../infra/http/operations';
import { userView } from './users';

const PENDING_AUDIENCE = 'records-platform:pending-login';
const PENDING_SECONDS = 300;

/** The one answer for an unknown address and a wrong password (BF-01: nothing tells them apart). */
const REFUSED = 'invalid email or password';

function setSessionCookie(req: Request, res: Response, value: string, maxAgeSeconds: number): void {
  setCookie(req, res, { name: SESSION_COOKIE, value, path: '/api', maxAgeSeconds });
}

/**
 * The first factor is good and the user has two-factor sign-in: no session yet (SE-01), but a short-lived,
 * single-use pending login that only `POST /auth/2fa` accepts, answered as E4031.
 */
export function requireSecondFactor(deps: CommandDeps, res: Response, tenant: string, userId: number): never {
  const pendingToken = jwt.sign({ tnt: tenant }, deps.sealer.derivedKey('pending-login'), {
    algorithm: 'HS256',
    subject: String(userId),
    audience: PENDING_AUDIENCE,
    jwtid: randomUUID(),
    expiresIn: PENDING_SECONDS,
  });
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

/** A fresh session for `user`, recorded by the command `commandFor` makes; answered with cookie and body. */
export async function startSession(
  deps: CommandDeps,
  req: Request,
  res: Response,
  user: UserState,
  commandFor: (session: { sessionHash: string; csrfHash: string; absoluteExpiresAt: string }) => UserCommand,
): Promise<void> {
  const session = newSessionToken();
  const csrfToken = newCsrfToken();
  const absoluteExpiresAt = new Date(Date.now() + deps.sessions.maxAgeMs).toISOString();
  const sessionHash = hashToken(session);
  const result = await deps.handler.handle(
    streamName('user', contextOf(req).tenant, user.userId),
    userDecider,
    commandFor({ sessionHash, csrfHash: hashToken(csrfToken), absoluteExpiresAt }),
    commandContext(
      req,
      {
        tenant: contextOf(req).tenant,
        userId: String(user.userId),
        role: user.role,
        credential: { kind: 'session', id: `session:${sessionHash.slice(0, 16)}` },
      },
      deps.newCommandId(),
    ),
  );
  setSessionCookie(req, res, session, Math.floor(deps.sessions.maxAgeMs / 1000));
  res.setHeader('Cache-Control', 'no-store');
  sendResult(res, 200, result, {
    session,
    csrfToken,
    idleTimeoutSeconds: Math.floor(deps.sessions.idleMs / 1000),
    absoluteExpiresAt,
    user: userView(result.state),
  });
}

/**
 * Session login (`POST /auth`, then `POST /auth/2fa` when the user has two-factor authentication) and logout
 * (`DELETE /auth`).
 */
export function addSessionRoutes(router: Router, deps: CommandDeps): void {
  // Counted in the attempt log that every command-api process shares (BF-01, TOTP-04).
  const attempts = { log: deps.attempts, keySecret: deps.sealer.derivedKey('sign-in-attempts') };
  const throttle = new LoginThrottle(attempts);
  const secondFactorAttempts = new SecondFactorAttempts(attempts);
  const pendingKey = deps.sealer.derivedKey('pending-login');
  // Checked against when the address is unknown, so both refusals take one scrypt.
  const unknownUserHash = hashPassword('no user has this password, it only spends the time a check takes');

  mount(router, signIn, async (req, res) => {
    const { tenant } = contextOf(req);
    const body = validate(loginBody, req.body, 'body');
    const address = req.ip ?? 'unknown';
    const log = deps.logger.child({ tenant, email: body.email, address });
    // From here the attempt counts as a failure, until it turns out to be none.
    const { waitSeconds, succeeded } = await throttle.begin(tenant, body.email, address);
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
      // Counted as a failure when it began.
      log.warn({ event: 'login.failed' }, 'login failed');
      throw new PlatformError('unauthorized', REFUSED);
    }
    await succeeded();
    if (hasTwoFactor(known)) {
      log.info(
        { event: 'login.second-factor-required', userId: known.userId },
        'password accepted; 2FA next',
      );
      requireSecondFactor(deps, res, tenant, known.userId);
    }
    await startSession(deps, req, res, known, (session) => ({ kind: 'StartSession', ...session }));
    log.info({ event: 'login.succeeded', userId: known.userId }, 'login succeeded');
  });

  mount(router, completeSignIn, async (req, res) => {
    const { tenant } = contextOf(req);
    const body = validate(secondFactorBody, req.body, 'body');
    const pending = pendingLoginOf(body.pendingToken, tenant);
    const log = deps.logger.child({ tenant, userId: pending.userId, address: req.ip });
    if (!(await secondFactorAttempts.admit(pending.jti, pending.expiresAt))) {
      log.warn({ event: 'login.second-factor-refused' }, 'second factor refused: too many attempts');
      throw new PlatformError('unauthorized', 'too many wrong codes for this login: sign in again');
    }
    const user = await deps.handler.load(streamName('user', tenant, pending.userId), userDecider);
    const known = user.state.status === 'active' ? user.state : null;
    const proof = known ? secondFactorProof(known, body) : null;
    if (!known || !proof) {
      log.warn({ event: 'login.second-factor-failed' }, 'second factor refused');
      throw new PlatformError('unauthorized', 'the code is wrong, used already, or expired');
    }
    await startSession(deps, req, res, known, (session) => ({
      kind: 'CompleteSecondFactor',
      pendingLogin: pending.jti,
      proof,
      session,
    }));
    log.info({ event: 'login.succeeded', via: proof.kind }, 'login succeeded with a second factor');
  });

  function pendingLoginOf(token: string, tenant: string): { userId: number; jti: string; expiresAt: number } {
    try {
      const claims = jwt.verify(token, pendingKey, { algorithms: ['HS256'], audience: PENDING_AUDIENCE });
      if (typeof claims === 'object' && claims.tnt === tenant && claims.jti && claims.sub)
        return {
          userId: Number(claims.sub),
          jti: claims.jti,
          expiresAt: (claims.exp ?? Math.floor(Date.now() / 1000) + PENDING_SECONDS) * 1000,
        };
    } catch {
      // Any fault (signature, expiry, audience) is the same answer below.
    }
    throw new PlatformError('unauthorized', 'the pending login is invalid or expired: sign in again');
  }

  /** Which device's code (or which recovery code) this is, if any is right. */
  function secondFactorProof(
    user: UserState,
    body: z.infer<typeof secondFactorBody>,
  ): SecondFactorProof | null {
    if (body.recoveryCode !== undefined) {
      const codeHash = recoveryCodeHash(body.recoveryCode);
      return user.twoFactor.recoveryCodeHashes.includes(codeHash) ? { kind: 'recovery', codeHash } : null;
    }
    const now = Math.floor(Date.now() / 1000);
    for (const [deviceId, device] of Object.entries(user.twoFactor.devices)) {
      if (!device.confirmed) continue;
      const timeStep = verifyTotp(
        deps.sealer.open(device.sealedSecret),
        body.code ?? '',
        device.lastTimeStep,
        now,
      );
      if (timeStep !== null) return { kind: 'totp', deviceId, timeStep };
    }
    return null;
  }

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
