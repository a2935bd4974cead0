import { emailClaimDecider } from '../../command-api/identity/domain/email-claim';
import { userDecider, type ActingUser } from '../../command-api/identity/domain/user';
import {
  can,
  chooseCredential,
  rightsBeyond,
  type CredentialSource,
  type Principal,
} from '../../contracts/auth';
import type { IdentityEvent } from '../../contracts/events/identity';
import { passesChecksum, newApiToken } from '../../contracts/secrets';
import { streamName } from '../../contracts/streams';
import { identityProjection } from '../../projections/read-models/identity';
import { deciderSpec, EventLog, projectionSpec, TEST_TENANT } from '../support/given-when-then';

const member: IdentityEvent = {
  type: 'UserRegistered',
  data: {
    userId: 5,
    email: 'mia@example.com',
    name: 'Mia',
    role: 'member',
    passwordHash: null,
    permissions: { record: ['read', 'update'], token: ['create'] },
  },
};
const admin: ActingUser = { userId: 1, credentialPermissions: undefined };
const token = (permissions: Record<string, ('create' | 'read' | 'update' | 'delete')[]> | null) => ({
  tokenId: 't-1',
  name: 'CI',
  tokenHash: 'b'.repeat(64),
  prefix: 'rpt_',
  last4: 'abcd',
  permissions,
  expiresAt: null,
  bootstrap: false,
});

describe('user decider: changes, deactivation, token rights', () => {
  const spec = deciderSpec(userDecider);

  test('a change records only what differs', () => {
    spec
      .given([member])
      .when({ kind: 'ChangeUser', caller: admin, name: 'Mia', role: 'admin' })
      .then([{ type: 'UserChanged', data: { userId: 5, role: 'admin' } }]);
    spec.given([member]).when({ kind: 'ChangeUser', caller: admin, name: 'Mia' }).thenNothingHappens();
  });

  test('administrators cannot demote or deactivate themselves', () => {
    const self: ActingUser = { userId: 5, credentialPermissions: undefined };
    const promoted: IdentityEvent = { type: 'UserChanged', data: { userId: 5, role: 'admin' } };
    spec
      .given([member, promoted])
      .when({ kind: 'ChangeUser', caller: self, role: 'member' })
      .thenThrows('conflict');
    spec.given([member]).when({ kind: 'DeactivateUser', caller: self }).thenThrows('conflict');
  });

  test('a deactivated user gets no tokens until activated again', () => {
    const deactivated: IdentityEvent = { type: 'UserDeactivated', data: { userId: 5 } };
    const issue = { kind: 'IssueApiToken' as const, token: token({ record: ['read'] }), caller: admin };
    spec.given([member, deactivated]).when(issue).thenThrows('conflict');
    spec.given([member, deactivated]).when({ kind: 'DeactivateUser', caller: admin }).thenNothingHappens();
    spec
      .given([member, deactivated, { type: 'UserActivated', data: { userId: 5 } }])
      .when(issue)
      .then([{ type: 'ApiTokenIssued', data: { ...token({ record: ['read'] }), userId: 5 } }]);
  });

  test('TK-06: a deactivation revokes every API token for good; a reactivation brings none back', () => {
    const issued = (tokenId: string, hash: string): IdentityEvent => ({
      type: 'ApiTokenIssued',
      data: { ...token(null), tokenId, tokenHash: hash.repeat(64), userId: 5 },
    });
    const revoked = (tokenId: string, hash: string): IdentityEvent => ({
      type: 'ApiTokenRevoked',
      data: { userId: 5, tokenId, tokenHash: hash.repeat(64) },
    });
    const deactivated: IdentityEvent = { type: 'UserDeactivated', data: { userId: 5 } };
    const activated: IdentityEvent = { type: 'UserActivated', data: { userId: 5 } };
    spec
      .given([member, issued('t-1', 'b'), issued('t-2', 'c')])
      .when({ kind: 'DeactivateUser', caller: admin })
      .then([deactivated, revoked('t-1', 'b'), revoked('t-2', 'c')]);
    spec
      .given([member, issued('t-1', 'b'), deactivated, revoked('t-1', 'b')])
      .when({ kind: 'ActivateUser' })
      .then([activated]);
    // Data written before deactivations revoked tokens: the reactivation revokes what is left, first.
    spec
      .given([member, issued('t-1', 'b'), deactivated])
      .when({ kind: 'ActivateUser' })
      .then([revoked('t-1', 'b'), activated]);
  });

  test("a token's rights stay within its owner's and its maker's", () => {
    const beyondOwner = spec
      .given([member])
      .when({ kind: 'IssueApiToken', token: token({ record: ['delete'] }), caller: admin })
      .thenThrows('forbidden');
    expect(beyondOwner.details).toEqual([
      { path: 'permissions', message: 'beyond the rights of user 5: record:delete' },
    ]);
    const narrowMaker: ActingUser = {
      userId: 5,
      credentialPermissions: { record: ['read'], token: ['create'] },
    };
    spec
      .given([member])
      .when({ kind: 'IssueApiToken', token: token({ record: ['update'] }), caller: narrowMaker })
      .thenThrows('forbidden');
    // "As the owner" (null) is never beyond the owner, but it is beyond a narrow maker.
    spec
      .given([member])
      .when({ kind: 'IssueApiToken', token: token(null), caller: admin })
      .then([{ type: 'ApiTokenIssued', data: { ...token(null), userId: 5 } }]);
    spec
      .given([member])
      .when({ kind: 'IssueApiToken', token: token(null), caller: narrowMaker })
      .thenThrows('forbidden');
  });

  test('changing a token keeps the hash with the event; an unknown token is a 404', () => {
    const issued: IdentityEvent = {
      type: 'ApiTokenIssued',
      data: { ...token({ record: ['read'] }), userId: 5 },
    };
    spec
      .given([member, issued])
      .when({ kind: 'ChangeApiToken', tokenId: 't-1', caller: admin, name: 'Renamed', expiresAt: null })
      .then([
        {
          type: 'ApiTokenChanged',
          data: { userId: 5, tokenId: 't-1', tokenHash: 'b'.repeat(64), name: 'Renamed', expiresAt: null },
        },
      ]);
    spec
      .given([member, issued])
      .when({ kind: 'ChangeApiToken', tokenId: 't-1', caller: admin, permissions: { record: ['delete'] } })
      .thenThrows('forbidden');
    spec
      .given([member])
      .when({ kind: 'ChangeApiToken', tokenId: 't-9', caller: admin })
      .thenThrows('not_found');
  });
});

describe('email claims', () => {
  const spec = deciderSpec(emailClaimDecider);
  const claimed = { type: 'EmailClaimed' as const, data: { email: 'mia@example.com', userId: 5 } };

  test('an address belongs to the first user; a stale claim (no such user) can be taken over', () => {
    spec
      .given([])
      .when({ kind: 'ClaimEmail', email: 'mia@example.com', userId: 5, holderExists: false })
      .then([claimed]);
    spec
      .given([claimed])
      .when({ kind: 'ClaimEmail', email: 'mia@example.com', userId: 6, holderExists: true })
      .thenThrows('conflict');
    spec
      .given([claimed])
      .when({ kind: 'ClaimEmail', email: 'mia@example.com', userId: 6, holderExists: false })
      .then([{ type: 'EmailClaimed', data: { email: 'mia@example.com', userId: 6 } }]);
    spec
      .given([claimed])
      .when({ kind: 'ClaimEmail', email: 'mia@example.com', userId: 5, holderExists: true })
      .thenNothingHappens();
  });
});

describe('rights', () => {
  test('rightsBeyond names what a request adds to a limit', () => {
    expect(rightsBeyond({ record: ['read', 'delete'] }, { record: ['read'] })).toEqual(['record:delete']);
    expect(rightsBeyond({ record: ['read'] }, { '*': ['read'] })).toEqual([]);
    expect(rightsBeyond(undefined, { record: ['read'] })).toEqual(['*']);
    expect(rightsBeyond({ record: ['delete'] }, undefined)).toEqual([]);
  });

  test("can: a member's token is bounded by the member's rights, an admin's only by the token", () => {
    const principal = (role: 'admin' | 'member'): Principal => ({
      tenant: 'acme',
      userId: '5',
      role,
      credential: { kind: 'api-token', id: 'token:t-1' },
      userPermissions: { record: ['read'] },
      credentialPermissions: { record: ['read', 'update'] },
    });
    expect(can(principal('member'), 'record', 'update')).toBe(false);
    expect(can(principal('member'), 'record', 'read')).toBe(true);
    expect(can(principal('admin'), 'record', 'update')).toBe(true);
    expect(can(principal('admin'), 'record', 'delete')).toBe(false);
  });
});

describe('token checksum', () => {
  test('a new token passes; one changed character fails; values not shaped like ours are looked up', () => {
    const value = newApiToken();
    expect(passesChecksum(value)).toBe(true);
    const flipped = value.slice(0, 10) + (value[10] === 'A' ? 'B' : 'A') + value.slice(11);
    expect(passesChecksum(flipped)).toBe(false);
    expect(passesChecksum('rpt_test-admin-token-0123456789abcdef')).toBe(true);
  });
});

describe('identity projection', () => {
  const log = new EventLog();
  const stream = streamName('user', TEST_TENANT, 5);
  const record = (event: IdentityEvent) => log.record<string, unknown>(stream, event);
  const registered = record(member);
  const issued = record({ type: 'ApiTokenIssued', data: { ...token({ record: ['read'] }), userId: 5 } });
  const spec = projectionSpec(identityProjection);

  test('deactivation and changes patch the user; a token change patches its credential; nothing secret shows', () => {
    const deactivated = record({ type: 'UserDeactivated', data: { userId: 5 } });
    spec
      .given([registered, issued])
      .when(deactivated)
      .thenDocuments('users', [expect.objectContaining({ userId: 5, active: false, role: 'member' })]);
    const changed = record({ type: 'UserChanged', data: { userId: 5, permissions: null } });
    spec
      .given([registered, issued, deactivated])
      .when(changed)
      .thenDocuments('users', [expect.objectContaining({ userId: 5, active: false, permissions: null })]);
    const renamed = record({
      type: 'ApiTokenChanged',
      data: { userId: 5, tokenId: 't-1', tokenHash: 'b'.repeat(64), name: 'Renamed', expiresAt: null },
    });
    spec
      .given([registered, issued])
      .when(renamed)
      .thenDocuments('credentials', [
        expect.objectContaining({ id: 'b'.repeat(64), tokenId: 't-1', name: 'Renamed', expiresAt: null }),
      ]);
  });
});

describe('user decider: second factor', () => {
  const spec = deciderSpec(userDecider);
  const deviceId = '7a0c7bb5-8b8c-4c57-9b8e-2f4b8f0d6c11';
  const added: IdentityEvent = {
    type: 'TwoFactorDeviceAdded',
    data: { userId: 5, deviceId, name: 'Phone', sealedSecret: 'v1.sealed' },
  };
  const confirmed: IdentityEvent = {
    type: 'TwoFactorDeviceConfirmed',
    data: { userId: 5, deviceId, timeStep: 100 },
  };
  const codes: IdentityEvent = {
    type: 'RecoveryCodesIssued',
    data: { userId: 5, codeHashes: ['c'.repeat(64)] },
  };
  const session = {
    sessionHash: 'd'.repeat(64),
    csrfHash: 'e'.repeat(64),
    absoluteExpiresAt: '2026-11-22T20:00:00.000Z',
  };
  const complete = (timeStep: number, pendingLogin = 'p-1') => ({
    kind: 'CompleteSecondFactor' as const,
    pendingLogin,
    proof: { kind: 'totp' as const, deviceId, timeStep },
    session,
  });

  test('the first confirmed device comes with recovery codes; later ones do not', () => {
    spec
      .given([member, added])
      .when({ kind: 'ConfirmTwoFactorDevice', deviceId, timeStep: 100, recoveryCodeHashes: ['c'.repeat(64)] })
      .then([confirmed, codes]);
  });

  test('TOTP-02 a code of the spent step or earlier is refused; a later one starts a session', () => {
    spec.given([member, added, confirmed, codes]).when(complete(100)).thenThrows('unauthorized');
    spec.given([member, added, confirmed, codes]).when(complete(99)).thenThrows('unauthorized');
    spec
      .given([member, added, confirmed, codes])
      .when(complete(101))
      .then([
        { type: 'TwoFactorCodeUsed', data: { userId: 5, deviceId, timeStep: 101 } },
        { type: 'SessionStarted', data: { userId: 5, ...session, pendingLogin: 'p-1' } },
      ]);
  });

  test('SE-01 a pending login completes once', () => {
    const used: IdentityEvent[] = [
      { type: 'TwoFactorCodeUsed', data: { userId: 5, deviceId, timeStep: 101 } },
      { type: 'SessionStarted', data: { userId: 5, ...session, pendingLogin: 'p-1' } },
    ];
    spec
      .given([member, added, confirmed, codes, ...used])
      .when(complete(102))
      .thenThrows('unauthorized');
    spec
      .given([member, added, confirmed, codes, ...used])
      .when(complete(102, 'p-2'))
      .then([
        { type: 'TwoFactorCodeUsed', data: { userId: 5, deviceId, timeStep: 102 } },
        { type: 'SessionStarted', data: { userId: 5, ...session, pendingLogin: 'p-2' } },
      ]);
  });

  test('TOTP-05 a recovery code works once; an unconfirmed device proves nothing', () => {
    const recovery = { kind: 'recovery' as const, codeHash: 'c'.repeat(64) };
    const usedCode: IdentityEvent = {
      type: 'RecoveryCodeUsed',
      data: { userId: 5, codeHash: 'c'.repeat(64) },
    };
    spec
      .given([member, added, confirmed, codes])
      .when({ ...complete(0), proof: recovery })
      .then([usedCode, { type: 'SessionStarted', data: { userId: 5, ...session, pendingLogin: 'p-1' } }]);
    spec
      .given([member, added, confirmed, codes, usedCode])
      .when({ ...complete(0, 'p-9'), proof: recovery })
      .thenThrows('unauthorized');
    spec.given([member, added]).when(complete(101)).thenThrows('unauthorized');
  });
});

describe('chooseCredential', () => {
  const principalOf = (userId: string, credentialOrder?: CredentialSource[]): Principal => ({
    tenant: 'acme',
    userId,
    role: 'member',
    credential: { kind: 'api-token', id: `token:${userId}` },
    ...(credentialOrder && { credentialOrder }),
  });

  test('nothing presented, one presented, several of one user by the default or the user order', () => {
    expect(chooseCredential([])).toEqual({ kind: 'none' });
    const mia = principalOf('5');
    expect(chooseCredential([{ source: 'cookie', principal: mia }])).toMatchObject({
      kind: 'chosen',
      source: 'cookie',
      principal: mia,
    });
    expect(chooseCredential([{ source: 'authorization', principal: null }])).toEqual({
      kind: 'invalid',
      source: 'authorization',
    });
    expect(
      chooseCredential([
        { source: 'cookie', principal: mia },
        { source: 'x-authorization', principal: mia },
      ]),
    ).toMatchObject({ kind: 'chosen', source: 'x-authorization' });
    const cookieFirst = principalOf('5', ['cookie', 'authorization', 'x-authorization']);
    expect(
      chooseCredential([
        { source: 'authorization', principal: cookieFirst },
        { source: 'cookie', principal: cookieFirst },
      ]),
    ).toMatchObject({ kind: 'chosen', source: 'cookie' });
  });

  test('different users are ambiguous; a worthless first choice is refused, not skipped', () => {
    expect(
      chooseCredential([
        { source: 'authorization', principal: principalOf('5') },
        { source: 'cookie', principal: principalOf('6') },
      ]),
    ).toEqual({ kind: 'ambiguous' });
    expect(
      chooseCredential([
        { source: 'authorization', principal: null },
        { source: 'x-authorization', principal: principalOf('5') },
      ]),
    ).toEqual({ kind: 'invalid', source: 'authorization' });
  });
});

describe('SE-05 sign-in changes end other sessions', () => {
  const spec = deciderSpec(userDecider);
  const started = (hash: string): IdentityEvent => ({
    type: 'SessionStarted',
    data: {
      userId: 5,
      sessionHash: hash.repeat(64),
      csrfHash: 'f'.repeat(64),
      absoluteExpiresAt: '2026-11-22T20:00:00.000Z',
    },
  });
  const ended = (hash: string, reason: 'logout' | 'password-changed' | 'deactivated'): IdentityEvent => ({
    type: 'SessionEnded',
    data: { userId: 5, sessionHash: hash.repeat(64), reason },
  });

  test('a new password ends every live session but the one that set it', () => {
    spec
      .given([member, started('a'), started('b'), started('c'), ended('c', 'logout')])
      .when({ kind: 'SetPassword', passwordHash: 'scrypt$x', keepSession: 'a'.repeat(64) })
      .then([
        { type: 'UserPasswordSet', data: { userId: 5, passwordHash: 'scrypt$x' } },
        ended('b', 'password-changed'),
      ]);
  });

  test('deactivation ends them all', () => {
    spec
      .given([member, started('a'), started('b')])
      .when({ kind: 'DeactivateUser', caller: admin })
      .then([
        { type: 'UserDeactivated', data: { userId: 5 } },
        ended('a', 'deactivated'),
        ended('b', 'deactivated'),
      ]);
  });
});
