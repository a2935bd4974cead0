import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import jwt from 'jsonwebtoken';
import { PlatformError } from '../../../contracts/errors';
import {
  formPostCallbackSchema,
  PROVIDER_DEFAULTS,
  providerConfig,
  SOCIAL_PROVIDERS,
  type ProviderEndpoints,
  type ProviderSettings,
  type SocialProvider,
} from '../../../contracts/social';
import { validate } from '../../../contracts/validation';
import { contextOf } from '../../../infra/http/context';
import { cookieValue, setCookie } from '../../../infra/http/cookies';
import { issuerOf } from '../../../infra/http/issuer';
import type { CommandDeps } from '../../deps';
import { hasTwoFactor } from '../domain/user';
import { requireSecondFactor, sendSession, signInContextOf } from './sessions';
import { newPendingLogin, openSession, userVouchedForByProvider } from '../commands';
import { SOCIAL_SIGN_IN_OPERATIONS } from '../../../contracts/api/auth';
import { mount } from '../../../infra/http/operations';

const FLOW_SECONDS = 600;

type Provider = ProviderEndpoints & ProviderSettings;

interface FlowCookie {
  readonly name: string;
  readonly path: string;
  readonly sameSite: 'Lax' | 'None';
}

/**
 * Where a provider's flow (state, PKCE verifier) waits for its callback. Answers by redirect are top-level
 * GETs, which a `SameSite=Lax` cookie follows. An answer by form post is a cross-site POST, which only a
 * `SameSite=None` (hence Secure) cookie follows: that one is the provider's own, and its path is the one
 * route that reads it, so it rides along on no other cross-site request.
 */
function flowCookieOf(provider: SocialProvider): FlowCookie {
  return PROVIDER_DEFAULTS[provider].responseMode === 'form_post'
    ? { name: `rp_social_${provider}`, path: `/api/auth/${provider}/callback`, sameSite: 'None' }
    : { name: 'rp_social', path: '/api/auth', sameSite: 'Lax' };
}

function setFlowCookie(
  req: Request,
  res: Response,
  cookie: FlowCookie,
  value: string,
  maxAgeSeconds: number,
) {
  setCookie(req, res, { ...cookie, value, maxAgeSeconds });
}

/** Browsers keep a Secure cookie set over plain http only for these hosts. */
function isLoopbackHost(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname.endsWith('.localhost') ||
    hostname === '[::1]' ||
    hostname === '::1' ||
    /^127(\.\d{1,3}){3}$/.test(hostname)
  );
}

function sameText(a: string, b: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** What the provider answered the callback, from the query (redirect) or the form (form post). */
interface ProviderAnswer {
  readonly state?: string | undefined;
  readonly code?: string | undefined;
  readonly error?: string | undefined;
}

const queryText = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * Social sign-in (`/auth/google`, `/microsoft`, `/github`, `/apple`): an OAuth code flow with PKCE and a
 * state bound to the browser by a signed cookie. The provider's verified email picks the user; an unknown
 * or unverified email is refused (accounts are made by administrators). Users with two-factor sign-in still
 * give their second factor. Google, Microsoft and GitHub answer by redirect (`GET …/callback`); Apple, asked
 * for name and email, answers by form post only (`POST /auth/apple/callback`, a cross-site POST).
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

  /**
   * The end of a sign-in: the answer must carry the state of the flow this browser started (its signed
   * cookie, of this provider and system); then the flow is spent, the code is exchanged with the PKCE
   * verifier, and the provider's verified email picks the user.
   */
  const complete = async (
    req: Request,
    res: Response,
    provider: SocialProvider,
    answer: ProviderAnswer,
  ): Promise<void> => {
    const settings = configured(provider);
    const { tenant } = contextOf(req);
    const log = deps.logger.child({ tenant, provider, address: req.ip });
    const cookie = flowCookieOf(provider);
    let flow: { p?: unknown; s?: unknown; v?: unknown; t?: unknown };
    try {
      flow = jwt.verify(cookieValue(req, cookie.name) ?? '', flowKey, {
        algorithms: ['HS256'],
      }) as typeof flow;
    } catch {
      throw new PlatformError(
        'bad_request',
        'no sign-in in progress in this browser (or it expired): start again',
      );
    }
    if (
      flow.p !== provider ||
      flow.t !== tenant ||
      typeof flow.s !== 'string' ||
      answer.state === undefined ||
      !sameText(answer.state, flow.s)
    )
      throw new PlatformError('bad_request', 'the sign-in state does not match: start again');
    // Only the answer with the flow's state spends it: a forged callback cannot cancel a sign-in under way.
    setFlowCookie(req, res, cookie, '', 0);
    if (answer.error !== undefined)
      throw new PlatformError('unauthorized', `the provider refused the sign-in: ${answer.error}`);
    if (answer.code === undefined) throw new PlatformError('bad_request', 'the provider sent no code');

    const user = await userVouchedForByProvider(
      deps,
      tenant,
      provider,
      settings,
      { code: answer.code, verifier: String(flow.v), redirectUri: callbackOf(req, provider) },
      log,
    );
    if (hasTwoFactor(user)) requireSecondFactor(res, newPendingLogin(deps, tenant, user.userId));
    const opened = await openSession(
      deps,
      tenant,
      user,
      (session) => ({ kind: 'StartSession', ...session }),
      signInContextOf(req, deps),
    );
    sendSession(req, res, deps, opened);
    log.info({ event: 'login.succeeded', via: provider, userId: user.userId }, 'login succeeded');
  };

  for (const provider of SOCIAL_PROVIDERS) {
    const formPost = PROVIDER_DEFAULTS[provider].responseMode === 'form_post';
    const [start, callback, formCallback] = SOCIAL_SIGN_IN_OPERATIONS.get(provider)!;
    mount(router, start!, (req, res) => {
      const settings = configured(provider);
      if (formPost && !req.secure && !isLoopbackHost(req.hostname))
        throw new PlatformError(
          'not_configured',
          `sign-in with ${provider} answers by a cross-site form post, which only a Secure cookie survives: ` +
            'serve the API over https (behind a TLS proxy, set TRUST_PROXY_HOPS so it sees https)',
        );
      const state = randomBytes(24).toString('base64url');
      const verifier = randomBytes(32).toString('base64url');
      const flow = jwt.sign({ p: provider, s: state, v: verifier, t: contextOf(req).tenant }, flowKey, {
        algorithm: 'HS256',
        expiresIn: FLOW_SECONDS,
      });
      setFlowCookie(req, res, flowCookieOf(provider), flow, FLOW_SECONDS);
      const target = new URL(settings.authorizeUrl);
      for (const [name, value] of Object.entries({
        response_type: 'code',
        client_id: settings.clientId,
        redirect_uri: callbackOf(req, provider),
        scope: settings.scope,
        ...(formPost && { response_mode: 'form_post' }),
        state,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }))
        target.searchParams.set(name, value);
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(302, target.toString());
    });

    mount(router, callback!, async (req, res) => {
      configured(provider);
      if (formPost) {
        res.setHeader('Allow', 'POST');
        throw new PlatformError(
          'method_not_allowed',
          `${provider} answers the sign-in by form post (response_mode=form_post): its callback is POST /auth/${provider}/callback`,
        );
      }
      await complete(req, res, provider, {
        state: queryText(req.query.state),
        code: queryText(req.query.code),
        error: queryText(req.query.error),
      });
    });

    if (formCallback)
      mount(router, formCallback, async (req, res) => {
        configured(provider);
        const answer = validate(formPostCallbackSchema, req.body ?? {}, 'form post of the sign-in answer');
        await complete(req, res, provider, answer);
      });
  }
}
