import { READ_MODELS } from '../../contracts/read-models';
import { entityProjection, setAllBut } from './entity';

/** OAuth client registrations as listed and read (never their secret's hash). */
export const oauthClientsProjection = entityProjection({
  name: 'oauth-clients',
  category: 'oauthClient',
  collection: READ_MODELS.oauthClients,
  indexes: [{ name: 'tenant_name', paths: ['tenant', 'clientName'] }],
  idKey: 'clientId',
  created: 'OAuthClientRegistered',
  deleted: 'OAuthClientDeleted',
  patches: {
    OAuthClientChanged: setAllBut('clientId'),
    // The secret changed: only the audit columns move (the hash stays out of the read model).
    OAuthClientSecretSet: () => ({ set: {} }),
  },
  omit: ['secretHash'],
});
