import express, { Router, type RequestHandler } from 'express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { indexedByFirstSegment } from '../../infra/http/segment-index';

/** Every route answers with its own name and params, so a test sees which route took a request. */
function routes(): Router {
  const router = Router();
  const answer =
    (name: string): RequestHandler =>
    (req, res) =>
      res.json({ name, params: req.params });
  router.get('/record/deleted', answer('deleted records'));
  router.get(['/label/:labelId', '/tag/:labelId'], answer('label or tag'));
  router.get('/:anything/export', answer('any export'));
  router.get('/record/:recordId', answer('record'));
  router.get('/record/:recordId/file/*rest', answer('record file'));
  router.post('/record', answer('create record'));
  router.get('/', answer('root'));
  router.get('/{:optional}/maybe', answer('optional first segment'));
  return router;
}

const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

async function serve(handler: RequestHandler): Promise<string> {
  const app = express();
  app.use('/api', handler);
  app.use((_req, res) => res.status(404).json({ name: 'none' }));
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
}

const REQUESTS: ReadonlyArray<[string, string]> = [
  ['GET', '/record/deleted'],
  ['GET', '/record/7'],
  ['GET', '/RECORD/7'],
  ['GET', '/record/7/'],
  ['GET', '/record/7/file/a/b'],
  ['GET', '/record/7/export'],
  ['GET', '/label/3'],
  ['GET', '/Tag/3'],
  ['GET', '/module/export'],
  ['GET', '/maybe'],
  ['GET', '/x/maybe'],
  ['GET', '/'],
  ['GET', ''],
  ['GET', '/unknown/1'],
  ['GET', '/record'],
  ['POST', '/record'],
  ['DELETE', '/record/7'],
];

test('the indexed router picks the same route as the plain router for every request', async () => {
  const plain = await serve(routes());
  const indexed = await serve(indexedByFirstSegment(routes()));
  for (const [method, path] of REQUESTS) {
    const [expected, actual] = await Promise.all(
      [plain, indexed].map(async (base) => {
        const response = await fetch(`${base}${path}`, { method });
        return { status: response.status, body: await response.text() };
      }),
    );
    expect({ method, path, ...actual }).toEqual({ method, path, ...expected });
  }
  // The cases are not vacuous: they reach several different routes and a miss.
  const reached = await Promise.all(
    ['/record/deleted', '/record/7', '/module/export', '/x/maybe', '/unknown/1'].map(
      async (path) => ((await (await fetch(`${indexed}${path}`)).json()) as { name: string }).name,
    ),
  );
  expect(reached).toEqual(['deleted records', 'record', 'any export', 'optional first segment', 'none']);
});

test('the handler keeps the router stack, so a walk of the route tree still finds every route', () => {
  const router = routes();
  expect(indexedByFirstSegment(router).stack).toBe(router.stack);
});
