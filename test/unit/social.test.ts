import {
  formPostCallbackSchema,
  providerConfig,
  socialLoginSchema,
  verifiedEmailOf,
} from '../../contracts/social';

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

  test('Apple asks for name and email, so it answers by form post; the others by redirect', () => {
    expect(providerConfig('apple', { clientId: 'id', clientSecret: 'secret' })).toMatchObject({
      scope: 'name email',
      responseMode: 'form_post',
    });
    for (const provider of ['google', 'microsoft', 'github'] as const)
      expect(providerConfig(provider, { clientId: 'id', clientSecret: 'secret' }).responseMode).toBe('query');
  });

  test("Apple's form post: the state with a code or an error; user, when sent, a JSON object", () => {
    const parse = (body: unknown) => formPostCallbackSchema.safeParse(body).success;
    const user = JSON.stringify({ name: { firstName: 'Mia', lastName: 'Here' }, email: 'mia@example.com' });
    expect(parse({ state: 's', code: 'c', user })).toBe(true);
    expect(parse({ state: 's', error: 'user_cancelled_authorize' })).toBe(true);
    expect(parse({ state: 's', code: 'c', id_token: 'ignored' })).toBe(true);
    expect(parse({ code: 'c' })).toBe(false);
    expect(parse({ state: 's' })).toBe(false);
    expect(parse({ state: 's', code: 'c', error: 'user_cancelled_authorize' })).toBe(false);
    expect(parse({ state: ['s', 's'], code: 'c' })).toBe(false);
    expect(parse({ state: 's', code: 'c', user: '[1]' })).toBe(false);
    expect(parse({ state: 's', code: 'c', user: 'not json' })).toBe(false);
    expect(parse({ state: 's', error: 'no such <b>word</b>' })).toBe(false);
  });
});
