import { z } from 'zod';

/** The social sign-in providers (`/auth/<provider>`), their default endpoints, and how each tells the email. */
export const SOCIAL_PROVIDERS = ['google', 'microsoft', 'github', 'apple'] as const;
export type SocialProvider = (typeof SOCIAL_PROVIDERS)[number];

/**
 * Where a provider tells the user's email and whether it is verified: an OIDC userinfo answer
 * (`email`, `email_verified`), GitHub's list of emails (`primary`, `verified`), or a signed ID token.
 */
export type ProfileSource = 'oidc-userinfo' | 'github-emails' | 'id-token';

export interface ProviderEndpoints {
  readonly authorizeUrl: string;
  readonly tokenUrl: string;
  /** The userinfo or emails endpoint; for `id-token`, the JWKS that signs the ID tokens. */
  readonly profileUrl: string;
  readonly profile: ProfileSource;
  readonly scope: string;
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
  },
  microsoft: {
    authorizeUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
    tokenUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
    profileUrl: 'https://graph.microsoft.com/oidc/userinfo',
    profile: 'oidc-userinfo',
    scope: 'openid email',
  },
  github: {
    authorizeUrl: 'https://github.com/login/oauth/authorize',
    tokenUrl: 'https://github.com/login/oauth/access_token',
    profileUrl: 'https://api.github.com/user/emails',
    profile: 'github-emails',
    scope: 'user:email',
  },
  apple: {
    authorizeUrl: 'https://appleid.apple.com/auth/authorize',
    tokenUrl: 'https://appleid.apple.com/auth/token',
    profileUrl: 'https://appleid.apple.com/auth/keys',
    profile: 'id-token',
    scope: 'email',
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
