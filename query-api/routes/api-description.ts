import express, { type Router } from 'express';
import { getAbsoluteFSPath } from 'swagger-ui-dist';
import {
  getApiDescription,
  getApiDocsPage,
  getAsyncApiDescription,
  getLatestApiDescription,
  versionText,
} from '../../contracts/api/description';
import { PlatformError } from '../../contracts/errors';
import { validate } from '../../contracts/validation';
import { mount } from '../../infra/http/operations';
import { gzipSync } from 'node:zlib';
import { z } from 'zod';

/** An OpenAPI document as served: compact JSON, and gzipped once for the clients that take it. */
export interface ServedDocument {
  readonly json: string;
  readonly gzip: Buffer;
}

/** The documents served: built once at start, never per request. */
export interface ApiDescriptions {
  readonly current: { readonly version: string; readonly document: ServedDocument };
  /** Earlier releases (the committed `openapi/<version>.json` files), by version. */
  readonly released: ReadonlyMap<string, ServedDocument>;
  /** The AsyncAPI document of the outgoing events, of the current version. */
  readonly asyncApi: ServedDocument;
}

/** The served form of a document given as JSON text. */
export function servedDocument(json: string): ServedDocument {
  const compact = JSON.stringify(JSON.parse(json));
  return { json: compact, gzip: gzipSync(compact, { level: 9 }) };
}

const GZIP = /\bgzip\b/i;

const versionParams = z.object({ version: versionText });

function sendDocument(req: express.Request, res: express.Response, document: ServedDocument): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Cache-Control', 'public, max-age=300');
  res.setHeader('Vary', 'Accept-Encoding');
  const gzipped = GZIP.test(String(req.headers['accept-encoding'] ?? ''));
  if (gzipped) res.setHeader('Content-Encoding', 'gzip');
  const body = gzipped ? document.gzip : document.json;
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** `GET /latest.json`, `/asyncapi.json` and `/<version>.json` under the API base (no credential needed). */
export function addApiDescriptionRoutes(router: Router, descriptions: ApiDescriptions): void {
  mount(router, getLatestApiDescription, (req, res) => {
    sendDocument(req, res, descriptions.current.document);
  });
  // Before `/<version>.json`, which would otherwise take `asyncapi` for a version.
  mount(router, getAsyncApiDescription, (req, res) => {
    sendDocument(req, res, descriptions.asyncApi);
  });
  mount(router, getApiDescription, (req, res) => {
    const { version } = validate(versionParams, req.params, 'path');
    const document =
      version === descriptions.current.version
        ? descriptions.current.document
        : descriptions.released.get(version);
    if (document === undefined) {
      const known = [descriptions.current.version, ...descriptions.released.keys()].join(', ');
      throw new PlatformError('not_found', `no API description for version ${version}; published: ${known}`);
    }
    sendDocument(req, res, document);
  });
}

/** The docs page: Swagger UI from the swagger-ui-dist package (no CDN), reading `latest.json` of the API. */
function docsPage(apiBase: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Records Platform API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({ url: ${JSON.stringify(`${apiBase}/latest.json`)}, dom_id: '#swagger-ui', deepLinking: true });
</script>
</body>
</html>
`;
}

/** `/docs` and the Swagger UI files it loads (mounted at the host's root). */
export function apiDocsRouter(apiBase: string): Router {
  const router = express.Router();
  const page = docsPage(apiBase);
  mount(router, getApiDocsPage, (_req, res) => {
    res.type('html').send(page);
  });
  router.use('/docs', express.static(getAbsoluteFSPath(), { index: false, maxAge: '1h' }));
  return router;
}
