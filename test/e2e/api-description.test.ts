import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { API_VERSION, OPERATIONS } from '../../contracts/api/index';
import { expressPath } from '../../contracts/api/operation';
import { REMOVED_ROUTES } from '../../contracts/api/removed';
import { currentAsyncApiJson, currentDocumentJson } from '../../bin/api-descriptions';
import { API_BASE } from '../../infra/http/operations';
import { startPlatform, type TestPlatform } from '../support/platform';
import { routesOf } from '../support/routes';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startPlatform();
});
afterAll(() => platform.stop());

const routeKey = (method: string, path: string) => `${method.toUpperCase()} ${path}`;
const operationRoute = (op: (typeof OPERATIONS)[number]) =>
  routeKey(op.method, `${op.root ? '' : API_BASE}${expressPath(op.path)}`);

describe('the route table and the routes served are the same', () => {
  test('every served route has its operation (or is a removed route)', () => {
    const described = new Set([
      ...OPERATIONS.map(operationRoute),
      ...REMOVED_ROUTES.map((removed) => routeKey(removed.method, `${API_BASE}${expressPath(removed.path)}`)),
    ]);
    const served = routesOf(platform.running.services.app).map(([method, path]) => routeKey(method, path));
    expect(served.filter((route) => !described.has(route))).toEqual([]);
  });

  test('every operation is served, once', () => {
    const served = routesOf(platform.running.services.app).map(([method, path]) => routeKey(method, path));
    expect(OPERATIONS.map(operationRoute).filter((route) => !served.includes(route))).toEqual([]);
    const twice = served.filter((route, index) => served.indexOf(route) !== index);
    expect(twice).toEqual([]);
  });

  test('operation ids are unique', () => {
    const ids = OPERATIONS.map((op) => op.operationId);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
  });
});

describe('the document', () => {
  test(`openapi/${API_VERSION}.json is the route table's document (run \`npm run openapi\` after a change)`, () => {
    const committed = readFileSync(join(__dirname, '..', '..', 'openapi', `${API_VERSION}.json`), 'utf8');
    expect(committed).toBe(currentDocumentJson());
  });

  test('is a valid OpenAPI 3.1 document', () => {
    // The validator is an ES module, which jest's CommonJS runtime cannot load: it runs in its own node.
    const validate = `import { Validator } from '@seriousme/openapi-schema-validator';
      let text = ''; for await (const chunk of process.stdin) text += chunk;
      const result = await new Validator().validate(JSON.parse(text));
      process.stdout.write(JSON.stringify({ valid: result.valid, errors: result.errors }));`;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', validate], {
      input: currentDocumentJson(),
      cwd: join(__dirname, '..', '..'),
      encoding: 'utf8',
    });
    expect(JSON.parse(output)).toEqual({ valid: true });
  });

  test('is generated in well under a second', () => {
    const started = performance.now();
    currentDocumentJson();
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('serving', () => {
  test('/latest.json and /<current>.json answer the document without a credential, with X-Version', async () => {
    for (const name of ['latest', API_VERSION]) {
      const response = await fetch(`${platform.api}/${name}.json`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('x-version')).toBeTruthy();
      expect(await response.json()).toEqual(JSON.parse(currentDocumentJson()));
    }
  });

  test('the document goes gzipped to clients that take it, plain JSON to the others', async () => {
    const raw = (encoding: string | undefined) =>
      new Promise<{ encoding: string | undefined; vary: string | undefined; body: Buffer }>(
        (resolve, reject) => {
          const call = request(
            `${platform.api}/latest.json`,
            { headers: encoding === undefined ? {} : { 'accept-encoding': encoding } },
            (response) => {
              const chunks: Buffer[] = [];
              response.on('data', (chunk: Buffer) => chunks.push(chunk));
              response.on('end', () =>
                resolve({
                  encoding: response.headers['content-encoding'],
                  vary: response.headers.vary,
                  body: Buffer.concat(chunks),
                }),
              );
            },
          );
          call.on('error', reject);
          call.end();
        },
      );
    const expected = JSON.parse(currentDocumentJson()) as unknown;
    const gzipped = await raw('br, gzip');
    expect(gzipped.encoding).toBe('gzip');
    expect(gzipped.vary).toBe('Accept-Encoding');
    expect(JSON.parse(gunzipSync(gzipped.body).toString('utf8'))).toEqual(expected);
    const plain = await raw(undefined);
    expect(plain.encoding).toBeUndefined();
    expect(JSON.parse(plain.body.toString('utf8'))).toEqual(expected);
  });

  test('/asyncapi.json answers the AsyncAPI document of the outgoing events without a credential', async () => {
    const response = await fetch(`${platform.api}/asyncapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('x-version')).toBeTruthy();
    expect(await response.json()).toEqual(JSON.parse(currentAsyncApiJson()));
  });

  test('an unknown version is a 404 naming the published ones; a malformed one a 400', async () => {
    const unknown = await fetch(`${platform.api}/1.0.0.json`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { message: string }).message).toContain(API_VERSION);
    for (const malformed of ['latest2', '5.8', '05.8.2', 'x.y.z', '5.8.2.1']) {
      const response = await fetch(`${platform.api}/${malformed}.json`);
      expect([400, 404]).toContain(response.status);
    }
  });

  test('/docs is a Swagger UI page served from the package, reading latest.json', async () => {
    const page = await fetch(`${platform.url}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('/docs/swagger-ui-bundle.js');
    expect(html).toContain(`${API_BASE}/latest.json`);
    expect(html).not.toMatch(/https?:\/\//);
    const bundle = await fetch(`${platform.url}/docs/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
  });

  test('a removed route answers 410 Gone', async () => {
    for (const removed of REMOVED_ROUTES) {
      const response = await platform.call(
        removed.method.toUpperCase(),
        expressPath(removed.path).replace(/:\w+/g, '1'),
      );
      expect(response.status).toBe(410);
    }
  });
});
