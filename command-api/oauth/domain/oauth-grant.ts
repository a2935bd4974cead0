import { createHash } from 'node:crypto';
import type { AuthorizationCodeIssuedData, OAuthGrantEvent } from '../../../contracts/events/oauth';
import { OAuthError, scopeWithin } from '../../../contracts/oauth';
import type { Decider } from '../../kit/decider';

export interface OAuthGrantState {
  /** `issued`: a code waits for its exchange; `active`: tokens were issued; `revoked`: nothing works any more. */
  readonly status: 'none' | 'issued' | 'active' | 'revoked';
  readonly code: AuthorizationCodeIssuedData | null;
  readonly scope: string;
  readonly refreshHash: string | null;
  /** Every refresh token rotated away: presenting one again means it leaked (OA-25). */
  readonly rotatedRefreshHashes: readonly string[];
  readonly expiresAt: string | null;
}

export type OAuthGrantCommand =
  | { readonly kind: 'IssueCode'; readonly code: AuthorizationCodeIssuedData }
  | {
      readonly kind: 'RedeemCode';
      readonly clientId: string;
      readonly redirectUri: string | undefined;
      readonly codeVerifier: string | undefined;
      readonly refreshHash: string;
      readonly now: string;
      readonly expiresAt: string;
    }
  | {
      readonly kind: 'RefreshGrant';
      readonly clientId: string;
      readonly refreshHash: string;
      readonly newRefreshHash: string;
      /** A narrower scope asked for, or undefined: the grant's. */
      readonly scope: string | undefined;
      readonly now: string;
    }
  | { readonly kind: 'RevokeGrant' };

/** RFC 7636 S256: BASE64URL(SHA256(ASCII(code_verifier))). */
export function pkceChallengeOf(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

function checkExchange(
  state: OAuthGrantState,
  command: Extract<OAuthGrantCommand, { kind: 'RedeemCode' }>,
): void {
  const code = state.code!;
  if (command.clientId !== code.clientId)
    throw new OAuthError('invalid_grant', 'the code was issued to another client');
  if (command.now >= code.codeExpiresAt) throw new OAuthError('invalid_grant', 'the code has expired');
  if (command.redirectUri !== code.redirectUri)
    throw new OAuthError('invalid_grant', 'redirect_uri differs from the one of the authorization request');
  if (code.codeChallenge === null) {
    if (command.codeVerifier !== undefined)
      throw new OAuthError(
        'invalid_grant',
        'a code_verifier was sent for a code issued without a code_challenge',
      );
    return;
  }
  if (command.codeVerifier === undefined || !VERIFIER.test(command.codeVerifier))
    throw new OAuthError(
      'invalid_grant',
      'the code needs its PKCE code_verifier (43-128 unreserved characters)',
    );
  if (pkceChallengeOf(command.codeVerifier) !== code.codeChallenge)
    throw new OAuthError('invalid_grant', 'the code_verifier does not match the code_challenge');
}

/**
 * One authorization grant: its code is exchanged once (a replay revokes everything the grant issued), its
 * refresh token rotates on every use (a rotated one presented again revokes the grant), until it expires.
 */
export const oauthGrantDecider: Decider<OAuthGrantState, OAuthGrantCommand, OAuthGrantEvent> = {
  initialState: {
    status: 'none',
    code: null,
    scope: '',
    refreshHash: null,
    rotatedRefreshHashes: [],
    expiresAt: null,
  },

  decide(command, state) {
    if (command.kind === 'IssueCode') {
      if (state.status !== 'none') throw new OAuthError('invalid_request', 'this code exists already');
      return [{ type: 'AuthorizationCodeIssued', data: command.code }];
    }
    if (state.status === 'none' || !state.code)
      throw new OAuthError('invalid_grant', 'unknown code or token');
    const { grantId } = state.code;
    if (command.kind === 'RevokeGrant')
      return state.status === 'revoked'
        ? []
        : [{ type: 'OAuthGrantRevoked', data: { grantId, reason: 'revoked' } }];
    if (command.kind === 'RedeemCode') {
      if (state.status === 'active')
        return [{ type: 'OAuthGrantRevoked', data: { grantId, reason: 'code-replayed' } }];
      if (state.status === 'revoked') throw new OAuthError('invalid_grant', 'the code was used already');
      checkExchange(state, command);
      return [
        {
          type: 'AuthorizationCodeRedeemed',
          data: { grantId, refreshHash: command.refreshHash, expiresAt: command.expiresAt },
        },
      ];
    }
    if (state.status !== 'active') throw new OAuthError('invalid_grant', 'the refresh token is not valid');
    if (state.rotatedRefreshHashes.includes(command.refreshHash))
      return [{ type: 'OAuthGrantRevoked', data: { grantId, reason: 'refresh-reused' } }];
    if (command.refreshHash !== state.refreshHash || command.clientId !== state.code.clientId)
      throw new OAuthError('invalid_grant', 'the refresh token is not valid');
    if (state.expiresAt !== null && command.now >= state.expiresAt)
      throw new OAuthError('invalid_grant', 'the grant has expired: authorize again');
    const scope = command.scope ?? state.scope;
    if (!scopeWithin(scope, state.scope))
      throw new OAuthError('invalid_scope', 'the scope exceeds the original grant');
    return [
      {
        type: 'RefreshTokenRotated',
        data: { grantId, previousRefreshHash: state.refreshHash, refreshHash: command.newRefreshHash, scope },
      },
    ];
  },

  evolve(state, event) {
    switch (event.type) {
      case 'AuthorizationCodeIssued':
        return { ...state, status: 'issued', code: event.data, scope: event.data.scope };
      case 'AuthorizationCodeRedeemed':
        return {
          ...state,
          status: 'active',
          refreshHash: event.data.refreshHash,
          expiresAt: event.data.expiresAt,
        };
      case 'RefreshTokenRotated':
        return {
          ...state,
          refreshHash: event.data.refreshHash,
          scope: event.data.scope,
          rotatedRefreshHashes: [...state.rotatedRefreshHashes, event.data.previousRefreshHash],
        };
      case 'OAuthGrantRevoked':
        return { ...state, status: 'revoked', refreshHash: null };
    }
  },
};
