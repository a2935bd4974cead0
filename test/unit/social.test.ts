import { providerConfig, socialLoginSchema, verifiedEmailOf } from '../../contracts/social';

describe('social sign-in: which email a provider vouches for', () => {
  test('OIDC userinfo and ID tokens: only with email_verified (Apple sends it as text)', () => {
    expect(verifiedEmailOf('oidc-userinfo', { email: 'Mia@Example.com', email_verified: true })).toBe(
      'mia@example.com',
    );
    expect(verifiedEmailOf('oidc-userinfo', { email: 'mia@example.com' })).toBeNull();
    expect(verifiedEmailOf('oidc-userinfo', { email: 'mia@example.com', email_verified: false })).toBeNull();
    expect(verifiedEmailOf('id-token', { email: 'mia@example.com', email_verified: 'true' })).toBe(
      'mia@example.com',
    );
    expect(verifiedEmailOf('id-token', { email: 'mia@example.com', email_verified: 'false' })).toBeNull();
    expect(verifiedEmailOf('oidc-userinfo', 'nonsense')).toBeNull();
  });

  test('GitHub: the primary address, when verified', () => {
    const emails = (verified: boolean) => [
      { email: 'other@example.com', primary: false, verified: true },
      { email: 'mia@example.com', primary: true, verified },
    ];
    expect(verifiedEmailOf('github-emails', emails(true))).toBe('mia@example.com');
    expect(verifiedEmailOf('github-emails', emails(false))).toBeNull();
    expect(verifiedEmailOf('github-emails', { email: 'mia@example.com' })).toBeNull();
  });

  test('settings fill in each provider’s endpoints; bad settings are refused', () => {
    expect(providerConfig('github', { clientId: 'id', clientSecret: 'secret' })).toMatchObject({
      tokenUrl: 'https://github.com/login/oauth/access_token',
      profile: 'github-emails',
      scope: 'user:email',
    });
    expect(socialLoginSchema.safeParse({ facebook: { clientId: 'a', clientSecret: 'b' } }).success).toBe(
      false,
    );
    expect(socialLoginSchema.safeParse({ google: { clientId: 'a' } }).success).toBe(false);
    expect(
      socialLoginSchema.safeParse({ google: { clientId: 'a', clientSecret: 'b', tokenUrl: 'ftp://x' } })
        .success,
    ).toBe(false);
  });
});
