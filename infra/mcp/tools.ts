/**
 * MCP tools made from the operation table: each operation marked `tool: true` becomes one tool whose input
 * is its path, query and body parameters in one object, and whose call is the very REST request (so it runs
 * with the caller's credential, tenant, rights, limits and validation, and answers what REST answers).
 */
import { z } from 'zod';
import type { Operation } from '../../contracts/api/operation';
import { PlatformError } from '../../contracts/errors';
import { validate } from '../../contracts/validation';

/** A request to the REST API, relative to its base. */
export interface ToolRequest {
  readonly method: string;
  /** Path and query string, such as `/record?filter=…`. */
  readonly url: string;
  readonly body?: unknown;
}

export interface ToolDefinition {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: z.ZodObject;
  readonly readOnly: boolean;
  readonly destructive: boolean;
  request(args: Readonly<Record<string, unknown>>): ToolRequest;
}

/** Path and query values arrive as JSON: numbers and booleans are sent as their text (REST validates them). */
const scalar = z.union([z.string(), z.number(), z.boolean()]);

/** Path and query parameters as a tool's scalar arguments, required where the operation requires them. */
function scalarsOf(shape: Readonly<Record<string, z.ZodType>> | undefined) {
  return Object.fromEntries(
    Object.entries(shape ?? {}).map(([name, schema]) => {
      const described = scalar.meta({ description: schema.meta()?.description ?? name });
      return [name, schema.safeParse(undefined).success ? described.optional() : described];
    }),
  );
}

/** The body's fields at the top level when it is an object whose names do not clash; else one `body`. */
function bodyShape(op: Operation, taken: ReadonlySet<string>): { shape: z.ZodRawShape; nested: boolean } {
  const schema = op.body?.schema;
  if (schema === undefined) return { shape: {}, nested: false };
  if (schema instanceof z.ZodObject && Object.keys(schema.shape).every((name) => !taken.has(name)))
    return { shape: schema.shape, nested: false };
  return { shape: { body: schema }, nested: true };
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

const PATH_PARAMETER = /\{(\w+)\}/g;

/** `.` and `..` are no path segment a request can send: a URL resolves them away, naming another path. */
const DOT_SEGMENTS = new Set(['.', '..']);

/**
 * The path of `op` with the arguments in place: each one validated as the operation's own path parameter
 * (an id in its canonical text, a remote key in its pattern), then percent-encoded, so that no argument can
 * add, remove or rename a segment and the request can only ever be `op`'s own.
 */
function pathOf(op: Operation, args: Readonly<Record<string, unknown>>): string {
  const names = [...op.path.matchAll(PATH_PARAMETER)].map((match) => match[1]!);
  if (names.length === 0) return op.path;
  const texts = Object.fromEntries(
    names.map((name) => [name, args[name] === undefined ? undefined : textOf(args[name])]),
  );
  if (op.params === undefined)
    throw new Error(`${op.operationId} has path parameters but no schema for them`);
  validate(op.params, texts, 'path parameters');
  for (const name of names)
    if (DOT_SEGMENTS.has(texts[name]!))
      throw new PlatformError(
        'validation_failed',
        `invalid path parameters: ${name}: "${texts[name]!}" cannot be a path segment`,
        [{ path: name, message: 'cannot be a path segment' }],
      );
  const path = op.path.replace(PATH_PARAMETER, (_match, name: string) => encodeURIComponent(texts[name]!));
  assertOwnPath(op, path, texts);
  return path;
}

/**
 * The last guard before dispatch: `path` is `op`'s template with exactly these values in its parameters'
 * places, and stays so once a URL parser has read it (no segment resolved away, no query or fragment begun).
 */
function assertOwnPath(
  op: Operation,
  path: string,
  values: Readonly<Record<string, string | undefined>>,
): void {
  const template = op.path.split('/');
  const segments = path.split('/');
  const parsed = new URL(path, 'http://tool.invalid');
  const own =
    parsed.pathname === path &&
    parsed.search === '' &&
    parsed.hash === '' &&
    segments.length === template.length &&
    template.every((part, index) => {
      const segment = segments[index]!;
      const name = /^\{(\w+)\}$/.exec(part)?.[1];
      if (name === undefined) return segment === part;
      return segment !== '' && !DOT_SEGMENTS.has(segment) && decodeURIComponent(segment) === values[name];
    });
  if (!own)
    throw new PlatformError('internal', `the tool ${op.operationId} built a path that is not its own`);
}

export function toolOf(op: Operation): ToolDefinition {
  const pathShape = scalarsOf(op.params?.shape);
  const queryShape = scalarsOf(op.query?.shape);
  const taken = new Set([...Object.keys(pathShape), ...Object.keys(queryShape)]);
  const body = bodyShape(op, taken);
  const bodyNames = Object.keys(body.shape);
  return {
    name: op.operationId,
    title: op.summary,
    description: [op.summary, op.description, `REST: ${op.method.toUpperCase()} /api${op.path}.`]
      .filter((part) => part !== undefined)
      .join('\n\n'),
    inputSchema: z.object({ ...pathShape, ...queryShape, ...body.shape }),
    readOnly: op.method === 'get',
    destructive: op.method === 'delete',
    request(args) {
      const path = pathOf(op, args);
      const query = new URLSearchParams();
      for (const name of Object.keys(queryShape))
        if (args[name] !== undefined) query.set(name, textOf(args[name]));
      const search = query.size === 0 ? '' : `?${query.toString()}`;
      if (op.body === undefined) return { method: op.method.toUpperCase(), url: `${path}${search}` };
      const payload = body.nested
        ? args.body
        : Object.fromEntries(
            bodyNames.filter((name) => args[name] !== undefined).map((name) => [name, args[name]]),
          );
      return { method: op.method.toUpperCase(), url: `${path}${search}`, body: payload };
    },
  };
}

/** The tools of an operation table: its operations marked `tool: true`. */
export function toolsOf(operations: readonly Operation[]): ToolDefinition[] {
  return operations.filter((op) => op.tool === true).map(toolOf);
}
