import { randomBytes } from 'node:crypto';
import type { Router } from 'express';
import { z } from 'zod';
import { PlatformError } from '../../contracts/errors';
import { GRANT_TYPES, grantTypesSchema, redirectUrisSchema, scopeSchema } from '../../contracts/oauth';
import { hashToken } from '../../contracts/secrets';
import { streamName } from '../../contracts/streams';
import { validate } from '../../contracts/validation';
import type { CommandDeps } from '../deps';
import { oauthClientDecider, type OAuthClientState } from '../domain/oauth-client';
import { authorize, commandContext, preconditions, sendResult } from './context';

const clientName = z.string().trim().min(1, 'must not be empty').max(200);
const createClient = z.strictObject({
  clientName,
  redirectUris: redirectUrisSchema,
  scope: scopeSchema.default(''),
  grantTypes: grantTypesSchema.default([...GRANT_TYPES]),
});
const updateClient = z.strictObject({
  clientName: clientName.optional(),
  /** A secret of the client's choosing (the spec allows it): at least 32 characters. */
  clientSecret: z.string().min(32, 'a client secret has at least 32 characters').max(512).optional(),
  redirectUris: redirectUrisSchema.optional(),
  scope: scopeSchema.optional(),
  grantTypes: grantTypesSchema.optional(),
  regenerateSecret: z.boolean().optional(),
});
const clientIdParam = z.object({ clientId: z.string().regex(/^rpc_[0-9a-f]{24}$/, 'not a client id') });

function newClientSecret(): string {
  return `rpcs_${randomBytes(32).toString('base64url')}`;
}

export function clientView(state: OAuthClientState): Record<string, unknown> {
  return { ...state.client };
}

/** OAuth 2.0 client registrations (`/auth/oauth/client`): the secret is in the answer only when it is new. */
export function addOAuthClientRoutes(router: Router, deps: CommandDeps): void {
  router.post('/auth/oauth/client', async (req, res) => {
    const principal = authorize(req, 'oauthClient', 'create');
    const body = validate(createClient, req.body, 'body');
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

  router.put('/auth/oauth/client/:clientId', async (req, res) => {
    const principal = authorize(req, 'oauthClient', 'update');
    const { clientId } = validate(clientIdParam, req.params, 'path');
    const {
      clientSecret: chosenSecret,
      regenerateSecret,
      ...settings
    } = validate(updateClient, req.body, 'body');
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

  router.delete('/auth/oauth/client/:clientId', async (req, res) => {
    const principal = authorize(req, 'oauthClient', 'delete');
    const { clientId } = validate(clientIdParam, req.params, 'path');
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
