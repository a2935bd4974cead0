import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildAsyncApiDocument } from '../contracts/api/asyncapi';
import { buildOpenApiDocument } from '../contracts/api/document';
import { API_VERSION, OPERATIONS } from '../contracts/api/index';
import { API_BASE } from '../infra/http/operations';
import { servedDocument, type ApiDescriptions, type ServedDocument } from '../query-api/app';

/** The committed documents of released versions: `openapi/` beside bin/ (from source) or beside dist/. */
export function releasedDocumentsDir(): string {
  const candidates = [join(__dirname, '..', 'openapi'), join(__dirname, '..', '..', 'openapi')];
  return candidates.find((dir) => existsSync(dir)) ?? candidates[0]!;
}

/** The current document as the route table describes it, as the committed file holds it (2-space JSON). */
export function currentDocumentJson(version = API_VERSION): string {
  return `${JSON.stringify(buildOpenApiDocument(OPERATIONS, { version, serverUrl: API_BASE }), null, 2)}\n`;
}

/** The AsyncAPI document of the outgoing events, of the current version (built at start, never committed). */
export function currentAsyncApiJson(): string {
  return JSON.stringify(buildAsyncApiDocument(API_VERSION));
}

/**
 * What `/latest.json`, `/asyncapi.json` and `/<version>.json` serve: the current documents built now, the
 * released ones as committed.
 */
export function loadApiDescriptions(dir = releasedDocumentsDir()): ApiDescriptions {
  const released = new Map<string, ServedDocument>();
  const files = existsSync(dir) ? readdirSync(dir).filter((name) => /^\d+\.\d+\.\d+\.json$/.test(name)) : [];
  for (const file of files) {
    const version = file.slice(0, -'.json'.length);
    if (version !== API_VERSION) released.set(version, servedDocument(readFileSync(join(dir, file), 'utf8')));
  }
  return {
    current: { version: API_VERSION, document: servedDocument(currentDocumentJson()) },
    released,
    asyncApi: servedDocument(currentAsyncApiJson()),
  };
}
