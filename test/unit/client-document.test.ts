import { documentForGenerators, type JsonObject } from '../../bin/generate-clients';

const closed = (properties: Record<string, unknown>) => ({
  type: 'object',
  properties,
  additionalProperties: false,
});

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const document = {
  openapi: '3.1.0',
  info: { title: 'Records', version: '1.0.0' },
  servers: [{ url: '/api' }],
  webhooks: { recordCreated: { post: { responses: { 200: { description: 'ok' } } } } },
  paths: {
    '/healthz': {
      servers: [{ url: '/' }],
      get: { operationId: 'getHealth', responses: { 200: { description: 'ok', ...json(ref('Health')) } } },
    },
    '/record': {
      post: {
        operationId: 'createRecord',
        requestBody: json(ref('RecordCreate')),
        responses: {
          201: { description: 'created', ...json(ref('Record')) },
          200: { description: 'inline', ...json(closed({ id: { type: 'integer' } })) },
        },
      },
    },
    '/auth/oauth/token': {
      post: {
        operationId: 'exchangeToken',
        requestBody: {
          content: {
            'application/json': { schema: ref('TokenRequest') },
            'application/x-www-form-urlencoded': { schema: ref('TokenRequest') },
          },
        },
        responses: { 200: { description: 'token', ...json(ref('Token')) } },
      },
    },
  },
  components: {
    schemas: {
      RecordCreate: closed({
        name: { type: 'string', default: 'Untitled' },
        labels: { type: 'array', items: ref('Label') },
        kinds: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, default: ['a', 'b'] },
      }),
      Record: closed({
        at: { type: 'string', format: 'date-time', pattern: '^\\d{4}-.*$' },
        code: { type: 'string', pattern: '^[A-Z]+$' },
        labels: { type: 'array', items: ref('Label') },
        meta: closed({ total: { type: 'integer' } }),
      }),
      Label: closed({ name: { type: 'string' } }),
      TokenRequest: closed({ grant_type: { type: 'string' } }),
      Token: closed({ access_token: { type: 'string' } }),
      Health: closed({ status: { type: 'string' } }),
    },
  },
};

describe('the copy of the API description the client generators get', () => {
  const prepared = documentForGenerators(
    structuredClone(document) as unknown as JsonObject,
  ) as unknown as typeof document;

  test('has no webhooks, no operation served at the host root, no schema only those used', () => {
    expect(prepared.webhooks).toBeUndefined();
    expect(Object.keys(prepared.paths)).toEqual(['/record', '/auth/oauth/token']);
    expect(Object.keys(prepared.components.schemas)).toEqual([
      'RecordCreate',
      'Record',
      'Label',
      'TokenRequest',
      'Token',
    ]);
  });

  test('points at a local platform by an absolute URL', () => {
    expect(prepared.servers).toEqual([{ url: 'http://localhost:3000/api', description: expect.any(String) }]);
  });

  test('drops a pattern beside a format and keeps the others', () => {
    const record = prepared.components.schemas.Record.properties;
    expect(record.at).toEqual({ type: 'string', format: 'date-time' });
    expect(record.code).toEqual({ type: 'string', pattern: '^[A-Z]+$' });
  });

  test("drops an array's default and keeps the others", () => {
    const create = prepared.components.schemas.RecordCreate.properties;
    expect(create.kinds).toEqual({ type: 'array', items: { type: 'string', enum: ['a', 'b'] } });
    expect(create.name).toEqual({ type: 'string', default: 'Untitled' });
  });

  test('offers the form alone where an operation takes a form or JSON', () => {
    expect(Object.keys(prepared.paths['/auth/oauth/token'].post.requestBody.content)).toEqual([
      'application/x-www-form-urlencoded',
    ]);
    expect(Object.keys(prepared.paths['/record'].post.requestBody.content)).toEqual(['application/json']);
  });

  test('opens the schemas only answers use, nested and inline ones included; requests stay closed', () => {
    const { schemas } = prepared.components;
    expect(schemas.Record).not.toHaveProperty('additionalProperties');
    expect(schemas.Record.properties.meta).not.toHaveProperty('additionalProperties');
    expect(schemas.Token).not.toHaveProperty('additionalProperties');
    expect(
      prepared.paths['/record'].post.responses[200].content['application/json'].schema,
    ).not.toHaveProperty('additionalProperties');
    // Named by a request (directly or through another schema): what the platform accepts, unchanged.
    expect(schemas.RecordCreate.additionalProperties).toBe(false);
    expect(schemas.TokenRequest.additionalProperties).toBe(false);
    expect(schemas.Label.additionalProperties).toBe(false);
  });

  test('leaves the document it was given alone', () => {
    const original = structuredClone(document);
    documentForGenerators(original as unknown as JsonObject);
    expect(original).toEqual(document);
  });
});
