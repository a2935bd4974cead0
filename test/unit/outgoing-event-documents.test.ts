import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Parser } from '@asyncapi/parser';
import { buildAsyncApiDocument } from '../../contracts/api/asyncapi';
import { API_VERSION } from '../../contracts/api/index';
import { PUBLIC_EVENT_TYPE_NAMES, publicEventSchemaId } from '../../contracts/public-events';
import { currentAsyncApiJson, currentDocumentJson } from '../../bin/api-descriptions';

interface JsonObject {
  readonly [key: string]: unknown;
}
const openApi = JSON.parse(currentDocumentJson()) as {
  webhooks: Record<string, { post: JsonObject & { parameters: Array<{ name: string; in: string }> } }>;
  components: { schemas: Record<string, unknown> };
};
const asyncApi = JSON.parse(currentAsyncApiJson()) as {
  asyncapi: string;
  info: { version: string };
  channels: Record<string, { messages: Record<string, unknown> }>;
  components: {
    messages: Record<string, { payload: { $ref: string }; headers: { $ref: string } }>;
    schemas: Record<string, unknown>;
  };
};

/** Every `$ref` a JSON value makes, anywhere in it. */
function refsIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsIn);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, member]) =>
    key === '$ref' && typeof member === 'string' ? [member] : refsIn(member),
  );
}

describe('the OpenAPI document describes the outgoing events as webhooks', () => {
  test('one webhook per public event type, its body the type’s schema', () => {
    expect(Object.keys(openApi.webhooks).sort()).toEqual([...PUBLIC_EVENT_TYPE_NAMES].sort());
    for (const type of PUBLIC_EVENT_TYPE_NAMES)
      expect(openApi.webhooks[type]!.post.requestBody).toEqual({
        required: true,
        content: {
          'application/json': { schema: { $ref: `#/components/schemas/${publicEventSchemaId(type)}` } },
        },
      });
  });

  test('each names the Standard Webhooks headers and what its answers mean', () => {
    for (const type of PUBLIC_EVENT_TYPE_NAMES) {
      const { parameters, responses } = openApi.webhooks[type]!.post;
      expect(parameters.map(({ name, in: place }) => `${place} ${name}`)).toEqual([
        'header webhook-id',
        'header webhook-timestamp',
        'header webhook-signature',
      ]);
      expect(Object.keys(responses as JsonObject)).toEqual(['2XX', 'default']);
    }
  });
});

describe('the AsyncAPI document of the outgoing events', () => {
  test('is valid AsyncAPI 3 by the AsyncAPI parser', async () => {
    const diagnostics = await new Parser().validate(buildAsyncApiDocument(API_VERSION));
    const ERROR = 0;
    expect(diagnostics.filter((diagnostic) => diagnostic.severity === ERROR)).toEqual([]);
    expect(asyncApi.asyncapi).toMatch(/^3\./);
    expect(asyncApi.info.version).toBe(API_VERSION);
  });

  test('has a message for every public event type, on the subscription channel', () => {
    expect(Object.keys(asyncApi.components.messages).sort()).toEqual([...PUBLIC_EVENT_TYPE_NAMES].sort());
    expect(Object.keys(asyncApi.channels.subscription!.messages).sort()).toEqual(
      [...PUBLIC_EVENT_TYPE_NAMES].sort(),
    );
  });

  test('its payloads are the schemas of the OpenAPI webhooks, to the byte', () => {
    const used = new Set<string>();
    const pending = PUBLIC_EVENT_TYPE_NAMES.map((type) => asyncApi.components.messages[type]!.payload.$ref);
    for (let ref = pending.pop(); ref !== undefined; ref = pending.pop()) {
      const name = ref.replace('#/components/schemas/', '');
      if (used.has(name)) continue;
      used.add(name);
      expect(asyncApi.components.schemas[name]).toEqual(openApi.components.schemas[name]);
      pending.push(...refsIn(asyncApi.components.schemas[name]));
    }
    expect(used.size).toBeGreaterThan(PUBLIC_EVENT_TYPE_NAMES.length);
  });
});

test('the catalogue in docs/api.md lists every public event type', () => {
  const docs = readFileSync(join(__dirname, '..', '..', 'docs', 'api.md'), 'utf8');
  const section = docs.slice(docs.indexOf('## Outgoing events'), docs.indexOf('## Semantic search'));
  expect(PUBLIC_EVENT_TYPE_NAMES.filter((type) => !section.includes(`\`${type}\``))).toEqual([]);
});
