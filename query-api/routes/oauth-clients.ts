import type { Router } from 'express';
import { PlatformError } from '../../contracts/errors';
import { AUDIT_COLUMNS } from '../../languages/filter/record-fields';
import { catalogue } from '../../languages/filter/resolve';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import { validate } from '../../contracts/validation';
import { sendJson } from '../../infra/http/respond';
import { clientIdParams, getOAuthClient, listOAuthClients } from '../../contracts/api/oauth';
import { mount } from '../../infra/http/operations';
import type { Document } from '../../contracts/read-model-changes';
import { etagOf } from '../../infra/http/conditional';
import { awaitConsistency } from '../consistency';
import { authorize, readPage, type EntityDescription, type EntityReadDeps } from './entities';

const OAUTH_CLIENTS: EntityDescription = {
  module: 'oauthClient',
  collection: READ_MODELS.oauthClients,
  projection: 'oauth',
  fields: catalogue({
    clientId: { path: 'clientId', type: 'string' },
    clientName: { path: 'clientName', type: 'string' },
    ...AUDIT_COLUMNS,
  }),
  view: (doc: Document) => ({
    clientId: doc.clientId,
    clientName: doc.clientName,
    redirectUris: doc.redirectUris,
    scope: doc.scope,
    grantTypes: doc.grantTypes,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  }),
  noun: 'OAuth client',
  defaultOrder: [{ path: 'createdAt', direction: 'asc' }],
};

/** `GET /auth/oauth/client` (a list page) and `GET /auth/oauth/client/{clientId}`; never a secret. */
export function addOAuthClientReadRoutes(router: Router, deps: EntityReadDeps): void {
  mount(router, listOAuthClients, async (req, res) => {
    sendJson(res, 200, await readPage(req, deps, OAUTH_CLIENTS));
  });

  mount(router, getOAuthClient, async (req, res) => {
    const tenant = authorize(req, OAUTH_CLIENTS.module, 'read');
    const { clientId } = validate(clientIdParams, req.params, 'path');
    await awaitConsistency(req, deps.consistency, [OAUTH_CLIENTS.projection]);
    const doc = await deps.readModels.get(tenant, OAUTH_CLIENTS.collection, documentId(tenant, clientId));
    if (!doc) throw new PlatformError('not_found', `OAuth client ${clientId} not found`);
    sendJson(res, 200, OAUTH_CLIENTS.view(doc), { ETag: etagOf(Number(doc.revision ?? 0)) });
  });
}
