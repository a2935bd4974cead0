/**
 * MCP tools made from the operation table: each operation marked `tool: true` becomes one tool whose input
 * is its path, query and body parameters in one object, and whose call is the very REST request (so it runs
 * with the caller's credential, tenant, rights, limits and validation, and answers what REST answers).
 */
import { z } from 'zod';
import type { Operation } from '../../contracts/api/operation';

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
      const path = op.path.replace(/\{(\w+)\}/g, (_match, name: string) =>
        encodeURIComponent(textOf(args[name])),
      );
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
