/**
 * The OpenAPI 3.1 document of the API, built from the operation table with zod-openapi: request shapes from
 * the schemas handlers validate with, response shapes from the schemas their answers are checked against in
 * the tests. Pure: the same table gives the same document, byte for byte.
 */
import { z } from 'zod';
import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponsesObject,
} from 'zod-openapi';
import type { Operation } from './operation';
import { OUTGOING_EVENTS_TAG, outgoingEventWebhooks } from './outgoing-events';

/** The one error body of the platform (contracts/errors.ts). */
export const errorBodySchema = z
  .object({
    code: z.string().meta({ description: 'Stable error code, such as `E4001`.', example: 'E4001' }),
    error: z.string().meta({
      description: 'Machine-readable word (RFC 6749 words on the OAuth endpoints).',
      example: 'validation_failed',
    }),
    message: z.string().meta({ description: 'What is wrong, for a person.' }),
    details: z.unknown().optional().meta({ description: 'Per-problem details, such as each invalid field.' }),
    requestId: z.string().optional().meta({ description: 'The `X-Request-Id` of the answer, for support.' }),
  })
  .meta({ id: 'Error', description: 'The error body every failing operation answers with.' });

/** The statuses the spec declares on every operation, with what each means here. */
export const COMMON_ERRORS: Readonly<Record<number, string>> = {
  400: 'The request is invalid: the message and `details` say what is wrong.',
  401: 'No valid credential was presented.',
  403: 'The credential lacks the permission, or the account must finish a step first.',
  404: 'The resource (or the system named by the host) does not exist.',
  500: 'An unexpected failure; the request id identifies it in the logs.',
};

const versionHeader = { 'X-Version': { $ref: '#/components/headers/XVersion' } };

/** The component name of each common error response. */
const COMMON_ERROR_NAMES: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  500: 'InternalError',
};

function errorResponse(description: string) {
  return {
    description,
    headers: versionHeader,
    content: { 'application/json': { schema: errorBodySchema } },
  };
}

function responsesOf(op: Operation): ZodOpenApiResponsesObject {
  const responses: ZodOpenApiResponsesObject = {};
  const statuses = new Set([
    ...Object.keys(op.responses).map(Number),
    ...Object.keys(COMMON_ERRORS).map(Number),
  ]);
  for (const status of [...statuses].sort((a, b) => a - b)) {
    const declared = op.responses[status];
    const key = String(status) as `${1 | 2 | 3 | 4 | 5}${string}`;
    if (declared === undefined) {
      responses[key] = { $ref: `#/components/responses/${COMMON_ERROR_NAMES[status]!}` };
      continue;
    }
    if (status >= 400 && declared.schema === undefined) {
      responses[key] = errorResponse(declared.description);
      continue;
    }
    const headers: Record<string, { description: string; schema: { type: 'string' } } | { $ref: string }> = {
      ...versionHeader,
    };
    for (const [name, description] of Object.entries(declared.headers ?? {}))
      headers[name] = { description, schema: { type: 'string' } };
    if (op.deprecatedBy !== undefined) {
      headers.Deprecation = {
        description: 'RFC 9745: this alias is deprecated.',
        schema: { type: 'string' },
      };
      headers.Link = {
        description: `The successor: \`<…${op.deprecatedBy}>; rel="successor-version"\`.`,
        schema: { type: 'string' },
      };
    }
    responses[key] = {
      description: declared.description,
      headers,
      ...(declared.schema !== undefined && {
        content: { [declared.contentType ?? 'application/json']: { schema: declared.schema } },
      }),
    };
  }
  return responses;
}

function operationObject(op: Operation): ZodOpenApiOperationObject {
  const requestParams: NonNullable<ZodOpenApiOperationObject['requestParams']> = {};
  if (op.params) requestParams.path = op.params;
  if (op.query) requestParams.query = op.query;
  if (op.headers) requestParams.header = op.headers;
  const description = [
    op.description,
    op.deprecatedBy === undefined ? undefined : `Deprecated: use \`${op.deprecatedBy}\` instead.`,
  ]
    .filter((part) => part !== undefined)
    .join('\n\n');
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    ...(description !== '' && { description }),
    ...(op.deprecatedBy !== undefined && { deprecated: true }),
    ...(Object.keys(requestParams).length > 0 && { requestParams }),
    ...(op.body && {
      requestBody: {
        required: op.body.required ?? true,
        content: Object.fromEntries(
          (op.body.contentTypes ?? ['application/json']).map((type) => [
            type,
            { schema: op.body!.schema, ...(op.body!.example !== undefined && { example: op.body!.example }) },
          ]),
        ),
      },
    }),
    responses: responsesOf(op),
    security: SECURITY[op.security],
  };
}

/**
 * Who may call: a bearer credential in either header; an OAuth client by HTTP Basic or by `client_id` and
 * `client_secret` in the body (the empty requirement); or anyone.
 */
const SECURITY: Readonly<Record<Operation['security'], Array<Record<string, string[]>>>> = {
  token: [{ Token: [] }, { XAuthorization: [] }],
  client: [{ ClientBasic: [] }, {}],
  none: [],
};

export interface DocumentInfo {
  readonly version: string;
  /** The base the paths are relative to, as clients should call it. */
  readonly serverUrl: string;
}

/** The OpenAPI 3.1 document of `operations`. */
export function buildOpenApiDocument(operations: readonly Operation[], info: DocumentInfo) {
  const paths: ZodOpenApiPathsObject = {};
  for (const op of operations)
    paths[op.path] = {
      ...paths[op.path],
      ...(op.root && { servers: [{ url: '/', description: 'The host itself, outside the API base.' }] }),
      [op.method]: operationObject(op),
    };
  const tags = [...new Set([...operations.map((op) => op.tag), OUTGOING_EVENTS_TAG])]
    .sort()
    .map((name) => ({ name }));
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Records Platform API',
      version: info.version,
      description:
        'Spaces, modules, records, fields and labels of a system, with sessions, API tokens and an OAuth 2.0 ' +
        'authorization server. Every response carries `X-Version`. Lists take `filter`, `offset`, `limit` and `order`. ' +
        'The `webhooks` are the public events a subscription receives (also described by `/asyncapi.json`).',
    },
    servers: [{ url: info.serverUrl }],
    tags,
    paths,
    webhooks: outgoingEventWebhooks(),
    components: {
      headers: {
        XVersion: {
          description: 'The deployed application version (omitted when unresolved).',
          schema: { type: 'string' },
        },
      },
      responses: Object.fromEntries(
        Object.entries(COMMON_ERROR_NAMES).map(([status, name]) => [
          name,
          errorResponse(COMMON_ERRORS[Number(status)]!),
        ]),
      ),
      securitySchemes: {
        Token: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API token, an OAuth access token or a session id: `Authorization: Bearer <token>`.',
        },
        XAuthorization: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Authorization',
          description:
            'The same credential in `X-Authorization: Bearer <token>`, for clients whose `Authorization` header is taken.',
        },
      },
    },
  });
}
