import type { Router } from 'express';
import {
  clientIdParams,
  createClientBody,
  createOAuthClient,
  deleteOAuthClient,
  updateClientBody,
  updateOAuthClient,
} from '../../../contracts/api/oauth';
import { PlatformError } from '../../../contracts/errors';
import { mount } from '../../../infra/http/operations';
import { streamName } from '../../../contracts/streams';
import { validate } from '../../../contracts/validation';
import type { CommandDeps } from '../../deps';
import { oauthClientDecider, type OAuthClientState } from '../domain/oauth-client';
import { authorize, commandContext, preconditions, sendResult } from '../../kit/route-context';
import { changeClient, registerClient } from '../commands';

function clientView(state: OAuthClientState): Record<string, unknown> {
  return { ...state.client };
}

/** OAuth 2.0 client registrations (`/auth/oauth/client`): the secret is in the answer only when it is new. */
export function addOAuthClientRoutes(router: Router, deps: CommandDeps): void {
  mount(router, createOAuthClient, async (req, res) => {
    const principal = authorize(req, 'oauthClient', 'create');
    const body = validate(createClientBody, req.body, 'body');
    const { result, clientId, clientSecret } = await registerClient(
      deps,
      body,
      commandContext(req, principal, deps.newCommandId()),
    );
    res.setHeader('Location', `${req.baseUrl}/auth/oauth/client/${clientId}`);
    res.setHeader('Cache-Control', 'no-store');
    sendResult(res, 201, result, { ...clientView(result.state), clientSecret });
  });

  mount(router, updateOAuthClient, async (req, res) => {
    const principal = authorize(req, 'oauthClient', 'update');
    const { clientId } = validate(clientIdParams, req.params, 'path');
    const change = validate(updateClientBody, req.body, 'body');
    if (change.clientSecret !== undefined && change.regenerateSecret)
      throw new PlatformError('validation_failed', 'send clientSecret or regenerateSecret, not both');
    const { result, newSecret } = await changeClient(
      deps,
      clientId,
      change,
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    res.setHeader('Cache-Control', 'no-store');
    sendResult(res, 200, result, {
      ...clientView(result.state),
      ...(newSecret !== undefined && { clientSecret: newSecret }),
    });
  });

  mount(router, deleteOAuthClient, async (req, res) => {
    const principal = authorize(req, 'oauthClient', 'delete');
    const { clientId } = validate(clientIdParams, req.params, 'path');
    const result = await deps.handler.handle(
      streamName('oauthClient', principal.tenant, clientId),
      oauthClientDecider,
      { kind: 'DeleteClient' },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, { clientId, deleted: true });
  });
}
