import { describeChanges, diffDocuments, type OpenApiLike } from '../../contracts/api/diff';

const listOperation = {
  operationId: 'listRecords',
  parameters: [{ in: 'query', name: 'filter', required: false }],
  responses: { '200': { description: 'A page.' }, '400': { description: 'Bad.' } },
};
const before: OpenApiLike = {
  paths: { '/record': { get: listOperation }, '/old': { get: { responses: {} } } },
  components: { schemas: { Record: { type: 'object' }, Gone: { type: 'string' } } },
};

test('an unchanged document has no changes', () => {
  expect(diffDocuments(before, structuredClone(before))).toEqual([]);
});

test('operations added and removed, parameters, bodies, responses and schemas are each reported', () => {
  const after: OpenApiLike = {
    paths: {
      '/record': {
        get: {
          ...listOperation,
          deprecated: true,
          parameters: [
            { in: 'query', name: 'filter', required: true },
            { in: 'query', name: 'limit', required: false },
          ],
          requestBody: { content: {} },
          responses: { '200': { description: 'Another page.' }, '429': { description: 'Slow down.' } },
        },
        post: { responses: {} },
      },
    },
    components: { schemas: { Record: { type: 'object', required: ['id'] }, New: { type: 'string' } } },
  };
  expect(describeChanges(diffDocuments(before, after))).toEqual([
    '  deprecated GET /record',
    '  GET /record: parameter query filter is now required (breaking)',
    '  GET /record: added optional parameter query limit',
    '  GET /record: now takes a request body',
    '  GET /record: answer 200 changed',
    '  GET /record: may now answer 429',
    '  GET /record: no longer answers 400',
    '  added POST /record',
    '  removed GET /old (breaking)',
    '  schema Record changed',
    '  schema New added',
    '  schema Gone removed',
  ]);
});

test('webhooks are compared like operations: added, removed, their body changed', () => {
  const event = (schema: string) => ({
    post: { requestBody: { content: { 'application/json': { schema: { $ref: schema } } } }, responses: {} },
  });
  const withWebhooks: OpenApiLike = {
    ...before,
    webhooks: { 'record.created': event('#/A'), 'label.deleted': event('#/B') },
  };
  const after: OpenApiLike = {
    ...before,
    webhooks: { 'record.created': event('#/A2'), 'space.created': event('#/C') },
  };
  expect(describeChanges(diffDocuments(withWebhooks, after))).toEqual([
    '  POST webhook record.created: request body changed',
    '  added POST webhook space.created',
    '  removed POST webhook label.deleted (breaking)',
  ]);
});
