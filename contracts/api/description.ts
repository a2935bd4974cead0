/**
 * The API description itself: the OpenAPI documents of the current and the released versions, the AsyncAPI
 * document of the outgoing events, and the docs page.
 */
import { z } from 'zod';
import { operation } from './operation';

/** A released version as `/<version>.json` names it. */
export const versionText = z
  .string()
  .regex(/^(?:0|[1-9]\d{0,5})\.(?:0|[1-9]\d{0,5})\.(?:0|[1-9]\d{0,5})$/, 'must be a version such as 5.8.2')
  .meta({ description: 'A released version of the API.', example: '5.8.2' });

const openApiDocument = z
  .object({
    openapi: z.string(),
    info: z.object({ version: z.string() }).loose(),
    paths: z.record(z.string(), z.unknown()),
  })
  .loose()
  .meta({ id: 'OpenApiDocument', description: 'An OpenAPI 3.1 document.' });

export const getLatestApiDescription = operation({
  operationId: 'getLatestApiDescription',
  method: 'get',
  path: '/latest.json',
  tag: 'api description',
  summary: 'The OpenAPI document of the current version',
  responses: { 200: { description: 'The OpenAPI 3.1 document.', schema: openApiDocument } },
  security: 'none',
});

const asyncApiDocument = z
  .object({
    asyncapi: z.string(),
    info: z.object({ version: z.string() }).loose(),
    channels: z.record(z.string(), z.unknown()),
  })
  .loose()
  .meta({ id: 'AsyncApiDocument', description: 'An AsyncAPI 3 document.' });

export const getAsyncApiDescription = operation({
  operationId: 'getAsyncApiDescription',
  method: 'get',
  path: '/asyncapi.json',
  tag: 'api description',
  summary: 'The AsyncAPI document of the outgoing events',
  description:
    'The public events a subscription receives, with their schemas and the Standard Webhooks headers of a delivery ' +
    '(the same events as the `webhooks` of the OpenAPI document).',
  responses: { 200: { description: 'The AsyncAPI 3 document.', schema: asyncApiDocument } },
  security: 'none',
});

export const getApiDescription = operation({
  operationId: 'getApiDescription',
  method: 'get',
  path: '/{version}.json',
  tag: 'api description',
  summary: 'The OpenAPI document of a released version',
  params: z.object({ version: versionText }),
  responses: { 200: { description: 'The OpenAPI 3.1 document of that version.', schema: openApiDocument } },
  security: 'none',
});

export const getApiDocsPage = operation({
  operationId: 'getApiDocsPage',
  method: 'get',
  path: '/docs',
  tag: 'api description',
  summary: 'The API reference as a web page (Swagger UI)',
  responses: { 200: { description: 'The page.', schema: z.string(), contentType: 'text/html' } },
  security: 'none',
  root: true,
});

export const API_DESCRIPTION_OPERATIONS = [
  getLatestApiDescription,
  getAsyncApiDescription,
  getApiDescription,
  getApiDocsPage,
];
