/** Sign-in: sessions (with the second factor), social providers, credential priority, and new systems. */
import { z } from 'zod';
import { CREDENTIAL_SOURCES } from '../auth';
import { isValidTenant } from '../streams';
import { formPostCallbackSchema, PROVIDER_DEFAULTS, SOCIAL_PROVIDERS, type SocialProvider } from '../social';
import { operation, type Operation } from './operation';
import { entityId, etagHeader } from './shared';

export const loginBody = z
  .strictObject({
    email: z
      .string()
      .max(254)
      .transform((email) => email.trim().toLowerCase()),
    password: z.string().max(1024),
  })
  .meta({ id: 'Login', example: { email: 'ada@example.com', password: 'correct horse battery staple' } });
export const secondFactorBody = z
  .strictObject({
    pendingToken: z
      .string()
      .max(2048)
      .meta({ description: 'From the E4031 answer of `POST /auth` (`details`).' }),
    code: z.string().max(16).optional().meta({ description: 'A code of the authenticator.' }),
    recoveryCode: z
      .string()
      .max(64)
      .optional()
      .meta({ description: 'Or a recovery code (each works once).' }),
  })
  .refine((body) => (body.code === undefined) !== (body.recoveryCode === undefined), {
    message: 'send either a code from the authenticator or a recovery code',
  })
  .meta({ id: 'SecondFactor' });

const session = z
  .object({
    session: z.string().meta({ description: 'The session id (also set as the `rp_session` cookie).' }),
    csrfToken: z
      .string()
      .meta({ description: 'Send as `X-CSRF-Token` on writes authenticated by the cookie.' }),
    idleTimeoutSeconds: z.number().int(),
    absoluteExpiresAt: z.string(),
    user: z
      .object({
        id: entityId,
        email: z.string(),
        name: z.string(),
        role: z.string(),
        active: z.boolean(),
        permissions: z.record(z.string(), z.array(z.string())).nullable(),
      })
      .meta({ id: 'SessionUser' }),
  })
  .meta({ id: 'Session' });
const sessionAnswer = {
  description: 'Signed in: the session (cookie and body).',
  schema: session,
  headers: { 'Set-Cookie': 'The `rp_session` cookie (HttpOnly, SameSite=Lax).', ...etagHeader },
};

export const signIn = operation({
  operationId: 'signIn',
  method: 'post',
  path: '/auth',
  tag: 'sessions',
  summary: 'Sign in with email and password',
  description:
    'With two-factor sign-in on, the answer is 403 `E4031` whose `details` hold a `pendingToken` for `POST /auth/2fa` ' +
    '(no session yet). Repeated failures are throttled per address and client (429 with `Retry-After`).',
  body: { schema: loginBody },
  responses: {
    200: sessionAnswer,
    403: {
      description: '`E4031` two-factor required (`details.pendingToken`, `details.expiresIn`), or forbidden.',
    },
    429: { description: 'Too many failed sign-ins: `Retry-After` says when to try again.' },
  },
  security: 'none',
});
export const completeSignIn = operation({
  operationId: 'completeSignIn',
  method: 'post',
  path: '/auth/2fa',
  tag: 'sessions',
  summary: 'Finish a sign-in with a code or a recovery code',
  body: { schema: secondFactorBody },
  responses: { 200: sessionAnswer, 429: { description: 'Too many attempts.' } },
  security: 'none',
});
export const signOut = operation({
  operationId: 'signOut',
  method: 'delete',
  path: '/auth',
  tag: 'sessions',
  summary: 'Sign out: the session ends',
  responses: {
    200: {
      description: 'Signed out.',
      schema: z.object({ signedOut: z.literal(true) }).meta({ id: 'SignedOut' }),
      headers: etagHeader,
    },
  },
  security: 'token',
});

const credentialOrder = z
  .array(z.enum(CREDENTIAL_SOURCES))
  .length(CREDENTIAL_SOURCES.length, `name each of ${CREDENTIAL_SOURCES.join(', ')} once`)
  .refine(
    (order) => new Set(order).size === order.length,
    `name each of ${CREDENTIAL_SOURCES.join(', ')} once`,
  )
  .meta({ description: 'Which credential wins when a request carries several, first first.' });
export const tokenPriorityBody = z.strictObject({ order: credentialOrder }).meta({ id: 'TokenPriority' });
export const getTokenPriority = operation({
  operationId: 'getTokenPriority',
  method: 'get',
  path: '/auth/token-priority',
  tag: 'sessions',
  summary: "The calling user's credential order, and which credential made this request",
  responses: {
    200: {
      description: 'The order.',
      schema: z
        .object({
          order: z.array(z.enum(CREDENTIAL_SOURCES)),
          default: z.boolean(),
          credential: z.object({
            source: z.enum(CREDENTIAL_SOURCES).optional(),
            kind: z.string(),
            id: z.string(),
          }),
        })
        .meta({ id: 'TokenPriorityState' }),
    },
  },
  security: 'token',
});
export const setTokenPriority = operation({
  operationId: 'setTokenPriority',
  method: 'put',
  path: '/auth/token-priority',
  tag: 'sessions',
  summary: "Set the calling user's credential order",
  body: { schema: tokenPriorityBody, example: { order: ['x-authorization', 'authorization', 'cookie'] } },
  responses: {
    200: {
      description: 'The order.',
      schema: z.object({ order: z.array(z.enum(CREDENTIAL_SOURCES)) }).meta({ id: 'TokenPriorityOrder' }),
      headers: etagHeader,
    },
  },
  security: 'token',
});

export const provisionSystemBody = z
  .strictObject({
    system: z
      .string()
      .refine(isValidTenant, 'must be a DNS label: 1-63 lower-case letters, digits or -, not at either end')
      .meta({ description: 'The system name: the first label of its host.' }),
    adminEmail: z
      .email()
      .max(254)
      .transform((email) => email.toLowerCase()),
    adminPassword: z.string().min(12, 'must be at least 12 characters').max(1024).optional(),
  })
  .meta({ id: 'SystemCreate', example: { system: 'acme', adminEmail: 'admin@acme.example' } });
export const provisionSystem = operation({
  operationId: 'provisionSystem',
  method: 'post',
  path: '/system',
  tag: 'systems',
  summary: 'Set up a system with its first administrator (operator administrators)',
  description: "The first administrator's API token is in this answer only.",
  body: { schema: provisionSystemBody },
  responses: {
    201: {
      description: 'The system and its first administrator.',
      schema: z
        .object({ system: z.string(), adminUserId: entityId, adminEmail: z.string(), token: z.string() })
        .meta({ id: 'SystemProvisioned' }),
      headers: etagHeader,
    },
    409: { description: 'The system exists already.' },
  },
  security: 'token',
});

const providerName = (provider: SocialProvider) => provider[0]!.toUpperCase() + provider.slice(1);

/** The social sign-in operations of one provider: start, and the callback (by redirect or by form post). */
function socialSignIn(provider: SocialProvider): Operation[] {
  const name = providerName(provider);
  const finished = {
    200: sessionAnswer,
    403: { description: '`E4031` two-factor required, or the address is unknown or unverified.' },
    501: { description: 'The provider is not configured (`SOCIAL_LOGIN`).' },
    502: { description: 'The provider could not be reached or answered nonsense.' },
  };
  const start = operation({
    operationId: `start${name}SignIn`,
    method: 'get',
    path: `/auth/${provider}`,
    tag: 'social sign-in',
    summary: `Start signing in with ${name}`,
    description: `Redirects the browser to ${name} (OAuth code flow with PKCE; the state is bound to a signed cookie).`,
    responses: {
      302: {
        description: `To ${name}'s sign-in page.`,
        headers: { Location: `${name}'s authorization URL.` },
      },
      501: { description: 'The provider is not configured (`SOCIAL_LOGIN`), or needs https.' },
    },
    security: 'none',
    servedByCommandApi: true,
  });
  const formPost = PROVIDER_DEFAULTS[provider].responseMode === 'form_post';
  const callback = operation({
    operationId: `finish${name}SignIn`,
    method: 'get',
    path: `/auth/${provider}/callback`,
    tag: 'social sign-in',
    summary: formPost
      ? `${name} answers by form post: this GET is refused (405)`
      : `Where ${name} sends the browser back: the session`,
    query: z.object({
      state: z.string().optional(),
      code: z.string().optional(),
      error: z.string().optional(),
    }),
    responses: formPost
      ? { 405: { description: `Use POST /auth/${provider}/callback.` }, 501: finished[501] }
      : finished,
    security: 'none',
    servedByCommandApi: true,
  });
  if (!formPost) return [start, callback];
  const formCallback = operation({
    operationId: `finish${name}SignInByFormPost`,
    method: 'post',
    path: `/auth/${provider}/callback`,
    tag: 'social sign-in',
    summary: `Where ${name} posts its answer (response_mode=form_post): the session`,
    body: { schema: formPostCallbackSchema, contentTypes: ['application/x-www-form-urlencoded'] },
    responses: finished,
    security: 'none',
    formPostCallback: true,
  });
  return [start, callback, formCallback];
}

export const SOCIAL_SIGN_IN_OPERATIONS: ReadonlyMap<SocialProvider, readonly Operation[]> = new Map(
  SOCIAL_PROVIDERS.map((provider) => [provider, socialSignIn(provider)]),
);

export const AUTH_OPERATIONS = [
  signIn,
  completeSignIn,
  signOut,
  getTokenPriority,
  setTokenPriority,
  provisionSystem,
  ...[...SOCIAL_SIGN_IN_OPERATIONS.values()].flat(),
];
