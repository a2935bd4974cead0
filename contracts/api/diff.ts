/**
 * What changed between two OpenAPI documents, operation by operation: added, removed and deprecated
 * operations, parameters, request bodies, response statuses, and changed schemas. Enough to review a surface
 * change and to write its changelog entry; not a full compatibility checker.
 */

interface ParameterLike {
  readonly name?: string;
  readonly in?: string;
  readonly required?: boolean;
}
interface OperationLike {
  readonly operationId?: string;
  readonly deprecated?: boolean;
  readonly parameters?: readonly ParameterLike[];
  readonly requestBody?: unknown;
  readonly responses?: Readonly<Record<string, unknown>>;
}
export interface OpenApiLike {
  readonly info?: { readonly version?: string };
  readonly paths?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** The outgoing events: a change of one is a change of the contract with its receivers. */
  readonly webhooks?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly components?: { readonly schemas?: Readonly<Record<string, unknown>> };
}

export type Change =
  | { readonly kind: 'operation-added' | 'operation-removed'; readonly operation: string }
  | { readonly kind: 'operation-deprecated' | 'operation-undeprecated'; readonly operation: string }
  | {
      readonly kind: 'parameter-added' | 'parameter-removed';
      readonly operation: string;
      readonly parameter: string;
      readonly required: boolean;
    }
  | {
      readonly kind: 'parameter-now-required' | 'parameter-now-optional';
      readonly operation: string;
      readonly parameter: string;
    }
  | { readonly kind: 'body-added' | 'body-removed' | 'body-changed'; readonly operation: string }
  | {
      readonly kind: 'response-added' | 'response-removed' | 'response-changed';
      readonly operation: string;
      readonly status: string;
    }
  | { readonly kind: 'schema-added' | 'schema-removed' | 'schema-changed'; readonly schema: string };

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** Operations by name: `GET /record` for a path's, `POST webhook record.created` for a webhook's. */
function operationsOf(doc: OpenApiLike): Map<string, OperationLike> {
  const operations = new Map<string, OperationLike>();
  const items = [
    ...Object.entries(doc.paths ?? {}),
    ...Object.entries(doc.webhooks ?? {}).map(([name, item]) => [`webhook ${name}`, item] as const),
  ];
  for (const [path, item] of items)
    for (const method of METHODS) {
      const op = item[method];
      if (op !== undefined) operations.set(`${method.toUpperCase()} ${path}`, op as OperationLike);
    }
  return operations;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

function parametersOf(op: OperationLike): Map<string, ParameterLike> {
  return new Map(
    (op.parameters ?? []).map((parameter) => [`${parameter.in ?? '?'} ${parameter.name ?? '?'}`, parameter]),
  );
}

function operationChanges(name: string, before: OperationLike, after: OperationLike): Change[] {
  const changes: Change[] = [];
  if (!before.deprecated && after.deprecated) changes.push({ kind: 'operation-deprecated', operation: name });
  if (before.deprecated && !after.deprecated)
    changes.push({ kind: 'operation-undeprecated', operation: name });
  const beforeParams = parametersOf(before);
  const afterParams = parametersOf(after);
  for (const [key, parameter] of afterParams) {
    const old = beforeParams.get(key);
    if (old === undefined)
      changes.push({
        kind: 'parameter-added',
        operation: name,
        parameter: key,
        required: parameter.required === true,
      });
    else if (!old.required && parameter.required)
      changes.push({ kind: 'parameter-now-required', operation: name, parameter: key });
    else if (old.required && !parameter.required)
      changes.push({ kind: 'parameter-now-optional', operation: name, parameter: key });
  }
  for (const [key, parameter] of beforeParams)
    if (!afterParams.has(key))
      changes.push({
        kind: 'parameter-removed',
        operation: name,
        parameter: key,
        required: parameter.required === true,
      });
  if (before.requestBody === undefined && after.requestBody !== undefined)
    changes.push({ kind: 'body-added', operation: name });
  else if (before.requestBody !== undefined && after.requestBody === undefined)
    changes.push({ kind: 'body-removed', operation: name });
  else if (!same(before.requestBody, after.requestBody))
    changes.push({ kind: 'body-changed', operation: name });
  const beforeResponses = before.responses ?? {};
  const afterResponses = after.responses ?? {};
  for (const status of Object.keys(afterResponses))
    if (!(status in beforeResponses)) changes.push({ kind: 'response-added', operation: name, status });
    else if (!same(beforeResponses[status], afterResponses[status]))
      changes.push({ kind: 'response-changed', operation: name, status });
  for (const status of Object.keys(beforeResponses))
    if (!(status in afterResponses)) changes.push({ kind: 'response-removed', operation: name, status });
  return changes;
}

export function diffDocuments(before: OpenApiLike, after: OpenApiLike): Change[] {
  const changes: Change[] = [];
  const beforeOps = operationsOf(before);
  const afterOps = operationsOf(after);
  for (const [name, op] of afterOps) {
    const old = beforeOps.get(name);
    if (old === undefined) changes.push({ kind: 'operation-added', operation: name });
    else changes.push(...operationChanges(name, old, op));
  }
  for (const name of beforeOps.keys())
    if (!afterOps.has(name)) changes.push({ kind: 'operation-removed', operation: name });
  const beforeSchemas = before.components?.schemas ?? {};
  const afterSchemas = after.components?.schemas ?? {};
  for (const [schema, value] of Object.entries(afterSchemas))
    if (!(schema in beforeSchemas)) changes.push({ kind: 'schema-added', schema });
    else if (!same(beforeSchemas[schema], value)) changes.push({ kind: 'schema-changed', schema });
  for (const schema of Object.keys(beforeSchemas))
    if (!(schema in afterSchemas)) changes.push({ kind: 'schema-removed', schema });
  return changes;
}

/** One line per change, for a person (and the changelog). */
export function describeChanges(changes: readonly Change[]): string[] {
  return changes.map((change) => {
    switch (change.kind) {
      case 'operation-added':
        return `  added ${change.operation}`;
      case 'operation-removed':
        return `  removed ${change.operation} (breaking)`;
      case 'operation-deprecated':
        return `  deprecated ${change.operation}`;
      case 'operation-undeprecated':
        return `  no longer deprecated: ${change.operation}`;
      case 'parameter-added':
        return `  ${change.operation}: added ${change.required ? 'required' : 'optional'} parameter ${change.parameter}${change.required ? ' (breaking)' : ''}`;
      case 'parameter-removed':
        return `  ${change.operation}: removed parameter ${change.parameter}`;
      case 'parameter-now-required':
        return `  ${change.operation}: parameter ${change.parameter} is now required (breaking)`;
      case 'parameter-now-optional':
        return `  ${change.operation}: parameter ${change.parameter} is now optional`;
      case 'body-added':
        return `  ${change.operation}: now takes a request body`;
      case 'body-removed':
        return `  ${change.operation}: no longer takes a request body`;
      case 'body-changed':
        return `  ${change.operation}: request body changed`;
      case 'response-added':
        return `  ${change.operation}: may now answer ${change.status}`;
      case 'response-removed':
        return `  ${change.operation}: no longer answers ${change.status}`;
      case 'response-changed':
        return `  ${change.operation}: answer ${change.status} changed`;
      case 'schema-added':
        return `  schema ${change.schema} added`;
      case 'schema-removed':
        return `  schema ${change.schema} removed`;
      case 'schema-changed':
        return `  schema ${change.schema} changed`;
    }
  });
}
