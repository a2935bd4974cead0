import { z } from 'zod';

/** The social sign-in providers (`/auth/<provider>`), their default endpoints, and how each tells the email. */
export const SOCIAL_PROVIDERS = ['google', 'microsoft', 'github', 'apple'] as const;
export type SocialProvider = (typeof SOCIAL_PROVIDERS)[number];

/**
 * Where a provider tells the user's email and whether it is verified: an OIDC userinfo answer
 * (`email`, `email_verified`), GitHub's list of emails (`primary`, `verified`), or a signed ID token.
 */
export type ProfileSource = 'oidc-userinfo' | 'github-emails' | 'id-token';

/**
 * How the provider hands the answer back to the callback: as query parameters of a redirect (a GET), or as
 * a form the browser posts to it (`form_post`, a cross-site POST). Apple requires `form_post` whenever the
 * `name` or `email` scope is asked for.
 */
export type ResponseMode = 'query' | 'form_post';

export interface ProviderEndpoints {
  readonly authorizeUrl: string;
  readonly tokenUrl: string;
  /** The userinfo or emails endpoint; for `id-token`, the JWKS that signs the ID tokens. */
  readonly profileUrl: string;
  readonly profile: ProfileSource;
  readonly scope: string;
  readonly responseMode: ResponseMode;
  /** The `iss` an ID token must carry (`id-token` only). */
  readonly issuer?: string;
}

export const PROVIDER_DEFAULTS: Readonly<Record<SocialProvider, ProviderEndpoints>> = {
  google: {
    authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'https://oauth2.googleapis.com/token',
    profileUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
    profile: 'oidc-userinfo',
    scope: 'openid email',
    responseMode: 'query',
  },
  microsoft: {
    authorizeUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
    tokenUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
    profileUrl: 'https://graph.microsoft.com/oidc/userinfo',
    profile: 'oidc-userinfo',
    scope: 'openid email',
    responseMode: 'query',
  },
  github: {
    authorizeUrl: 'https://github.com/login/oauth/authorize',
    tokenUrl: 'https://github.com/login/oauth/access_token',
    profileUrl: 'https://api.github.com/user/emails',
    profile: 'github-emails',
    scope: 'user:email',
    responseMode: 'query',
  },
  apple: {
    authorizeUrl: 'https://appleid.apple.com/auth/authorize',
    tokenUrl: 'https://appleid.apple.com/auth/token',
    profileUrl: 'https://appleid.apple.com/auth/keys',
    profile: 'id-token',
    // The email links the sign-in to a user; Apple asks for both and then answers only by form post.
    scope: 'name email',
    responseMode: 'form_post',
    issuer: 'https://appleid.apple.com',
  },
};

const url = z.url({ protocol: /^https?$/ });
const providerSettings = z.strictObject({
  clientId: z.string().min(1),
  clientSecret: z.string().min(1),
  authorizeUrl: url.optional(),
  tokenUrl: url.optional(),
  profileUrl: url.optional(),
  scope: z.string().optional(),
  issuer: z.string().optional(),
});
export type ProviderSettings = z.infer<typeof providerSettings>;

/** `SOCIAL_LOGIN`: `{"google": {"clientId": "…", "clientSecret": "…", "tokenUrl"?: …}, …}`. */
export const socialLoginSchema = z.partialRecord(z.enum(SOCIAL_PROVIDERS), providerSettings);

/** Apple's `error` values are short words (`user_cancelled_authorize`); anything else is not an answer. */
const providerError = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,100}$/, 'an error code is a word of at most 100 letters, digits, _ . -');

/**
 * The body a `form_post` provider's browser posts to the callback (`application/x-www-form-urlencoded`):
 * the `state` of the flow and either its `code` or an `error`. Apple adds `user`, a JSON object with the
 * name and email the user chose, on the first sign-in only; it is unsigned, so it is checked for shape
 * and never used to pick a user (the verified email comes from the signed ID token). Other fields (an
 * `id_token` when one is asked for in the response) are dropped.
 */
export const formPostCallbackSchema = z
  .object({
    state: z.string().min(1).max(512),
    code: z.string().min(1).max(2048).optional(),
    error: providerError.optional(),
    user: z
      .string()
      .max(4096)
      .refine((text) => {
        try {
          const parsed: unknown = JSON.parse(text);
          return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
        } catch {
          return false;
        }
      }, 'user must be a JSON object')
      .optional(),
  })
  .refine((body) => (body.code === undefined) !== (body.error === undefined), {
    message: 'send either the code or the error of the sign-in',
  });
export type FormPostCallback = z.infer<typeof formPostCallbackSchema>;

/** A provider's settings with its defaults filled in. */
export function providerConfig(
  provider: SocialProvider,
  settings: ProviderSettings,
): ProviderEndpoints & ProviderSettings {
  return { ...PROVIDER_DEFAULTS[provider], ...settings };
}

/**
 * The verified email a provider's profile answer names, or null: only an address the provider says it
 * verified links a sign-in to a user (an unverified one could be anybody's).
 */
export function verifiedEmailOf(source: ProfileSource, profile: unknown): string | null {
  if (source === 'github-emails') {
    if (!Array.isArray(profile)) return null;
    const primary = profile.find(
      (entry: unknown) =>
        typeof entry === 'object' && entry !== null && (entry as Record<string, unknown>).primary === true,
    ) as Record<string, unknown> | undefined;
    return primary?.verified === true && typeof primary.email === 'string'
      ? primary.email.toLowerCase()
      : null;
  }
  if (typeof profile !== 'object' || profile === null) return null;
  const { email, email_verified: verified } = profile as Record<string, unknown>;
  // Apple sends "true" as a string in ID tokens.
  return typeof email === 'string' && (verified === true || verified === 'true') ? email.toLowerCase() : null;
}
