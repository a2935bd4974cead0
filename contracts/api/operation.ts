/**
 * One operation of the API as a contract: its method and path, what it takes (path, query, header and body
 * schemas, the very zod schemas its handler validates with) and what it answers. The servers mount routes
 * from these (`infra/http/operations.ts`), the OpenAPI document is built from them (`./document.ts`), and
 * the MCP tools are chosen among them, so no route exists without its description and no description
 * without its route.
 */
import type { z } from 'zod';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** How a caller proves who it is. */
export type OperationSecurity =
  /** A bearer token (`Authorization` or `X-Authorization`) or the session cookie. */
  | 'token'
  /** Nobody needs to: sign-in, public metadata, provider callbacks. */
  | 'none'
  /** The OAuth client itself (HTTP Basic or `client_id`/`client_secret` in the body). */
  | 'client';

export interface OperationResponse {
  readonly description: string;
  /** The body (JSON unless `contentType` says otherwise); none for an empty answer or a redirect. */
  readonly schema?: z.ZodType;
  readonly contentType?: string;
  /** Response headers worth a client's attention (`Location`, `ETag`…), by name: what each holds (a string). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface OperationBody {
  readonly schema: z.ZodType;
  /** `application/json` unless the operation reads a form or an upload. */
  readonly contentTypes?: readonly string[];
  readonly required?: boolean;
  readonly example?: unknown;
  /**
   * The route reads the body itself (an upload it streams to the blob store, whatever its type): the HTTP kit
   * neither checks its type nor parses it.
   */
  readonly readByRoute?: boolean;
}

export interface Operation {
  /** Unique, camelCase: the method name of the generated clients and the MCP tool's name. */
  readonly operationId: string;
  readonly method: HttpMethod;
  /** Relative to the API's base (`/api`), OpenAPI style: `/record/{recordId}`. */
  readonly path: string;
  /** The group the docs page and the clients file the operation under (`records`, `spaces`…). */
  readonly tag: string;
  readonly summary: string;
  readonly description?: string;
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly headers?: z.ZodObject;
  readonly body?: OperationBody;
  /** The success answers, and error statuses beyond the ones every operation declares (see `errorStatuses`). */
  readonly responses: Readonly<Record<number, OperationResponse>>;
  readonly security: OperationSecurity;
  /** A deprecated alias: the path of the operation that replaces it. */
  readonly deprecatedBy?: string;
  /** Served at the host's root rather than under the API base (health, metrics, `/.well-known`). */
  readonly root?: boolean;
  /** Offered as an MCP tool (an operation that reads or changes records and their structure). */
  readonly tool?: boolean;
  /**
   * A GET the command API serves, because it writes (issues a code, starts a session, spends AI tokens) or
   * reads the write side's own state: the one-process app and the gateway send it there, not to the query API.
   */
  readonly servedByCommandApi?: boolean;
  /**
   * A POST a page of this API submits as an HTML form in the signed-in browser (the OAuth consent page): the
   * session cookie counts on it without `X-CSRF-Token`, which a form cannot send. The route must check a
   * single-use value of the page bound to the session instead.
   */
  readonly sessionForm?: boolean;
  /**
   * A POST where an identity provider hands back the answer to a sign-in this browser started, as a form the
   * browser posts from the provider's site (`response_mode=form_post`). The route authenticates it by the
   * state it sent, bound to its own signed flow cookie: the HTTP kit reads no credential on it (one neither
   * helps nor blocks), and the session's CSRF check does not apply.
   */
  readonly formPostCallback?: boolean;
}

/** Declares an operation; the identity function, so each contract file reads as a table of operations. */
export function operation<const Op extends Operation>(op: Op): Op {
  return op;
}

/** The path in express's syntax: `/record/{recordId}` → `/record/:recordId`. */
export function expressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}
