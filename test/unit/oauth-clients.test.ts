import { oauthClientDecider } from '../../command-api/oauth/domain/oauth-client';
import type { OAuthClientEvent } from '../../contracts/events/oauth';
import { redirectUriProblem } from '../../contracts/oauth';
import { deciderSpec } from '../support/given-when-then';

const client = {
  clientId: 'rpc_0123456789abcdef01234567',
  clientName: 'CRM',
  redirectUris: ['https://crm.example/cb'],
  scope: '',
  grantTypes: ['authorization_code' as const, 'refresh_token' as const],
  secretHash: 'a'.repeat(64),
};
const registered: OAuthClientEvent = { type: 'OAuthClientRegistered', data: client };

describe('OAuth client decider', () => {
  const spec = deciderSpec(oauthClientDecider);

  test('registers once; changes only what differs; a new secret is its own event', () => {
    spec.given([]).when({ kind: 'RegisterClient', client }).then([registered]);
    spec.given([registered]).when({ kind: 'RegisterClient', client }).thenThrows('conflict');
    spec
      .given([registered])
      .when({ kind: 'ChangeClient', clientName: 'CRM', scope: 'a', secretHash: 'b'.repeat(64) })
      .then([
        { type: 'OAuthClientChanged', data: { clientId: client.clientId, scope: 'a' } },
        { type: 'OAuthClientSecretSet', data: { clientId: client.clientId, secretHash: 'b'.repeat(64) } },
      ]);
    spec.given([registered]).when({ kind: 'ChangeClient', clientName: 'CRM' }).thenNothingHappens();
  });

  test('a deleted client is gone for every command', () => {
    const deleted: OAuthClientEvent = { type: 'OAuthClientDeleted', data: { clientId: client.clientId } };
    spec.given([registered, deleted]).when({ kind: 'DeleteClient' }).thenThrows('not_found');
    spec.given([registered, deleted]).when({ kind: 'ChangeClient', scope: 'x' }).thenThrows('not_found');
  });
});

describe('redirect URIs at registration', () => {
  test.each([
    ['https://crm.example/cb', null],
    ['http://127.0.0.1:9999/cb', null],
    ['http://[::1]/cb', null],
    ['http://localhost/cb', null],
    ['http://crm.example/cb', 'must be https (http only on a loopback address)'],
    ['https://crm.example/cb#x', 'must not have a fragment'],
    ['https://crm.example/cb#', 'must not have a fragment'],
    ['https://me@crm.example/cb', 'must not carry user information'],
    ['https://crm.example/*', 'must not contain wildcards'],
    ['javascript:alert(1)', 'must be https (http only on a loopback address)'],
    ['/relative', 'is not an absolute URL'],
  ])('%s → %s', (uri, problem) => {
    expect(redirectUriProblem(uri)).toBe(problem);
  });
});
