import { personalSubject } from '../../contracts/personal-data';
import { createHash, createPublicKey, randomBytes, randomUUID, type JsonWebKey } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { z } from 'zod';
import type { createTokenBody, createUserBody, setPasswordBody } from '../../contracts/api/users';
import type { secondFactorBody } from '../../contracts/api/auth';
import { isAdmin, type Principal } from '../../contracts/auth';
import { PlatformError } from '../../contracts/errors';
import {
  verifiedEmailOf,
  type ProviderEndpoints,
  type ProviderSettings,
  type SocialProvider,
} from '../../contracts/social';
import { uuidV5 } from '../../contracts/ids';
import { hashToken, newApiToken, newCsrfToken, newSessionToken, tokenDisplay } from '../../contracts/secrets';
import { streamName } from '../../contracts/streams';
import type { Logger } from '../../infra/logging';
import type { CommandDeps } from '../deps';
import type { Caller } from '../kit/caller';
import {
  withCommandId,
  type CommandContext,
  type CommandOrigin,
  type CommandResult,
  type HandleOptions,
} from '../kit/handler';
import { requestHash } from '../kit/idempotency';
import { revokeGrantsOf } from '../oauth/commands';
import { emailClaimDecider, emailClaimStream } from './domain/email-claim';
import {
  hasTwoFactor,
  userDecider,
  type ActingUser,
  type SecondFactorProof,
  type UserCommand,
  type UserState,
} from './domain/user';
import { LoginThrottle, SecondFactorAttempts } from './login-throttle';
import { hashPassword, verifyPassword } from './passwords';
import { newTotpSecret, verifyTotp } from './totp';

// Accounts

/** The acting user and the rights of the credential in use, for rules that depend on who asks. */
export function actingUserOf(principal: Principal): ActingUser {
  const userId = Number(principal.userId);
  return {
    userId: Number.isSafeInteger(userId) ? userId : null,
    credentialPermissions: principal.credentialPermissions,
  };
}

/** The session making a change to its own account stays; the account's other sessions end (SE-05). */
export function keptSession(principal: Principal, self: boolean): { keepSession?: string } {
  const sessionHash = principal.credential.sessionHash;
  return self && sessionHash !== undefined ? { keepSession: sessionHash } : {};
}

/** A new user of the principal's system; the address is claimed first, since its stream is the uniqueness rule. */
export async function registerUser(
  deps: CommandDeps,
  caller: Caller,
  body: z.infer<typeof createUserBody>,
  idempotencyKey: string | undefined,
): Promise<{ userId: number; result: CommandResult<UserState> }> {
  const { principal, origin } = caller;
  const { tenant } = principal;
  const identity = await deps.idempotency.identify(
    tenant,
    principal.credential.id,
    idempotencyKey,
    () => requestHash('POST', '/user', body),
    () => deps.ids.next(tenant, 'user'),
  );
  const userId = identity.entityId!;
  // A claim whose user never came to be is stale.
  const claimStream = emailClaimStream(tenant, body.email);
  const claim = await deps.handler.load(claimStream, emailClaimDecider);
  const holder =
    claim.state.userId === null
      ? null
      : await deps.handler.load(streamName('user', tenant, claim.state.userId), userDecider);
  await deps.handler.handle(
    claimStream,
    emailClaimDecider,
    {
      kind: 'ClaimEmail',
      email: body.email,
      userId,
      // An erased user no longer holds an address: it may be registered again.
      holderExists: holder !== null && holder.state.status !== 'none' && holder.state.erased !== true,
    },
    // Its own command id: event ids derive from it, and the user's events come from the request's.
    withCommandId(origin, uuidV5(`email-claim:${identity.commandId}`)),
  );
  const result = await deps.handler.handle(
    streamName('user', tenant, userId),
    userDecider,
    {
      kind: 'RegisterUser',
      userId,
      email: body.email,
      name: body.name,
      role: body.role,
      passwordHash: body.password === undefined ? null : await hashPassword(body.password),
      ...(body.permissions !== undefined && { permissions: body.permissions }),
    },
    withCommandId(origin, identity.commandId),
    identity.mayBeRepeat ? { mayBeRepeat: true } : { newStream: true },
  );
  return { userId, result };
}

/**
 * Erases user `userId`'s profile data (crypto-shredding): destroys their data key first (nothing sealed for
 * them opens from then on), then deactivates them (sessions, tokens and OAuth grants end) and records the
 * erasure. Repeating it finishes the same erasure and answers the same.
 */
export async function eraseUser(
  deps: CommandDeps,
  caller: Caller,
  userId: number,
  reason: string,
): Promise<CommandResult<UserState>> {
  const { principal, origin } = caller;
  const stream = streamName('user', principal.tenant, userId);
  const before = await deps.handler.load(stream, userDecider);
  const command = { kind: 'EraseUser', caller: actingUserOf(principal), reason } as const;
  // The decider says whether there is anything to erase (and refuses first what it refuses: oneself).
  if (userDecider.decide(command, before.state).length > 0)
    await deps.personalData.erase(personalSubject('user', principal.tenant, userId), Date.now());
  const result = await deps.handler.handle(
    stream,
    userDecider,
    command,
    withCommandId(origin, deps.newCommandId()),
  );
  await revokeGrantsOf(deps, userId, origin);
  return result;
}

/** Deactivates or activates user `userId`; a deactivation revokes the OAuth grants they gave (OA-29). */
export async function setUserActive(
  deps: CommandDeps,
  caller: Caller,
  userId: number,
  active: boolean,
  options: HandleOptions,
): Promise<CommandResult<UserState>> {
  const { principal, origin } = caller;
  const result = await deps.handler.handle(
    streamName('user', principal.tenant, userId),
    userDecider,
    active ? { kind: 'ActivateUser' } : { kind: 'DeactivateUser', caller: actingUserOf(principal) },
    withCommandId(origin, deps.newCommandId()),
    options,
  );
  if (!active) await revokeGrantsOf(deps, result.state.userId, origin);
  return result;
}

/**
 * Sets user `userId`'s password: users changing their own (`self`, not administrators) give the current one.
 * The session making the change stays; the user's OAuth grants are revoked (OA-29).
 */
export async function changePassword(
  deps: CommandDeps,
  caller: Caller,
  userId: number,
  self: boolean,
  body: z.infer<typeof setPasswordBody>,
): Promise<CommandResult<UserState>> {
  const { principal, origin } = caller;
  const stream = streamName('user', principal.tenant, userId);
  if (self && !isAdmin(principal)) {
    const user = await deps.handler.load(stream, userDecider);
    if (
      body.currentPassword === undefined ||
      !(await verifyPassword(body.currentPassword, user.state.passwordHash))
    )
      throw new PlatformError('forbidden', 'the current password is missing or wrong');
  }
  const result = await deps.handler.handle(
    stream,
    userDecider,
    { kind: 'SetPassword', passwordHash: await hashPassword(body.password), ...keptSession(principal, self) },
    withCommandId(origin, deps.newCommandId()),
  );
  await revokeGrantsOf(deps, userId, origin);
  return result;
}

// Private API tokens

/**
 * A new private API token of user `userId`. Only its hash is kept: a repeated request (same Idempotency-Key)
 * cannot show the value again, and must not mint a second token, so it is refused.
 */
export async function issueApiToken(
  deps: CommandDeps,
  caller: Caller,
  userId: number,
  body: z.infer<typeof createTokenBody>,
  idempotencyKey: string | undefined,
) {
  const { principal, origin } = caller;
  const identity = await deps.idempotency.identify(
    principal.tenant,
    principal.credential.id,
    idempotencyKey,
    () => requestHash('POST', `/auth/${userId}/token`, body),
    null,
  );
  const value = newApiToken();
  const tokenId = uuidV5(`api-token:${identity.commandId}`);
  const token = {
    tokenId,
    name: body.name,
    tokenHash: hashToken(value),
    ...tokenDisplay(value),
    permissions: body.permissions ?? null,
    expiresAt: body.expiresAt ?? null,
    bootstrap: false,
  };
  const result = await deps.handler.handle(
    streamName('user', principal.tenant, userId),
    userDecider,
    { kind: 'IssueApiToken', token, caller: actingUserOf(principal) },
    withCommandId(origin, identity.commandId),
    identity.mayBeRepeat ? { mayBeRepeat: true } : {},
  );
  if (result.replayed)
    throw new PlatformError(
      'conflict',
      `token ${tokenId} was created by the first request with this Idempotency-Key; its value is shown only once`,
    );
  return { result, token, value };
}

// Two-factor authentication

const RECOVERY_CODES = 10;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** `xxxx-xxxx-xxxx-xxxx`: 80 random bits; compared case- and dash-insensitively. */
function newRecoveryCode(): string {
  const bytes = randomBytes(16);
  const text = [...bytes].map((byte) => BASE32[byte % 32]).join('');
  return text.match(/.{4}/g)!.join('-');
}

export function recoveryCodeHash(code: string): string {
  return createHash('sha256')
    .update(code.toLowerCase().replace(/[^a-z2-7]/g, ''))
    .digest('hex');
}

function newRecoveryCodes(): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
  return { codes, hashes: codes.map(recoveryCodeHash) };
}

/**
 * User `userId`, whose two-factor settings are about to change: active, and when the user changes them
 * (`self`), signed in with a password that they give again (SE-05).
 */
export async function accountForTwoFactorChange(
  deps: CommandDeps,
  tenant: string,
  userId: number,
  self: boolean,
  password: string | undefined,
): Promise<{ user: UserState; stream: string }> {
  const stream = streamName('user', tenant, userId);
  const { state } = await deps.handler.load(stream, userDecider);
  if (state.status !== 'active') throw new PlatformError('not_found', `user ${userId} not found`);
  if (self) {
    if (state.passwordHash === null)
      throw new PlatformError(
        'conflict',
        'two-factor authentication protects password sign-in: set a password first',
      );
    if (password === undefined || !(await verifyPassword(password, state.passwordHash)))
      throw new PlatformError('forbidden', 'the password is missing or wrong');
  }
  return { user: state, stream };
}

/** A new authenticator of the user of `stream`, unconfirmed until a code of it comes back. */
export async function enrolDevice(
  deps: CommandDeps,
  stream: string,
  name: string,
  origin: CommandOrigin,
): Promise<{ result: CommandResult<UserState>; deviceId: string; secret: string }> {
  const secret = newTotpSecret();
  const commandId = deps.newCommandId();
  const deviceId = uuidV5(`2fa-device:${commandId}`);
  const result = await deps.handler.handle(
    stream,
    userDecider,
    { kind: 'AddTwoFactorDevice', deviceId, name, sealedSecret: deps.sealer.seal(secret) },
    withCommandId(origin, commandId),
  );
  return { result, deviceId, secret };
}

/**
 * Confirms the principal's own device `deviceId` by a code of it. The first confirmed device comes with
 * recovery codes (`recoveryCodes`, null when the user had them already); the user's OAuth grants are revoked.
 */
export async function confirmDevice(
  deps: CommandDeps,
  caller: Caller,
  userId: number,
  deviceId: string,
  code: string,
): Promise<{ result: CommandResult<UserState>; recoveryCodes: string[] | null }> {
  const { principal, origin } = caller;
  const stream = streamName('user', principal.tenant, userId);
  const { state } = await deps.handler.load(stream, userDecider);
  const device = state.twoFactor.devices[deviceId];
  if (!device) throw new PlatformError('not_found', `user ${userId} has no device ${deviceId}`);
  const timeStep = verifyTotp(deps.sealer.open(device.sealedSecret), code, -1, Math.floor(Date.now() / 1000));
  if (timeStep === null)
    throw new PlatformError(
      'validation_failed',
      'the code does not match: check the device clock and try the next code',
    );
  const recovery = newRecoveryCodes();
  const result = await deps.handler.handle(
    stream,
    userDecider,
    {
      kind: 'ConfirmTwoFactorDevice',
      deviceId,
      timeStep,
      recoveryCodeHashes: recovery.hashes,
      ...keptSession(principal, true),
    },
    withCommandId(origin, deps.newCommandId()),
  );
  await revokeGrantsOf(deps, userId, origin);
  const issued = result.state.twoFactor.recoveryCodeHashes[0] === recovery.hashes[0];
  return { result, recoveryCodes: issued ? recovery.codes : null };
}

/** Removes device `deviceId` of the user of `stream`; the user's OAuth grants are revoked. */
export async function removeDevice(
  deps: CommandDeps,
  caller: Caller,
  stream: string,
  deviceId: string,
  self: boolean,
): Promise<CommandResult<UserState>> {
  const { principal, origin } = caller;
  const result = await deps.handler.handle(
    stream,
    userDecider,
    { kind: 'RemoveTwoFactorDevice', deviceId, ...keptSession(principal, self) },
    withCommandId(origin, deps.newCommandId()),
  );
  await revokeGrantsOf(deps, result.state.userId, origin);
  return result;
}

/** New recovery codes for the user of `stream`; the former ones stop working. */
export async function issueRecoveryCodes(
  deps: CommandDeps,
  stream: string,
  origin: CommandOrigin,
): Promise<{ result: CommandResult<UserState>; recoveryCodes: string[] }> {
  const recovery = newRecoveryCodes();
  const result = await deps.handler.handle(
    stream,
    userDecider,
    { kind: 'IssueRecoveryCodes', codeHashes: recovery.hashes },
    withCommandId(origin, deps.newCommandId()),
  );
  return { result, recoveryCodes: recovery.codes };
}

// Sessions and sign-in

const PENDING_AUDIENCE = 'records-platform:pending-login';
export const PENDING_SECONDS = 300;

/** The one answer for an unknown address and a wrong password (BF-01: nothing tells them apart). */
const REFUSED = 'invalid email or password';

/** A session just opened: the command's result, and the secrets its holder gets (this once). */
export interface OpenedSession {
  readonly result: CommandResult<UserState>;
  readonly session: string;
  readonly csrfToken: string;
  readonly absoluteExpiresAt: string;
}

/** A sign-in command's context, by the new session's principal (the session is its actor). */
export type SignInContext = (sessionPrincipal: Principal) => CommandContext;

/**
 * A fresh session for `user`, recorded by the command `commandFor` makes, in the context `signInContext`
 * gives the session's own principal.
 */
export async function openSession(
  deps: CommandDeps,
  tenant: string,
  user: UserState,
  commandFor: (session: { sessionHash: string; csrfHash: string; absoluteExpiresAt: string }) => UserCommand,
  signInContext: SignInContext,
): Promise<OpenedSession> {
  const session = newSessionToken();
  const csrfToken = newCsrfToken();
  const absoluteExpiresAt = new Date(Date.now() + deps.sessions.maxAgeMs).toISOString();
  const sessionHash = hashToken(session);
  const result = await deps.handler.handle(
    streamName('user', tenant, user.userId),
    userDecider,
    commandFor({ sessionHash, csrfHash: hashToken(csrfToken), absoluteExpiresAt }),
    signInContext({
      tenant,
      userId: String(user.userId),
      role: user.role,
      credential: { kind: 'session', id: `session:${sessionHash.slice(0, 16)}` },
    }),
  );
  return { result, session, csrfToken, absoluteExpiresAt };
}

/**
 * The first factor is good and the user has two-factor sign-in: no session yet (SE-01), but a short-lived,
 * single-use pending login that only `POST /auth/2fa` accepts.
 */
export function newPendingLogin(deps: Pick<CommandDeps, 'sealer'>, tenant: string, userId: number): string {
  return jwt.sign({ tnt: tenant }, deps.sealer.derivedKey('pending-login'), {
    algorithm: 'HS256',
    subject: String(userId),
    audience: PENDING_AUDIENCE,
    jwtid: randomUUID(),
    expiresIn: PENDING_SECONDS,
  });
}

/** How a password sign-in ends: refused for a while, a second factor to give, or a session. */
export type PasswordSignIn =
  | { readonly kind: 'throttled'; readonly retryAfterSeconds: number }
  | { readonly kind: 'second-factor'; readonly pendingToken: string }
  | { readonly kind: 'signed-in'; readonly session: OpenedSession };

/**
 * Session sign-in: the password (throttled per address and client, BF-01), then the second factor for users
 * who have one (each pending login takes a few codes, TOTP-04). Attempts are counted in the attempt log that
 * every command-api process shares.
 */
export function signInSequence(deps: CommandDeps) {
  const attempts = { log: deps.attempts, keySecret: deps.sealer.derivedKey('sign-in-attempts') };
  const throttle = new LoginThrottle(attempts);
  const secondFactorAttempts = new SecondFactorAttempts(attempts);
  const pendingKey = deps.sealer.derivedKey('pending-login');
  // Checked against when the address is unknown, so both refusals take one scrypt.
  const unknownUserHash = hashPassword('no user has this password, it only spends the time a check takes');

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

  return {
    async withPassword(
      attempt: { tenant: string; email: string; password: string; address: string },
      signInContext: SignInContext,
    ): Promise<PasswordSignIn> {
      const { tenant, email, address } = attempt;
      const log = deps.logger.child({ tenant, email, address });
      // From here the attempt counts as a failure, until it turns out to be none.
      const { waitSeconds, succeeded } = await throttle.begin(tenant, email, address);
      if (waitSeconds > 0) {
        log.warn({ event: 'login.throttled', retryAfter: waitSeconds }, 'login refused: too many failures');
        return { kind: 'throttled', retryAfterSeconds: waitSeconds };
      }
      const claim = await deps.handler.load(emailClaimStream(tenant, email), emailClaimDecider);
      const user =
        claim.state.userId === null
          ? null
          : await deps.handler.load(streamName('user', tenant, claim.state.userId), userDecider);
      const known = user?.state.status === 'active' ? user.state : null;
      const passwordOk = await verifyPassword(
        attempt.password,
        known?.passwordHash ?? (await unknownUserHash),
      );
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
        return { kind: 'second-factor', pendingToken: newPendingLogin(deps, tenant, known.userId) };
      }
      const session = await openSession(
        deps,
        tenant,
        known,
        (opened) => ({ kind: 'StartSession', ...opened }),
        signInContext,
      );
      log.info({ event: 'login.succeeded', userId: known.userId }, 'login succeeded');
      return { kind: 'signed-in', session };
    },

    async withSecondFactor(
      attempt: { tenant: string; address: string | undefined } & z.infer<typeof secondFactorBody>,
      signInContext: SignInContext,
    ): Promise<OpenedSession> {
      const { tenant } = attempt;
      const pending = pendingLoginOf(attempt.pendingToken, tenant);
      const log = deps.logger.child({ tenant, userId: pending.userId, address: attempt.address });
      if (!(await secondFactorAttempts.admit(pending.jti, pending.expiresAt))) {
        log.warn({ event: 'login.second-factor-refused' }, 'second factor refused: too many attempts');
        throw new PlatformError('unauthorized', 'too many wrong codes for this login: sign in again');
      }
      const user = await deps.handler.load(streamName('user', tenant, pending.userId), userDecider);
      const known = user.state.status === 'active' ? user.state : null;
      const proof = known ? secondFactorProof(known, attempt) : null;
      if (!known || !proof) {
        log.warn({ event: 'login.second-factor-failed' }, 'second factor refused');
        throw new PlatformError('unauthorized', 'the code is wrong, used already, or expired');
      }
      const session = await openSession(
        deps,
        tenant,
        known,
        (opened) => ({ kind: 'CompleteSecondFactor', pendingLogin: pending.jti, proof, session: opened }),
        signInContext,
      );
      log.info({ event: 'login.succeeded', via: proof.kind }, 'login succeeded with a second factor');
      return session;
    },
  };
}

// Social sign-in

/** The JSON answer of a provider endpoint, or a 502 naming the step. */
async function providerJson(
  deps: Pick<CommandDeps, 'outbound'>,
  step: string,
  call: Parameters<CommandDeps['outbound']['request']>[0],
): Promise<unknown> {
  const answer = await deps.outbound.request(call).catch((error: unknown) => {
    throw new PlatformError('upstream_failed', `the provider's ${step} did not answer: ${String(error)}`);
  });
  if (answer.status < 200 || answer.status >= 300)
    throw new PlatformError('upstream_failed', `the provider's ${step} answered ${answer.status}`);
  try {
    return JSON.parse(answer.body) as unknown;
  } catch {
    throw new PlatformError('upstream_failed', `the provider's ${step} did not answer JSON`);
  }
}

/** An ID token's claims once its signature (by a key of the provider's JWKS), issuer and audience check out. */
async function idTokenClaims(
  deps: Pick<CommandDeps, 'outbound'>,
  provider: Provider,
  idToken: unknown,
): Promise<unknown> {
  if (typeof idToken !== 'string')
    throw new PlatformError('upstream_failed', 'the provider sent no ID token');
  const header = jwt.decode(idToken, { complete: true })?.header;
  const jwks = (await providerJson(deps, 'key set', { method: 'GET', url: provider.profileUrl })) as {
    keys?: JsonWebKey[];
  };
  const key = jwks.keys?.find((candidate) => (candidate as { kid?: string }).kid === header?.kid);
  if (!key) throw new PlatformError('upstream_failed', 'the ID token is signed by an unknown key');
  try {
    return jwt.verify(idToken, createPublicKey({ key, format: 'jwk' }), {
      algorithms: ['RS256', 'ES256'],
      audience: provider.clientId,
      ...(provider.issuer !== undefined && { issuer: provider.issuer }),
    });
  } catch (error) {
    throw new PlatformError('upstream_failed', `the ID token does not verify: ${(error as Error).message}`);
  }
}

type Provider = ProviderEndpoints & ProviderSettings;

/**
 * The user a provider vouches for at the end of a sign-in: the code is exchanged with the flow's PKCE
 * verifier, and the provider's verified email picks the user. An unknown or unverified email is refused
 * (accounts are made by administrators).
 */
export async function userVouchedForByProvider(
  deps: CommandDeps,
  tenant: string,
  provider: SocialProvider,
  settings: Provider,
  exchange: { readonly code: string; readonly verifier: string; readonly redirectUri: string },
  log: Logger,
): Promise<UserState> {
  const tokens = (await providerJson(deps, 'token endpoint', {
    method: 'POST',
    url: settings.tokenUrl,
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: exchange.code,
      redirect_uri: exchange.redirectUri,
      client_id: settings.clientId,
      client_secret: settings.clientSecret,
      code_verifier: exchange.verifier,
    }).toString(),
  })) as Record<string, unknown>;
  const profile =
    settings.profile === 'id-token'
      ? await idTokenClaims(deps, settings, tokens.id_token)
      : await providerJson(deps, 'profile endpoint', {
          method: 'GET',
          url: settings.profileUrl,
          headers: {
            authorization: `Bearer ${String(tokens.access_token)}`,
            accept: 'application/json',
            'user-agent': 'records-platform',
          },
        });
  const email = verifiedEmailOf(settings.profile, profile);
  if (!email) {
    log.warn({ event: 'login.failed', via: provider }, 'social sign-in without a verified email');
    throw new PlatformError('forbidden', `${provider} did not vouch for a verified email address`);
  }
  const claim = await deps.handler.load(emailClaimStream(tenant, email), emailClaimDecider);
  const user =
    claim.state.userId === null
      ? null
      : await deps.handler.load(streamName('user', tenant, claim.state.userId), userDecider);
  if (user?.state.status !== 'active') {
    log.warn({ event: 'login.failed', via: provider, email }, 'social sign-in for no user');
    throw new PlatformError(
      'forbidden',
      `no active user has the address ${email}: an administrator creates users`,
    );
  }
  return user.state;
}
