import { randomBytes } from 'node:crypto';
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
import { hashToken } from '../../../contracts/secrets';
import { streamName } from '../../../contracts/streams';
import { validate } from '../../../contracts/validation';
import type { CommandDeps } from '../../deps';
import { oauthClientDecider, type OAuthClientState } from '../domain/oauth-client';
import { authorize, commandContext, preconditions, sendResult } from '../../kit/route-context';

function newClientSecret(): string {
  return `rpcs_${randomBytes(32).toString('base64url')}`;
}

export function clientView(state: OAuthClientState): Record<string, unknown> {
  return { ...state.client };
}

/** OAuth 2.0 client registrations (`/auth/oauth/client`): the secret is in the answer only when it is new. */
export function addOAuthClientRoutes(router: Router, deps: CommandDeps): void {
  mount(router, createOAuthClient, async (req, res) => {
    const principal = authorize(req, 'oauthClient', 'create');
    const body = validate(createClientBody, req.body, 'body');
    const clientId = `rpc_${randomBytes(12).toString('hex')}`;
    const clientSecret = newClientSecret();
    const result = await deps.handler.handle(
      streamName('oauthClient', principal.tenant, clientId),
      oauthClientDecider,
      { kind: 'RegisterClient', client: { clientId, ...body, secretHash: hashToken(clientSecret) } },
      commandContext(req, principal, deps.newCommandId()),
      { newStream: true },
    );
    res.setHeader('Location', `${req.baseUrl}/auth/oauth/client/${clientId}`);
    res.setHeader('Cache-Control', 'no-store');
    sendResult(res, 201, result, { ...clientView(result.state), clientSecret });
  });

  mount(router, updateOAuthClient, async (req, res) => {
    const principal = authorize(req, 'oauthClient', 'update');
    const { clientId } = validate(clientIdParams, req.params, 'path');
    const {
      clientSecret: chosenSecret,
      regenerateSecret,
      ...settings
    } = validate(updateClientBody, req.body, 'body');
    if (chosenSecret !== undefined && regenerateSecret)
      throw new PlatformError('validation_failed', 'send clientSecret or regenerateSecret, not both');
    const secret = regenerateSecret ? newClientSecret() : chosenSecret;
    const result = await deps.handler.handle(
      streamName('oauthClient', principal.tenant, clientId),
      oauthClientDecider,
      { kind: 'ChangeClient', ...settings, ...(secret !== undefined && { secretHash: hashToken(secret) }) },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    res.setHeader('Cache-Control', 'no-store');
    sendResult(res, 200, result, {
      ...clientView(result.state),
      ...(regenerateSecret && { clientSecret: secret }),
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
