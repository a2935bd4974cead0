import type {
  AuthorizationCodeIssuedData,
  AuthorizationCodeRedeemedData,
  RefreshTokenRotatedData,
} from '../../contracts/events/oauth';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import type { ReadModelChange } from '../../contracts/read-model-changes';
import type { Projection } from '../projection';
import { createdColumns, updatedColumns } from './common';
import { entityProjection, setAllBut } from './entity';

/** OAuth client registrations as listed and read (never their secret's hash). */
const clients = entityProjection({
  name: 'oauth',
  category: 'oauthClient',
  collection: READ_MODELS.oauthClients,
  indexes: [{ name: 'tenant_name', paths: ['tenant', 'clientName'] }],
  idKey: 'clientId',
  created: 'OAuthClientRegistered',
  deleted: 'OAuthClientDeleted',
  omit: ['secretHash'],
  patches: {
    OAuthClientChanged: setAllBut('clientId'),
    // The secret changed: only the audit columns move (the hash stays out of the read model).
    OAuthClientSecretSet: () => ({ set: {} }),
  },
});

/**
 * Grants as access tokens are checked against them on every request (whose, which client, still good) and as
 * their users list them (OA-33: scope, until when). Never a hash of a code or token.
 */
function grantChanges(event: Parameters<Projection['project']>[0], collection: string): ReadModelChange[] {
  const { tenant } = event.metadata;
  const data = event.data as { grantId: string };
  const id = documentId(tenant, data.grantId);
  const position = event.position;
  switch (event.type) {
    case 'AuthorizationCodeIssued': {
      const { grantId, clientId, userId, scope } = event.data as AuthorizationCodeIssuedData;
      return [
        {
          op: 'upsert',
          collection,
          position,
          doc: {
            id,
            grantId,
            clientId,
            userId,
            scope,
            status: 'issued',
            expiresAt: null,
            ...createdColumns(event),
          },
        },
      ];
    }
    case 'AuthorizationCodeRedeemed': {
      const { expiresAt } = event.data as AuthorizationCodeRedeemedData;
      return [
        {
          op: 'patch',
          collection,
          position,
          id,
          set: { status: 'active', expiresAt, ...updatedColumns(event) },
        },
      ];
    }
    case 'RefreshTokenRotated': {
      const { scope } = event.data as RefreshTokenRotatedData;
      return [{ op: 'patch', collection, position, id, set: { scope, ...updatedColumns(event) } }];
    }
    case 'OAuthGrantRevoked':
      return [
        { op: 'patch', collection, position, id, set: { status: 'revoked', ...updatedColumns(event) } },
      ];
    default:
      return [];
  }
}

/** OAuth: client registrations and grants. */
export const oauthProjection: Projection = {
  name: 'oauth',
  categories: ['oauthClient', 'oauthGrant'],
  collections: {
    ...clients.collections,
    [READ_MODELS.oauthGrants]: [
      { name: 'tenant_client', paths: ['tenant', 'clientId'] },
      { name: 'tenant_user', paths: ['tenant', 'userId'] },
    ],
  },
  project(event, collection) {
    return event.streamId.startsWith('oauthGrant-')
      ? grantChanges(event, collection(READ_MODELS.oauthGrants))
      : clients.project(event, collection);
  },
};
