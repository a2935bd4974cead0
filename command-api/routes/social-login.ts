import { createHash, createPublicKey, randomBytes, type JsonWebKey } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import jwt from 'jsonwebtoken';
import { PlatformError } from '../../contracts/errors';
import {
  providerConfig,
  SOCIAL_PROVIDERS,
  verifiedEmailOf,
  type ProviderEndpoints,
  type ProviderSettings,
  type SocialProvider,
} from '../../contracts/social';
import { streamName } from '../../contracts/streams';
import { contextOf } from '../../infra/http/context';
import { cookieValue, setCookie } from '../../infra/http/cookies';
import { issuerOf } from '../../infra/http/issuer';
import type { CommandDeps } from '../deps';
import { emailClaimDecider, emailClaimStream } from '../domain/email-claim';
import { hasTwoFactor, userDecider } from '../domain/user';
import { requireSecondFactor, startSession } from './sessions';

/** The sign-in routes (`/auth/<provider>` and its callback) write a session: they go to the command API. */
export const SOCIAL_LOGIN_ROUTES = new RegExp(`^/auth/(${SOCIAL_PROVIDERS.join('|')})(/callback)?/?$`);

const FLOW_COOKIE = 'rp_social';
const FLOW_SECONDS = 600;

type Provider = ProviderEndpoints & ProviderSettings;

function setFlowCookie(req: Request, res: Response, value: string, maxAgeSeconds: number): void {
  setCookie(req, res, { name: FLOW_COOKIE, value, path: '/api/auth', maxAgeSeconds });
}

/**
 * Social sign-in (`/auth/google`, `/microsoft`, `/github`, `/apple`): an OAuth code flow with PKCE and a
 * state bound to the browser by a signed cookie. The provider's verified email picks the user; an unknown
 * or unverified email is refused (accounts are made by administrators). Users with two-factor sign-in still
 * give their second factor.
 */
export function addSocialLoginRoutes(
  router: Router,
  deps: CommandDeps,
  providers: Partial<Record<SocialProvider, ProviderSettings>>,
): void {
  const flowKey = deps.sealer.derivedKey('social-login');
  const configured = (provider: SocialProvider): Provider => {
    const settings = providers[provider];
    if (!settings)
      throw new PlatformError('not_configured', `sign-in with ${provider} is not configured (SOCIAL_LOGIN)`);
    return providerConfig(provider, settings);
  };
  const callbackOf = (req: Request, provider: SocialProvider) => `${issuerOf(req)}/auth/${provider}/callback`;

  /** The JSON answer of a provider endpoint, or a 502 naming the step. */
  const providerJson = async (
    step: string,
    call: Parameters<CommandDeps['outbound']['request']>[0],
  ): Promise<unknown> => {
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
  };

  /** An ID token's claims once its signature (by a key of the provider's JWKS), issuer and audience check out. */
  const idTokenClaims = async (provider: Provider, idToken: unknown): Promise<unknown> => {
    if (typeof idToken !== 'string')
      throw new PlatformError('upstream_failed', 'the provider sent no ID token');
    const header = jwt.decode(idToken, { complete: true })?.header;
    const jwks = (await providerJson('key set', { method: 'GET', url: provider.profileUrl })) as {
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
  };

  for (const provider of SOCIAL_PROVIDERS) {
    router.get(`/auth/${provider}`, (req, res) => {
      const settings = configured(provider);
      const state = randomBytes(24).toString('base64url');
      const verifier = randomBytes(32).toString('base64url');
      const flow = jwt.sign({ p: provider, s: state, v: verifier, t: contextOf(req).tenant }, flowKey, {
        algorithm: 'HS256',
        expiresIn: FLOW_SECONDS,
      });
      setFlowCookie(req, res, flow, FLOW_SECONDS);
      const target = new URL(settings.authorizeUrl);
      for (const [name, value] of Object.entries({
        response_type: 'code',
        client_id: settings.clientId,
        redirect_uri: callbackOf(req, provider),
        scope: settings.scope,
        state,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }))
        target.searchParams.set(name, value);
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(302, target.toString());
    });

    router.get(`/auth/${provider}/callback`, async (req, res) => {
      const settings = configured(provider);
      const { tenant } = contextOf(req);
      const log = deps.logger.child({ tenant, provider, address: req.ip });
      let flow: { p?: unknown; s?: unknown; v?: unknown; t?: unknown };
      try {
        flow = jwt.verify(cookieValue(req, FLOW_COOKIE) ?? '', flowKey, {
          algorithms: ['HS256'],
        }) as typeof flow;
      } catch {
        throw new PlatformError(
          'bad_request',
          'no sign-in in progress in this browser (or it expired): start again',
        );
      }
      setFlowCookie(req, res, '', 0);
      const error = req.query.error;
      if (typeof error === 'string')
        throw new PlatformError('unauthorized', `the provider refused the sign-in: ${error}`);
      if (
        flow.p !== provider ||
        flow.t !== tenant ||
        typeof req.query.state !== 'string' ||
        req.query.state !== flow.s
      )
        throw new PlatformError('bad_request', 'the sign-in state does not match: start again');
      if (typeof req.query.code !== 'string')
        throw new PlatformError('bad_request', 'the provider sent no code');

      const tokens = (await providerJson('token endpoint', {
        method: 'POST',
        url: settings.tokenUrl,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: req.query.code,
          redirect_uri: callbackOf(req, provider),
          client_id: settings.clientId,
          client_secret: settings.clientSecret,
          code_verifier: String(flow.v),
        }).toString(),
      })) as Record<string, unknown>;
      const profile =
        settings.profile === 'id-token'
          ? await idTokenClaims(settings, tokens.id_token)
          : await providerJson('profile endpoint', {
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
      if (hasTwoFactor(user.state)) requireSecondFactor(deps, res, tenant, user.state.userId);
      await startSession(deps, req, res, user.state, (session) => ({ kind: 'StartSession', ...session }));
      log.info({ event: 'login.succeeded', via: provider, userId: user.state.userId }, 'login succeeded');
    });
  }
}
