import {
  oauthGrantDecider,
  pkceChallengeOf,
  type OAuthGrantCommand,
} from '../../command-api/oauth/domain/oauth-grant';
import type { OAuthGrantEvent } from '../../contracts/events/oauth';
import { deciderSpec, oauthRefusal } from '../support/given-when-then';

const grantId = 'a'.repeat(32);
const verifier = 'v'.repeat(43);
const issued: OAuthGrantEvent = {
  type: 'AuthorizationCodeIssued',
  data: {
    grantId,
    clientId: 'rpc_0123456789abcdef01234567',
    userId: 1,
    redirectUri: 'https://app.example/cb',
    scope: 'record:read record:create',
    codeHash: 'c'.repeat(64),
    codeChallenge: pkceChallengeOf(verifier),
    codeExpiresAt: '2026-11-22T10:01:00.000Z',
  },
};
const redeem = (
  overrides: Partial<Extract<OAuthGrantCommand, { kind: 'RedeemCode' }>> = {},
): OAuthGrantCommand => ({
  kind: 'RedeemCode',
  clientId: 'rpc_0123456789abcdef01234567',
  redirectUri: 'https://app.example/cb',
  codeVerifier: verifier,
  refreshHash: 'r'.repeat(64),
  now: '2026-11-22T10:00:30.000Z',
  expiresAt: '2026-12-22T10:00:30.000Z',
  ...overrides,
});
const redeemed: OAuthGrantEvent = {
  type: 'AuthorizationCodeRedeemed',
  data: { grantId, refreshHash: 'r'.repeat(64), expiresAt: '2026-12-22T10:00:30.000Z' },
};
const refresh = (refreshHash: string, newRefreshHash: string, scope?: string): OAuthGrantCommand => ({
  kind: 'RefreshGrant',
  clientId: 'rpc_0123456789abcdef01234567',
  refreshHash,
  newRefreshHash,
  scope,
  now: '2026-11-23T10:00:00.000Z',
});

describe('OAuth grant decider', () => {
  const spec = deciderSpec(oauthGrantDecider);
  const decideOn = (history: OAuthGrantEvent[], command: OAuthGrantCommand) => () =>
    oauthGrantDecider.decide(
      command,
      history.reduce(oauthGrantDecider.evolve, oauthGrantDecider.initialState),
    );

  test('a code is exchanged within its 60 seconds, with its verifier (RFC 7636 S256)', () => {
    expect(pkceChallengeOf('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
    spec.given([issued]).when(redeem()).then([redeemed]);
  });

  test('OA-14 at 61 s, OA-16 another client, OA-17 another redirect URI, OA-18 a wrong or missing verifier: invalid_grant', () => {
    for (const command of [
      redeem({ now: '2026-11-22T10:01:01.000Z' }),
      redeem({ clientId: 'rpc_ffffffffffffffffffffffff' }),
      redeem({ redirectUri: 'https://app.example/cb/' }),
      redeem({ codeVerifier: 'w'.repeat(43) }),
      redeem({ codeVerifier: undefined }),
    ])
      expect(oauthRefusal(decideOn([issued], command))).toBe('invalid_grant');
    const withoutChallenge: OAuthGrantEvent = {
      ...issued,
      data: { ...issued.data, codeChallenge: null },
    } as OAuthGrantEvent;
    expect(oauthRefusal(decideOn([withoutChallenge], redeem()))).toBe('invalid_grant');
  });

  test('OA-15 a replayed code revokes the grant', () => {
    spec
      .given([issued, redeemed])
      .when(redeem())
      .then([{ type: 'OAuthGrantRevoked', data: { grantId, reason: 'code-replayed' } }]);
  });

  test('OA-24/25/28 refresh rotates; a rotated token again revokes; the scope never widens', () => {
    const rotated: OAuthGrantEvent = {
      type: 'RefreshTokenRotated',
      data: {
        grantId,
        previousRefreshHash: 'r'.repeat(64),
        refreshHash: 's'.repeat(64),
        scope: 'record:read',
      },
    };
    spec
      .given([issued, redeemed])
      .when(refresh('r'.repeat(64), 's'.repeat(64), 'record:read'))
      .then([rotated]);
    spec
      .given([issued, redeemed, rotated])
      .when(refresh('r'.repeat(64), 't'.repeat(64)))
      .then([{ type: 'OAuthGrantRevoked', data: { grantId, reason: 'refresh-reused' } }]);
    expect(
      oauthRefusal(
        decideOn([issued, redeemed, rotated], refresh('s'.repeat(64), 't'.repeat(64), 'record:create')),
      ),
    ).toBe('invalid_scope');
    expect(oauthRefusal(decideOn([issued, redeemed], refresh('x'.repeat(64), 't'.repeat(64))))).toBe(
      'invalid_grant',
    );
  });

  test('OA-27 a grant stops at its absolute expiry, however often renewed', () => {
    const late = { ...refresh('r'.repeat(64), 's'.repeat(64)), now: '2026-12-22T10:00:31.000Z' };
    expect(oauthRefusal(decideOn([issued, redeemed], late))).toBe('invalid_grant');
  });
});
