/**
 * MCP tool arguments are path segments: for every tool with path parameters, any argument (dot segments,
 * slashes, percent-escapes, `?`, `#`, empty, unicode, very long, numbers) is either refused as a value of
 * that operation's parameter, or the request it builds reaches exactly that operation with exactly that
 * value. The request goes through the very client the tool server dispatches with (`callApi`) to an express
 * app that mounts every operation of the table, so URL parsing and routing are the real ones.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import fc from 'fast-check';
import { OPERATIONS } from '../../contracts/api/index';
import { expressPath, type Operation } from '../../contracts/api/operation';
import { PlatformError } from '../../contracts/errors';
import { API_BASE } from '../../infra/http/operations';
import { callApi } from '../../infra/mcp/dispatch';
import { toolOf, toolsOf, type ToolDefinition } from '../../infra/mcp/tools';

const PARAMETER = /\{(\w+)\}/g;
const namesOf = (op: Operation) => [...op.path.matchAll(PARAMETER)].map((match) => match[1]!);

const TOOLS_WITH_PATHS = OPERATIONS.filter((op) => op.tool === true && namesOf(op).length > 0);

let server: Server;
let origin: URL;

beforeAll(async () => {
  const app = express();
  for (const op of OPERATIONS)
    app[op.method](`${op.root === true ? '' : API_BASE}${expressPath(op.path)}`, (req, res) => {
      res.json({ operationId: op.operationId, params: req.params });
    });
  app.use((_req, res) => {
    res.status(404).json({ operationId: null });
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  origin = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

/** Strings that have moved requests to other routes, or could: every one is a path segment's worst case. */
const HOSTILE = [
  '..',
  '.',
  '/',
  '%2e%2e',
  '%2E%2E',
  '.%2e',
  '%2e',
  '?x=',
  '?',
  '#',
  '#x',
  '',
  ' ',
  '%',
  '%2f',
  '%252e%252e',
  '1/..',
  '../1',
  '1/../2',
  '1?x=1',
  '1#x',
  '1%2f2',
  '1/label/1',
  '\\..',
  '\u0000',
  'é',
  '𝕏',
  '1'.repeat(5000),
  '0',
  '007',
  '1e3',
  '0x10',
  '-1',
  '1.0',
  ' 1',
  '2147483648',
  'vector',
  'remote',
];

const anyArgument: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...HOSTILE),
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.stringMatching(/^[./%?#&=0-9a-fA-F\\]{0,12}$/),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.integer({ min: 1, max: 5000 }).map(String),
);

/** A value each parameter takes: what the other parameters hold while one is tried. */
const validFor = (name: string): fc.Arbitrary<unknown> =>
  name === 'remoteApplication'
    ? fc.constantFrom('crm', 'shop.v2')
    : fc.oneof(fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 1, max: 5000 }).map(String));

/** Which operations of `method` have a template that `pathname` (as sent) fits, a parameter fitting any segment. */
function operationsFitting(method: string, pathname: string): string[] {
  const segments = pathname.split('/');
  return OPERATIONS.filter((op) => op.method.toUpperCase() === method)
    .filter((op) => {
      const template = `${op.root === true ? '' : API_BASE}${op.path}`.split('/');
      return (
        template.length === segments.length &&
        template.every((part, index) =>
          /^\{\w+\}$/.test(part) ? segments[index] !== '' : part === segments[index],
        )
      );
    })
    .map((op) => op.operationId);
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The check of one tool call: refused as its parameter's value, or dispatched to exactly its operation. */
async function dispatchesOnlyItsOwn(
  tool: ToolDefinition,
  op: Operation,
  args: Record<string, unknown>,
): Promise<void> {
  let request;
  try {
    request = tool.request(args);
  } catch (error) {
    expect(error).toBeInstanceOf(PlatformError);
    expect((error as PlatformError).kind).toBe('validation_failed');
    expect((error as PlatformError).message).toMatch(/^invalid path parameters: \w+/);
    return;
  }
  const url = new URL(`${API_BASE}${request.url}`, origin);
  expect(operationsFitting(request.method, url.pathname)).toEqual([op.operationId]);
  const answer = await callApi(
    origin,
    { method: request.method, url: `${API_BASE}${request.url}`, headers: {} },
    5000,
  );
  expect(answer.status).toBe(200);
  const reached = JSON.parse(answer.body) as { operationId: string; params: Record<string, string> };
  expect(reached.operationId).toBe(op.operationId);
  expect(reached.params).toEqual(Object.fromEntries(namesOf(op).map((name) => [name, textOf(args[name])])));
}

test('the tools with path parameters are the ones the issue names, and more', () => {
  expect(TOOLS_WITH_PATHS.map((op) => op.operationId)).toEqual(
    expect.arrayContaining(['getRecord', 'deleteRecord', 'labelRecord', 'unlabelRecord', 'getRemoteRecord']),
  );
});

test('the reproductions: "..", an empty id and a dot segment are refused, never sent elsewhere', () => {
  const [unlabel, getRecord] = ['unlabelRecord', 'getRecord'].map((id) =>
    toolsOf(OPERATIONS).find((tool) => tool.name === id)!,
  );
  for (const args of [
    { recordId: '..', labelId: 1 },
    { recordId: 1, labelId: '..' },
    { recordId: '%2e%2e', labelId: 1 },
  ])
    expect(() => unlabel!.request(args)).toThrow(/^invalid path parameters: (recordId|labelId): /);
  expect(() => getRecord!.request({ recordId: '' })).toThrow(/^invalid path parameters: recordId: /);
  expect(unlabel!.request({ recordId: 7, labelId: '3' })).toEqual({
    method: 'DELETE',
    url: '/record/7/label/3',
  });
});

describe.each(TOOLS_WITH_PATHS.map((op) => [op.operationId, op] as const))('%s', (_id, op) => {
  const tool = toolOf(op);
  const names = namesOf(op);

  test('any argument in any path parameter is refused or reaches exactly this operation', async () => {
    const args = fc
      .tuple(...names.map(() => fc.boolean()))
      .chain((hostile) =>
        fc.record(
          Object.fromEntries(
            names.map((name, index) => [name, hostile[index] ? anyArgument : validFor(name)]),
          ),
        ),
      );
    await fc.assert(
      fc.asyncProperty(args, (generated) => dispatchesOnlyItsOwn(tool, op, generated)),
      { numRuns: 60 },
    );
  });

  test('every listed hostile string in every path parameter', async () => {
    for (const name of names)
      for (const hostile of HOSTILE) {
        const args: Record<string, unknown> = Object.fromEntries(
          names.map((other) => [other, other === 'remoteApplication' ? 'crm' : 1]),
        );
        args[name] = hostile;
        await dispatchesOnlyItsOwn(tool, op, args);
      }
  });
});
