import express from 'express';
import { loadConfig } from '../infra/config';
import { createHttpServer } from '../infra/http/server';

/**
 * The reference point for the GET figure: an express 5 app with one route that answers a small JSON
 * document from memory, no authentication, no store, served as the platform serves its app (through
 * `createHttpServer`, whose request objects already have express's prototypes). Whatever the platform's GET
 * route reaches, it cannot pass this on the same machine under the same load.
 */
const app = express();
const document = { id: 1, moduleId: 1, name: 'Bench record', fields: { amount: 1200 } };
app.get('/api/record/:id', (request, response) => {
  response.json({ ...document, id: Number(request.params.id) });
});
app.get('/readyz', (_request, response) => {
  response.json({ ready: true });
});
const config = loadConfig({});
createHttpServer(app, {
  headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
  requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
  idleTimeoutMs: config.HTTP_IDLE_TIMEOUT_MS,
}).listen(Number(process.env.PORT), '127.0.0.1');
