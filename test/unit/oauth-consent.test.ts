import { oauthConsentDecider, type OAuthConsentCommand } from '../../command-api/oauth/domain/oauth-consent';
import type { OAuthConsentEvent } from '../../contracts/events/oauth';
import { deciderSpec, oauthRefusal } from '../support/given-when-then';

const answer = (decision: 'allow' | 'deny'): OAuthConsentCommand => ({
  kind: 'AnswerConsent',
  answer: {
    ticketId: '0'.repeat(32),
    clientId: 'rpc_0123456789abcdef01234567',
    userId: 7,
    scope: 'record:read',
    decision,
    grantId: decision === 'allow' ? 'a'.repeat(32) : null,
  },
  now: '2026-11-22T10:05:00.000Z',
  expiresAt: '2026-11-22T10:10:00.000Z',
});
const answered = (decision: 'allow' | 'deny'): OAuthConsentEvent => ({
  type: 'OAuthConsentAnswered',
  data: answer(decision).answer,
});

/** The OAuth error code a command is refused with, after `history`. */
const refusal = (history: OAuthConsentEvent[], command: OAuthConsentCommand) =>
  oauthRefusal(() =>
    oauthConsentDecider.decide(
      command,
      history.reduce(oauthConsentDecider.evolve, oauthConsentDecider.initialState),
    ),
  );

describe('OAuth consent decider', () => {
  const spec = deciderSpec(oauthConsentDecider);

  test('OA-08 an open consent page takes one answer, Allow or Deny', () => {
    expect(
      spec
        .given([])
        .when(answer('allow'))
        .then([answered('allow')]),
    ).toEqual({ answer: 'allow' });
    expect(
      spec
        .given([])
        .when(answer('deny'))
        .then([answered('deny')]),
    ).toEqual({ answer: 'deny' });
  });

  test('OA-08 a replayed answer and an expired page are refused', () => {
    expect(refusal([answered('deny')], answer('allow'))).toBe('invalid_request');
    expect(refusal([answered('allow')], answer('allow'))).toBe('invalid_request');
    expect(refusal([], { ...answer('allow'), now: '2026-11-22T10:10:00.000Z' })).toBe('invalid_request');
  });
});
