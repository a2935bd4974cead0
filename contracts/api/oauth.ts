/**
 * The OAuth 2.0 authorization server: client registrations, the authorization code flow with PKCE (and its
 * consent page), the token, renew, revoke and introspection endpoints, token info, userinfo, the user's grants
 * and the server's metadata (RFC 8414). The protocol endpoints check their parameters one by one as RFC 6749
 * requires and answer refusals in its shape (`{error, error_description}`); the schemas below describe exactly
 * those parameters.
 */
import { z } from 'zod';
import { GRANT_TYPES, grantTypesSchema, redirectUrisSchema, scopeSchema } from '../oauth';
import { operation } from './operation';
import { etagHeader, listQuery, locationHeader, pageOf, READ_ERRORS, WRITE_ERRORS } from './shared';

/** The RFC 6749 error body of the protocol endpoints. */
export const oauthErrorSchema = z
  .object({
    error: z
      .enum([
        'invalid_request',
        'invalid_client',
        'invalid_grant',
        'unauthorized_client',
        'unsupported_grant_type',
        'invalid_scope',
        'unsupported_response_type',
        'access_denied',
        'invalid_token',
        'temporarily_unavailable',
      ])
      .meta({ description: 'The RFC 6749 / 7009 / 7662 error word.' }),
    error_description: z.string(),
  })
  .meta({ id: 'OAuthError' });
const oauthRefusals = {
  400: {
    description: 'The request or the grant is refused (`invalid_request`, `invalid_grant`…).',
    schema: oauthErrorSchema,
  },
  401: { description: 'The client could not be authenticated (`invalid_client`).', schema: oauthErrorSchema },
  429: {
    description: 'Too many failed client authentications or introspections (`Retry-After`).',
    schema: oauthErrorSchema,
  },
};
const clientAuthentication =
  'The client authenticates with HTTP Basic (`client_id:client_secret`, each form-urlencoded) or with ' +
  '`client_id` and `client_secret` in the body; never in the query string.';
const FORM_OR_JSON = ['application/x-www-form-urlencoded', 'application/json'];

// Client registrations

const clientName = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200)
  .meta({ description: 'Shown on the consent page.' });
export const createClientBody = z
  .strictObject({
    clientName,
    redirectUris: redirectUrisSchema.meta({
      description: 'Where codes may be sent (exact match; at most 5).',
    }),
    scope: scopeSchema
      .default('')
      .meta({ description: 'The scope the client may ask for (space-separated).' }),
    grantTypes: grantTypesSchema.default([...GRANT_TYPES]),
  })
  .meta({
    id: 'OAuthClientCreate',
    example: {
      clientName: 'Reporting',
      redirectUris: ['https://reports.example/callback'],
      scope: 'record:read',
    },
  });
export const updateClientBody = z
  .strictObject({
    clientName: clientName.optional(),
    clientSecret: z
      .string()
      .min(32, 'a client secret has at least 32 characters')
      .max(512)
      .optional()
      .meta({ description: 'A secret of your choosing (at least 32 characters).' }),
    redirectUris: redirectUrisSchema.optional(),
    scope: scopeSchema.optional(),
    grantTypes: grantTypesSchema.optional(),
    regenerateSecret: z
      .boolean()
      .optional()
      .meta({ description: 'Rotate the secret: the new one is in the answer.' }),
  })
  .meta({ id: 'OAuthClientUpdate' });
export const clientIdParams = z.object({
  clientId: z
    .string()
    .regex(/^rpc_[0-9a-f]{24}$/, 'not a client id')
    .meta({ description: 'The client id (`rpc_…`).' }),
});
const clientCore = {
  clientId: z.string(),
  clientName: z.string(),
  redirectUris: z.array(z.string()),
  scope: z.string(),
  grantTypes: z.array(z.enum(GRANT_TYPES)),
};
const clientWritten = z.object(clientCore).meta({ id: 'OAuthClientWritten' });
const client = z
  .object({ ...clientCore, createdAt: z.string(), updatedAt: z.string() })
  .meta({ id: 'OAuthClient' });

export const listOAuthClients = operation({
  operationId: 'listOAuthClients',
  method: 'get',
  path: '/auth/oauth/client',
  tag: 'oauth',
  summary: 'List OAuth client registrations (never their secrets)',
  query: listQuery,
  responses: {
    200: { description: 'A page of clients.', schema: pageOf(client, 'OAuthClientPage') },
    ...READ_ERRORS,
  },
  security: 'token',
});
export const getOAuthClient = operation({
  operationId: 'getOAuthClient',
  method: 'get',
  path: '/auth/oauth/client/{clientId}',
  tag: 'oauth',
  summary: 'Read an OAuth client registration',
  params: clientIdParams,
  responses: { 200: { description: 'The client.', schema: client, headers: etagHeader }, ...READ_ERRORS },
  security: 'token',
});
export const createOAuthClient = operation({
  operationId: 'createOAuthClient',
  method: 'post',
  path: '/auth/oauth/client',
  tag: 'oauth',
  summary: 'Register an OAuth client: its secret is in this answer only',
  body: { schema: createClientBody },
  responses: {
    201: {
      description: 'The client with its generated `clientId` and `clientSecret`.',
      schema: clientWritten.extend({ clientSecret: z.string() }).meta({ id: 'OAuthClientRegistered' }),
      headers: { ...locationHeader, ...etagHeader },
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});
export const updateOAuthClient = operation({
  operationId: 'updateOAuthClient',
  method: 'put',
  path: '/auth/oauth/client/{clientId}',
  tag: 'oauth',
  summary: 'Change an OAuth client (or rotate its secret)',
  params: clientIdParams,
  body: { schema: updateClientBody },
  responses: {
    200: {
      description: 'The client; `clientSecret` only when it was regenerated.',
      schema: clientWritten
        .extend({ clientSecret: z.string().optional() })
        .meta({ id: 'OAuthClientChanged' }),
      headers: etagHeader,
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});
export const deleteOAuthClient = operation({
  operationId: 'deleteOAuthClient',
  method: 'delete',
  path: '/auth/oauth/client/{clientId}',
  tag: 'oauth',
  summary: 'Delete an OAuth client: its tokens stop working',
  params: clientIdParams,
  responses: {
    200: {
      description: 'The client was deleted.',
      schema: z.object({ clientId: z.string(), deleted: z.literal(true) }).meta({ id: 'OAuthClientDeleted' }),
      headers: etagHeader,
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});

// The authorization code flow

export const authorizeQuery = z
  .object({
    response_type: z.literal('code').meta({ description: 'Only `code`.' }),
    client_id: z.string(),
    redirect_uri: z.string().meta({ description: 'A registered redirect URI of the client.' }),
    state: z.string().optional().meta({ description: 'Returned as is: protects the client against CSRF.' }),
    scope: z.string().optional().meta({ description: "Space-separated; default the client's scope." }),
    code_challenge: z.string().optional().meta({ description: 'PKCE (RFC 7636): the S256 challenge.' }),
    code_challenge_method: z.literal('S256').optional(),
  })
  .meta({ id: 'AuthorizeRequest' });
export const authorize = operation({
  operationId: 'authorize',
  method: 'get',
  path: '/auth/oauth/authorize',
  tag: 'oauth',
  summary: 'Authorize a client: a code for its redirect URI',
  description:
    'Called with a bearer token (`Authorization` or `X-Authorization`), the holder consents by calling: 302 to ' +
    '`redirect_uri` with `code`, `state` and `iss`. A browser signed in by the session cookie gets the consent page ' +
    'first. A refusal after the client and redirect URI are known goes to the redirect URI as `error`; before, it ' +
    'is a 400 `{error, error_description}`.',
  query: authorizeQuery,
  servedByCommandApi: true,
  responses: {
    200: { description: 'The consent page (session cookie).', schema: z.string(), contentType: 'text/html' },
    302: {
      description: 'Back to the client: `code` (or `error`), `state`, `iss`.',
      headers: { Location: 'The redirect URI with the answer in its query.' },
    },
    400: { description: 'Unknown client or unregistered redirect URI.', schema: oauthErrorSchema },
  },
  security: 'token',
});
export const consentBody = z
  .strictObject({
    ticket: z.string().max(16_384).meta({ description: "The consent page's single-use ticket." }),
    decision: z.enum(['allow', 'deny']),
  })
  .meta({ id: 'ConsentAnswer' });
export const answerConsent = operation({
  operationId: 'answerConsent',
  method: 'post',
  path: '/auth/oauth/authorize',
  tag: 'oauth',
  summary: "The consent page's Allow / Deny (a form post in the signed-in browser)",
  body: { schema: consentBody, contentTypes: ['application/x-www-form-urlencoded'] },
  sessionForm: true,
  responses: {
    302: {
      description: 'Back to the client with `code` (allow) or `error=access_denied` (deny).',
      headers: { Location: 'The redirect URI with the answer in its query.' },
    },
    400: {
      description: 'A malformed, replayed or foreign answer: a page that says so.',
      schema: z.string(),
      contentType: 'text/html',
    },
    403: {
      description: 'Not the browser session that was asked: a page that says so.',
      schema: z.string(),
      contentType: 'text/html',
    },
  },
  security: 'token',
});

export const tokenRequestBody = z
  .object({
    grant_type: z.enum(GRANT_TYPES),
    code: z.string().optional().meta({ description: 'For `authorization_code`.' }),
    redirect_uri: z
      .string()
      .optional()
      .meta({ description: 'For `authorization_code`: as sent to authorize.' }),
    code_verifier: z
      .string()
      .optional()
      .meta({ description: 'PKCE: required when authorize had a challenge.' }),
    refresh_token: z.string().optional().meta({ description: 'For `refresh_token`.' }),
    scope: z.string().optional().meta({ description: 'For `refresh_token`: a narrower scope.' }),
    client_id: z
      .string()
      .optional()
      .meta({ description: 'Client authentication in the body (or HTTP Basic).' }),
    client_secret: z.string().optional(),
  })
  .meta({ id: 'TokenRequest' });
const tokenAnswer = z
  .object({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().meta({ description: 'Seconds.' }),
    refresh_token: z.string(),
    scope: z.string(),
  })
  .meta({ id: 'TokenAnswer' });
export const exchangeToken = operation({
  operationId: 'exchangeToken',
  method: 'post',
  path: '/auth/oauth/token',
  tag: 'oauth',
  summary: 'Exchange a code (or a refresh token) for tokens',
  description: `${clientAuthentication} A code works once; its second use revokes every token issued from it.`,
  body: { schema: tokenRequestBody, contentTypes: FORM_OR_JSON },
  responses: { 200: { description: 'The tokens.', schema: tokenAnswer }, ...oauthRefusals },
  security: 'client',
});
export const renewToken = operation({
  operationId: 'renewToken',
  method: 'post',
  path: '/auth/oauth/renew',
  tag: 'oauth',
  summary: 'Exchange a refresh token for a new access and refresh token pair',
  description: `The refresh_token grant under the spec's name (\`grant_type\` may be left out). ${clientAuthentication}`,
  body: {
    schema: tokenRequestBody
      .extend({ grant_type: z.literal('refresh_token').optional() })
      .meta({ id: 'RenewRequest' }),
    contentTypes: FORM_OR_JSON,
  },
  responses: { 200: { description: 'The tokens.', schema: tokenAnswer }, ...oauthRefusals },
  security: 'client',
});
const tokenBody = z
  .object({
    token: z.string().meta({ description: 'An access or a refresh token.' }),
    client_id: z.string().optional(),
    client_secret: z.string().optional(),
  })
  .meta({ id: 'TokenInQuestion' });
export const revokeOAuthToken = operation({
  operationId: 'revokeOAuthToken',
  method: 'post',
  path: '/auth/oauth/revoke',
  tag: 'oauth',
  summary: 'Revoke a token and its grant (RFC 7009)',
  description: `Answers the same whether or not the token existed. ${clientAuthentication}`,
  body: { schema: tokenBody, contentTypes: FORM_OR_JSON },
  responses: {
    200: {
      description: 'Done.',
      schema: z.object({ revoked: z.literal(true) }).meta({ id: 'OAuthTokenRevoked' }),
    },
    ...oauthRefusals,
  },
  security: 'client',
});
export const introspectToken = operation({
  operationId: 'introspectToken',
  method: 'post',
  path: '/auth/oauth/introspect',
  tag: 'oauth',
  summary: 'Whether a token is active, and what it grants (RFC 7662)',
  description: `Limited per client per minute (\`OAUTH_INTROSPECTIONS_PER_MINUTE\`). ${clientAuthentication}`,
  body: { schema: tokenBody, contentTypes: FORM_OR_JSON },
  responses: {
    200: {
      description: '`{active: false}`, or the active token.',
      schema: z
        .object({
          active: z.boolean(),
          client_id: z.string().optional(),
          scope: z.string().optional(),
          sub: z.string().optional(),
          token_type: z.enum(['Bearer', 'refresh_token']).optional(),
          exp: z.number().int().optional(),
          iat: z.number().int().optional(),
          aud: z.string().optional(),
        })
        .meta({ id: 'Introspection' }),
    },
    ...oauthRefusals,
  },
  security: 'client',
});

export const getTokenInfo = operation({
  operationId: 'getTokenInfo',
  method: 'get',
  path: '/auth/oauth/token-info',
  tag: 'oauth',
  summary: 'What an access token grants, and until when',
  query: z.object({ token: z.string().meta({ description: 'An access token.' }) }),
  responses: {
    200: {
      description: 'The token.',
      schema: z
        .object({ client_id: z.string(), scope: z.array(z.string()), exp: z.number().int() })
        .meta({ id: 'TokenInfo' }),
    },
    400: { description: '`invalid_token`: invalid, expired or revoked.', schema: oauthErrorSchema },
  },
  security: 'none',
});
export const getUserinfo = operation({
  operationId: 'getUserinfo',
  method: 'get',
  path: '/auth/oauth/userinfo',
  tag: 'oauth',
  summary: "The access token's user (OpenID Connect userinfo)",
  responses: {
    200: {
      description: 'The user.',
      schema: z
        .object({ sub: z.string(), email: z.string(), email_verified: z.boolean(), name: z.string() })
        .meta({ id: 'Userinfo' }),
    },
  },
  security: 'token',
});

// The user's grants

export const grantIdParams = z.object({
  grantId: z
    .string()
    .regex(/^[0-9a-f]{32}$/, 'must be a grant id (32 hexadecimal digits)')
    .meta({ description: 'The grant.' }),
});
export const listOAuthGrants = operation({
  operationId: 'listOAuthGrants',
  method: 'get',
  path: '/auth/oauth/grant',
  tag: 'oauth',
  summary: 'The OAuth grants the calling user gave, newest first',
  responses: {
    200: {
      description: 'The active grants.',
      schema: z
        .object({
          items: z.array(
            z.object({
              grantId: z.string(),
              clientId: z.string(),
              clientName: z.string(),
              scope: z.string(),
              createdAt: z.string(),
              expiresAt: z.string(),
            }),
          ),
        })
        .meta({ id: 'OAuthGrants' }),
    },
    ...READ_ERRORS,
  },
  security: 'token',
});
export const revokeOAuthGrant = operation({
  operationId: 'revokeOAuthGrant',
  method: 'delete',
  path: '/auth/oauth/grant/{grantId}',
  tag: 'oauth',
  summary: 'Revoke a grant the calling user gave: its tokens stop working',
  params: grantIdParams,
  responses: {
    200: {
      description: 'The grant was revoked.',
      schema: z.object({ grantId: z.string(), revoked: z.literal(true) }).meta({ id: 'OAuthGrantRevoked' }),
      headers: etagHeader,
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});

export const getAuthorizationServerMetadata = operation({
  operationId: 'getAuthorizationServerMetadata',
  method: 'get',
  path: '/.well-known/oauth-authorization-server',
  tag: 'oauth',
  summary: "The authorization server's metadata (RFC 8414)",
  responses: {
    200: {
      description: 'Endpoints and what they support.',
      schema: z
        .object({
          issuer: z.string(),
          authorization_endpoint: z.string(),
          token_endpoint: z.string(),
          revocation_endpoint: z.string(),
          introspection_endpoint: z.string(),
          userinfo_endpoint: z.string(),
        })
        .loose()
        .meta({ id: 'AuthorizationServerMetadata' }),
    },
  },
  security: 'none',
  root: true,
});

export const OAUTH_OPERATIONS = [
  listOAuthClients,
  getOAuthClient,
  createOAuthClient,
  updateOAuthClient,
  deleteOAuthClient,
  authorize,
  answerConsent,
  exchangeToken,
  renewToken,
  revokeOAuthToken,
  introspectToken,
  getTokenInfo,
  getUserinfo,
  listOAuthGrants,
  revokeOAuthGrant,
  getAuthorizationServerMetadata,
];
